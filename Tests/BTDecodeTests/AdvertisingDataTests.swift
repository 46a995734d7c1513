import BTDecode
import BTWire
import Testing

/// Views `bytes` as advertising data and hands the view to `body` while the bytes are alive.
private func ad<R>(_ bytes: [UInt8], _ body: (AdvertisingDataView) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes { try body(AdvertisingDataView($0)) }
}

private func value(_ fields: [DecodedField], _ name: String) -> String? {
    fields.first { $0.name == name }?.value
}

@Suite("Advertising data")
struct AdvertisingDataTests {
    @Test func heartRateSensor() {
        let data: [UInt8] = [
            // 02 01 06: Flags, LE General Discoverable + BR/EDR not supported
            0x02, 0x01, 0x06,
            // 0a 09 "Polar H10": Complete Local Name
            0x0A, 0x09, 0x50, 0x6F, 0x6C, 0x61, 0x72, 0x20, 0x48, 0x31, 0x30,
            // 05 03 0d 18 0f 18: Complete List of 16-bit Service UUIDs, 180d 180f
            0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18,
        ]
        ad(data) { view in
            let structures = Array(view)
            #expect(structures.map(\.type) == [.flags, .completeLocalName, .completeUUID16])
            #expect(structures.map(\.offset) == [0, 3, 14])
            #expect(view.flags == [.leGeneralDiscoverable, .brEdrNotSupported])
            #expect(view.localName == "Polar H10")
            #expect(view.completeLocalName == "Polar H10")
            #expect(view.shortenedLocalName == nil)
            #expect(view.serviceUUIDs == [BluetoothUUID(uuid16: 0x180D), BluetoothUUID(uuid16: 0x180F)])
            #expect(view.hasCompleteServiceUUIDList)
            #expect(view.malformation == nil)
            #expect(view.summary == "name \"Polar H10\" uuids 180d,180f")
            #expect(value(view.fields, "Flags") == "0x06 le-general,no-br/edr")
            #expect(value(view.fields, "Complete Local Name") == "\"Polar H10\"")
            #expect(value(view.fields, "Complete List of 16-bit Service UUIDs") == "Heart Rate (180d), Battery (180f)")
        }
    }

    @Test func iBeacon() {
        let data: [UInt8] = [
            // 02 01 06: Flags
            0x02, 0x01, 0x06,
            // 1a ff: 26 bytes of Manufacturer Specific Data | 4c 00 Apple | 02 iBeacon | 15 21 bytes follow
            0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
            // proximity UUID in text order: e2c56db5-dffb-48d2-b060-d0f5a71096e0
            0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
            // 01 02 major 0x0102 = 258 (big-endian) | 03 04 minor 0x0304 = 772 | c5 measured power -59 dBm
            0x01, 0x02, 0x03, 0x04, 0xC5,
        ]
        ad(data) { view in
            let beacon = view.iBeacon
            #expect(beacon?.proximityUUID == BluetoothUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
            #expect(beacon?.major == 258)
            #expect(beacon?.minor == 772)
            #expect(beacon?.measuredPower == -59)
            #expect(view.manufacturerData.first?.company == .apple)
            #expect(view.manufacturerData.first?.data.count == 23)
            #expect(view.summary == "ibeacon e2c56db5-dffb-48d2-b060-d0f5a71096e0 major 258 minor 772 power -59")
            let mfr = view.fields.first { $0.name == "Manufacturer Specific Data" }
            #expect(mfr?.value == "Apple (0x004c) iBeacon")
            #expect(mfr?.children.first { $0.name == "Major" }?.value == "258 (0x0102)")
            #expect(mfr?.children.first { $0.name == "Measured Power" }?.value == "-59 dBm")
        }
    }

    @Test func notAnIBeacon() {
        // 07 ff 4c 00 10 02 0b 00: Apple "Nearby" data, not type 02/15
        ad([0x07, 0xFF, 0x4C, 0x00, 0x10, 0x02, 0x0B, 0x00]) { view in
            #expect(view.iBeacon == nil)
            #expect(view.manufacturerData == [.init(company: .apple, data: [0x10, 0x02, 0x0B, 0x00])])
            #expect(view.summary == "mfr Apple len 4")
        }
    }

    @Test func uuid128ByteOrder() {
        // 11 07: Complete List of 128-bit Service UUIDs
        // fb 34 9b 5f 80 00 00 80 00 10 00 00 0d 18 00 00 = 0000180d-0000-1000-8000-00805f9b34fb byte-reversed
        ad([0x11, 0x07, 0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x0D, 0x18, 0x00, 0x00])
        { view in
            #expect(view.serviceUUIDs.map(\.description) == ["180d"])
            #expect(view.serviceUUIDs == [BluetoothUUID(uuid16: 0x180D)])
            #expect(value(view.fields, "Complete List of 128-bit Service UUIDs") == "Heart Rate (180d)")
        }
    }

    @Test func truncatedStructure() {
        // 02 01 06: Flags | 05 09 41 42: Complete Local Name declaring 5 bytes, only 2 present
        ad([0x02, 0x01, 0x06, 0x05, 0x09, 0x41, 0x42]) { view in
            #expect(Array(view).map(\.type) == [.flags])
            let m = view.malformation
            #expect(m?.offset == 3)
            #expect(m?.declaredLength == 5)
            #expect(m?.available == 3)
            #expect(m?.reason == "runs past the end of the data")
            #expect(view.isMalformed)
            #expect(view.localName == nil)
            #expect(view.summary == "flags le-general,no-br/edr malformed")
            #expect(value(view.fields, "Malformed") == "structure at offset 3 declares 5 bytes, 3 present: runs past the end of the data")
        }
        // 02 01 06 | 01: a length byte with nothing after it
        ad([0x02, 0x01, 0x06, 0x01]) { view in
            #expect(view.malformation?.reason == "length byte without a type")
            #expect(Array(view).count == 1)
        }
        // the iterator reports it too
        ad([0x03, 0x19]) { view in
            var it = view.makeIterator()
            #expect(it.next() == nil)
            #expect(it.malformation?.offset == 0)
        }
    }

    @Test func zeroLengthEndsTheData() {
        // 02 0a f4: TX Power -12 dBm | 00: end | ff ff ff: padding that is not parsed
        ad([0x02, 0x0A, 0xF4, 0x00, 0xFF, 0xFF, 0xFF]) { view in
            #expect(Array(view).count == 1)
            #expect(view.txPowerLevel == -12)
            #expect(view.malformation == nil)
            #expect(view.summary == "tx -12 dBm")
        }
        // empty data
        ad([]) { view in
            #expect(Array(view).isEmpty)
            #expect(view.summary == "empty")
            #expect(view.fields.isEmpty)
        }
    }

    @Test func otherTypes() {
        let data: [UInt8] = [
            // 05 08 50 6f 6c 61: Shortened Local Name "Pola"
            0x05, 0x08, 0x50, 0x6F, 0x6C, 0x61,
            // 03 02 12 18: Incomplete List of 16-bit Service UUIDs, 1812
            0x03, 0x02, 0x12, 0x18,
            // 05 05 78 56 34 12: Complete List of 32-bit Service UUIDs, 12345678
            0x05, 0x05, 0x78, 0x56, 0x34, 0x12,
            // 03 14 0f 18: 16-bit Service Solicitation, 180f
            0x03, 0x14, 0x0F, 0x18,
            // 06 16 aa fe 10 00 01: Service Data 16-bit, Eddystone feaa, data 10 00 01
            0x06, 0x16, 0xAA, 0xFE, 0x10, 0x00, 0x01,
            // 03 19 c1 03: Appearance 0x03c1 (HID keyboard)
            0x03, 0x19, 0xC1, 0x03,
            // 05 ff 59 00 01 02: Manufacturer Specific Data, Nordic 0x0059, data 01 02
            0x05, 0xFF, 0x59, 0x00, 0x01, 0x02,
            // 02 0a 04: TX Power 4 dBm
            0x02, 0x0A, 0x04,
        ]
        ad(data) { view in
            #expect(view.localName == "Pola")
            #expect(view.shortenedLocalName == "Pola")
            #expect(view.serviceUUIDs == [BluetoothUUID(uuid16: 0x1812), BluetoothUUID(uuid32: 0x1234_5678)])
            #expect(view.hasCompleteServiceUUIDList)
            #expect(view.solicitedServiceUUIDs == [BluetoothUUID(uuid16: 0x180F)])
            #expect(view.serviceData == [.init(uuid: BluetoothUUID(uuid16: 0xFEAA), data: [0x10, 0x00, 0x01])])
            #expect(view.appearance == 0x03C1)
            #expect(view.manufacturerData == [.init(company: CompanyID(rawValue: 0x0059), data: [0x01, 0x02])])
            #expect(view.txPowerLevel == 4)
            #expect(view.summary == "short name \"Pola\" uuids 1812,12345678 solicit 180f svc data feaa len 3 mfr Nordic Semiconductor len 2 tx 4 dBm appearance 0x03c1")
            #expect(value(view.fields, "Service Data - 16-bit UUID") == "Eddystone (feaa) 100001")
            #expect(value(view.fields, "Appearance") == "0x03c1 Keyboard")
            #expect(value(view.fields, "Manufacturer Specific Data") == "Nordic Semiconductor (0x0059) 0102")
            #expect(value(view.fields, "TX Power Level") == "4 dBm")
        }
    }

    @Test func invalidUTF8NameIsReplacedNotDropped() {
        // 05 09 41 ff 42 43: Complete Local Name "A", invalid byte ff, "BC"
        ad([0x05, 0x09, 0x41, 0xFF, 0x42, 0x43]) { view in
            #expect(view.localName == "A\u{FFFD}BC")
        }
    }

    @Test func neverTraps() {
        // Every 1-, 2- and 3-byte input, then lengths that overrun longer data.
        var checked = 0
        for a in 0...255 {
            for b: UInt8 in [0x00, 0x01, 0x02, 0x09, 0x16, 0xFF] {
                for tail in [[], [0x4C], [0x4C, 0x00, 0x02, 0x15]] as [[UInt8]] {
                    ad([UInt8(a), b] + tail) { view in
                        _ = view.summary
                        _ = view.fields
                        _ = view.serviceUUIDs
                        _ = view.serviceData
                        _ = view.iBeacon
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 256 * 6 * 3)
    }
}
