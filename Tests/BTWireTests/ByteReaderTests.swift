import Testing
import BTWire
import BTCapture

@Suite("bytes, addresses, UUIDs, time")
struct WireTests {
    @Test("reads are little-endian by default; a short read returns nil and does not move")
    func byteReader() {
        let bytes: [UInt8] = [0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xAA]
        bytes.withUnsafeBytes { raw in
            var r = ByteReader(raw)
            #expect(r.readU16() == 0x1234)
            #expect(r.peek(UInt32.self) == 0x1234_5678)
            #expect(r.read(UInt32.self, bigEndian: true) == 0x7856_3412)
            #expect(r.readU16() == nil)  // one byte left
            #expect(r.position == 6)
            #expect(r.readU8() == 0xAA)
            #expect(r.isAtEnd)
            #expect(r.readBytes(1) == nil)
        }
    }

    @Test("addresses print most significant byte first")
    func address() {
        ([0x66, 0x55, 0x44, 0x33, 0x22, 0x11] as [UInt8]).withUnsafeBytes { raw in
            #expect(BDAddr(littleEndianBytes: raw).description == "11:22:33:44:55:66")
        }
        #expect(BDAddr("11:22:33:44:55:66")?.bytes == [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
    }

    @Test("16-bit UUIDs are aliases of the Base UUID; 128-bit ones travel reversed")
    func uuids() {
        let heartRate: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x0D, 0x18, 0x00, 0x00]
        heartRate.withUnsafeBytes { raw in
            let u = BluetoothUUID(littleEndianBytes: raw)
            #expect(u == BluetoothUUID(uuid16: 0x180D))
            #expect(u?.description == "180d")
            #expect(u?.name == "Heart Rate")
        }
        let custom = BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(custom?.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(custom?.uuid16 == nil)
    }

    @Test("btsnoop time: the documented epoch offset gives exact Unix microseconds")
    func btsnoopTime() {
        let raw = Int64(1_700_000_000_123_456) + 0x00DC_DDB3_0F2F_8000
        let t = BTSnoopTime.timestamp(fromBTSnoop: raw)
        #expect(t.decimalString() == "1700000000.123456")
        #expect(BTSnoopTime.btsnoopValue(t) == raw)
        #expect(Timestamp(nanoseconds: 1_552_223_479_707_800_000).decimalString() == "1552223479.7078")
        #expect(Timestamp(nanoseconds: 905_224_953_861_563).decimalString(fractionDigits: 9) == "905224.953861563")
    }

    @Test("code tables name known values and print unknown ones as hex")
    func codes() {
        #expect(HCIOpcode(rawValue: 0x200C).description == "LE Set Scan Enable")
        #expect(HCIOpcode(rawValue: 0x200C).ogf == 0x08)
        #expect(HCIOpcode(rawValue: 0xFC4C).description == "Vendor Specific 0x04c")
        #expect(HCIOpcode(rawValue: 0x0BFF).description == "Unknown 0x0bff")
        #expect(HCIStatus(rawValue: 0x13).description == "Remote User Terminated Connection")
        #expect(ATTOpcode(rawValue: 0x52).isCommand)
        #expect(ATTOpcode.readRequest.responseOpcode == .readResponse)
        #expect(Hex.format(0x2A, width: 4) == "0x002a")
    }
}
