import Testing
import BTWire
@testable import BTTrack

/// Values of well-known characteristics (GATT Specification Supplement), as the timeline and `gatt` show them.
@Suite("characteristic values")
struct CharacteristicValueTests {
    static func text(_ uuid: UInt16, _ bytes: [UInt8]) -> String {
        CharacteristicValue.describe(bytes, uuid: BluetoothUUID(uuid16: uuid))
    }

    @Test("strings, battery, appearance, Tx power, body sensor location, CCCD, PnP ID")
    func simple() {
        #expect(Self.text(0x2A00, Array("Polar H10\0\0".utf8)) == "\"Polar H10\"")
        #expect(Self.text(0x2A19, [0x57]) == "87 %")
        #expect(Self.text(0x2A01, [0xC1, 0x03]) == "0x03c1 Keyboard")
        #expect(Self.text(0x2A07, [0xF8]) == "-8 dBm")
        #expect(Self.text(0x2A38, [0x01]) == "chest")
        #expect(Self.text(0x2902, [0x03, 0x00]) == "notify,indicate")
        #expect(Self.text(0x2902, [0x00, 0x00]) == "off")
        // PnP ID from mi_band4_gatt_h4phdr.pcap: SIG company 0x0157 (Anhui Huami), product 0x0024, version 0x0101.
        #expect(Self.text(0x2A50, [0x01, 0x57, 0x01, 0x24, 0x00, 0x01, 0x01]).hasSuffix("(0x0157) product 0x0024 version 0x0101"))
        #expect(Self.text(0x2A50, [0x02, 0x6B, 0x1D, 0x01, 0x00, 0x00, 0x01]) == "USB vendor 0x1d6b product 0x0001 version 0x0100")
    }

    @Test("Heart Rate Measurement: 8- and 16-bit rate, contact, energy, RR intervals in 1/1024 s")
    func heartRate() {
        #expect(Self.text(0x2A37, [0x16, 64, 0xC0, 0x03]) == "64 bpm, contact, RR 938 ms")  // 960/1024 s
        #expect(Self.text(0x2A37, [0x01, 0x2C, 0x01]) == "300 bpm")
        #expect(Self.text(0x2A37, [0x0C, 70, 0x10, 0x00]) == "70 bpm, no contact, 16 kJ")
    }

    @Test("Current Time and Date Time: the device's local date and time")
    func dateTime() {
        // Written by the Mi Fit app in mi_band4_gatt_h4phdr.pcap: 2021-01-24 17:33:38, then day of week,
        // fractions, adjust reason and a vendor byte.
        #expect(Self.text(0x2A2B, [0xE5, 0x07, 0x01, 0x18, 0x11, 0x21, 0x26, 0x00, 0x00, 0x00, 0xE0]) == "2021-01-24 17:33:38 local")
        #expect(Self.text(0x2A08, [0x00, 0x00, 0x00, 0x00, 0x09, 0x05, 0x00]) == "????-??-?? 09:05:00 local")
        // Out of range: shown as bytes.
        #expect(Self.text(0x2A08, [0xE5, 0x07, 0x0D, 0x01, 0x00, 0x00, 0x00]) == "e5 07 0d 01 00 00 00")
    }

    @Test("Temperature Measurement: IEEE 11073 FLOAT in °C or °F; special values are no reading")
    func temperature() {
        // Mantissa 3650, exponent -2: 36.50 °C.
        #expect(Self.text(0x2A1C, [0x00, 0x42, 0x0E, 0x00, 0xFE]) == "36.50 °C")
        // Mantissa -5, exponent -1, Fahrenheit.
        #expect(Self.text(0x2A1C, [0x01, 0xFB, 0xFF, 0xFF, 0xFF]) == "-0.5 °F")
        #expect(Self.text(0x2A1C, [0x00, 0x07, 0x00, 0x00, 0x02]) == "700 °C")
        #expect(Self.text(0x2A1C, [0x00, 0xFF, 0xFF, 0x7F, 0x00]) == "00 ff ff 7f 00")  // NaN
        #expect(Self.text(0x2A6E, [0x2E, 0x09]) == "23.5 °C")
    }

    @Test("Alert Level: one byte; a vendor's longer value stays bytes")
    func alertLevel() {
        #expect(Self.text(0x2A06, [0x02]) == "high alert")
        #expect(Self.text(0x2A06, [0xFF, 0xC8, 0x00, 0x00, 0x00, 0x01]) == "ff c8 00 00 00 01")
    }

    @Test("anything else: hex, with text when printable; too short a value for its type is hex too")
    func generic() {
        #expect(Self.text(0x1234, Array("OK".utf8)) == "\"OK\" (4f 4b)")
        #expect(Self.text(0x1234, [0x01, 0x02]) == "01 02")
        #expect(Self.text(0x1234, []) == "(empty)")
        #expect(Self.text(0x2A37, [0x01, 0x2C]) == "01 2c")
    }
}
