import Testing
import BTCapture
import TestSupport

/// Reads every record of a capture into plain values (payloads copied, since they are borrowed).
struct ReadRecord: Equatable {
    var number: Int
    var offset: Int64
    var micros: Int64
    var kind: RecordKind
    var direction: Direction
    var controller: UInt16
    var payload: [UInt8]
}

func readAll(_ path: String) throws -> (CaptureInfo, [ReadRecord], IssueLog) {
    let capture = try OpenedCapture.open(path: path)
    struct Collect: RecordSourceVisitor {
        mutating func visit<S: RecordSource>(_ source: S) throws -> [ReadRecord] {
            var out: [ReadRecord] = []
            while let r = source.next() {
                out.append(ReadRecord(number: r.number, offset: r.offset, micros: r.timestamp.microseconds, kind: r.kind,
                                      direction: r.direction, controller: r.controller, payload: Array(r.payload)))
            }
            return out
        }
    }
    var visitor = Collect()
    let records = try capture.accept(&visitor)
    return (capture.info, records, capture.issues)
}

// Annotated packets used throughout.
// HCI Reset command: opcode 0x0c03, no parameters.
let resetCommand: [UInt8] = [0x03, 0x0C, 0x00]
// Command Complete for Reset: ncmd 1, opcode 0x0c03, status 0.
let resetComplete: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
// ACL handle 0x0040, PB 0b10 (start, flushable), 7 bytes: L2CAP len 3 CID 4, ATT Read Request handle 0x002a.
let aclReadRequest: [UInt8] = [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x2A, 0x00]

let t0: UInt64 = 1_700_000_000_123_456  // 2023-11-14 22:13:20.123456 UTC

@Suite("btsnoop reader")
struct BTSnoopReaderTests {
    @Test("H4 (1002): indicator byte gives the kind, flags bit 0 the direction, the epoch offset the time")
    func h4() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.btsnoopHeader(datalink: 1002)
            + CaptureBytes.btsnoopRecord([0x01] + resetCommand, flags: 2, unixMicros: t0)
            + CaptureBytes.btsnoopRecord([0x04] + resetComplete, flags: 3, unixMicros: t0 + 1000)
            + CaptureBytes.btsnoopRecord([0x02] + aclReadRequest, flags: 0, unixMicros: t0 + 2000)
        let (info, records, issues) = try readAll(try dir.write("android.log", bytes))
        #expect(info.format == .btsnoop(datalink: 1002))
        #expect(info.format.name == "btsnoop-h4")
        #expect(records.map(\.kind) == [.command, .event, .acl])
        #expect(records.map(\.direction) == [.sent, .received, .sent])
        #expect(records[0].payload == resetCommand)
        #expect(records[0].micros == 1_700_000_000_123_456)
        #expect(records.map(\.offset) == [16, 44, 75] as [Int64])  // 16-byte header, 24-byte record headers
        #expect(records.map(\.number) == [1, 2, 3])
        #expect(issues.count == 0)
    }

    @Test("H1 (1001): flags 0 ACL TX, 1 ACL RX, 2 command, 3 event")
    func h1() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.btsnoopHeader(datalink: 1001)
            + CaptureBytes.btsnoopRecord(resetCommand, flags: 2, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(resetComplete, flags: 3, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(aclReadRequest, flags: 0, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(aclReadRequest, flags: 1, unixMicros: t0)
        let (_, records, _) = try readAll(try dir.write("h1.cap", bytes))
        #expect(records.map(\.kind) == [.command, .event, .acl, .acl])
        #expect(records.map(\.direction) == [.sent, .received, .sent, .received])
    }

    @Test("monitor (2001): flags carry controller index and monitor opcode; unknown opcodes stay opaque")
    func monitor() throws {
        let dir = try TemporaryDirectory()
        // NEW_INDEX: type 0, bus 1 (USB), bdaddr, name "hci1".
        let newIndex: [UInt8] = [0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11] + Array("hci1".utf8) + [0, 0, 0, 0]
        let bytes = CaptureBytes.btsnoopHeader(datalink: 2001)
            + CaptureBytes.btsnoopRecord(newIndex, flags: 1 << 16 | 0, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(Array("Bluetooth subsystem\0".utf8), flags: 0xFFFF << 16 | 12, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(resetCommand, flags: 1 << 16 | 2, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(resetComplete, flags: 1 << 16 | 3, unixMicros: t0)
            + CaptureBytes.btsnoopRecord(aclReadRequest, flags: 1 << 16 | 5, unixMicros: t0)
            + CaptureBytes.btsnoopRecord([1, 2, 3], flags: 1 << 16 | 20, unixMicros: t0)  // future DRV_TX
            + CaptureBytes.btsnoopRecord([], flags: 1 << 16 | 1, unixMicros: t0)
        let (info, records, _) = try readAll(try dir.write("btmon.btsnoop", bytes))
        #expect(info.format.name == "btsnoop-monitor")
        #expect(records.map(\.kind) == [.controllerAdded, .note, .command, .event, .acl, .unknown, .controllerRemoved])
        #expect(records.map(\.controller) == [1, 0xFFFF, 1, 1, 1, 1, 1])
        #expect(records[4].direction == .received)
    }

    @Test("a truncated last record is reported with its number and offset; earlier records survive")
    func truncated() throws {
        let dir = try TemporaryDirectory()
        let whole = CaptureBytes.btsnoopHeader(datalink: 1002)
            + CaptureBytes.btsnoopRecord([0x01] + resetCommand, flags: 2, unixMicros: t0)
            + CaptureBytes.btsnoopRecord([0x04] + resetComplete, flags: 3, unixMicros: t0)
        let (_, records, issues) = try readAll(try dir.write("cut.log", Array(whole.dropLast(3))))
        #expect(records.count == 1)
        #expect(issues.count == 1)
        #expect(issues.issues.first?.code == .truncatedRecord)
        #expect(issues.issues.first?.recordNumber == 2)
        #expect(issues.issues.first?.byteOffset == 44)
    }

    @Test("an absurd record length stops reading without allocating it")
    func absurdLength() throws {
        let dir = try TemporaryDirectory()
        var bytes = CaptureBytes.btsnoopHeader(datalink: 1002)
            + CaptureBytes.btsnoopRecord([0x01] + resetCommand, flags: 2, unixMicros: t0)
        bytes += CaptureBytes.be32(0x7FFF_FFFF) + CaptureBytes.be32(0x7FFF_FFFF) + [UInt8](repeating: 0, count: 16) + [1, 2, 3]
        let (_, records, issues) = try readAll(try dir.write("bad.log", bytes))
        #expect(records.count == 1)
        #expect(issues.issues.first?.code == .absurdLength)
    }

    @Test("a header-only file has no records and no issues")
    func empty() throws {
        let dir = try TemporaryDirectory()
        let (_, records, issues) = try readAll(try dir.write("empty.cfa", CaptureBytes.btsnoopHeader(datalink: 1002)))
        #expect(records.isEmpty)
        #expect(issues.count == 0)
    }
}

@Suite("PacketLogger reader")
struct PacketLoggerReaderTests {
    func file(bigEndian: Bool) -> [UInt8] {
        CaptureBytes.pklgRecord(resetCommand, type: 0x00, seconds: 1_700_000_000, micros: 123_456, bigEndian: bigEndian)
            + CaptureBytes.pklgRecord(resetComplete, type: 0x01, seconds: 1_700_000_000, micros: 123_999, bigEndian: bigEndian)
            + CaptureBytes.pklgRecord(Array("Power: on\0".utf8), type: 0xFB, seconds: 1_700_000_001, micros: 0, bigEndian: bigEndian)
            + CaptureBytes.pklgRecord(aclReadRequest, type: 0x03, seconds: 1_700_000_001, micros: 5, bigEndian: bigEndian)
            + CaptureBytes.pklgRecord([0x50, 0x00, 0x00, 0x00, 0x01], type: 0xF7, seconds: 1_700_000_001, micros: 6, bigEndian: bigEndian)
    }

    @Test("both byte orders, types mapped, notes kept", arguments: [false, true])
    func byteOrders(bigEndian: Bool) throws {
        let dir = try TemporaryDirectory()
        let (info, records, issues) = try readAll(try dir.write("capture.pklg", file(bigEndian: bigEndian)))
        #expect(info.format == .packetLogger(bigEndian: bigEndian))
        #expect(records.map(\.kind) == [.command, .event, .note, .acl, .note])
        #expect(records.map(\.direction) == [.sent, .received, .unknown, .received, .unknown])
        #expect(records[0].micros == 1_700_000_000_123_456)
        #expect(records[3].payload == aclReadRequest)
        #expect(issues.count == 0)
    }
}

@Suite("PacketLogger text types")
struct PacketLoggerTextTypeTests {
    @Test("types F7 (syslog) to FD (config) are notes, FE a new controller, F6 and FF not PacketLogger types")
    func textTypes() throws {
        let dir = try TemporaryDirectory()
        let types: [UInt8] = [0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE]
        let bytes = types.flatMap {
            CaptureBytes.pklgRecord(Array("text\0".utf8), type: $0, seconds: 1_700_000_000, micros: 0, bigEndian: false)
        }
        let (_, records, issues) = try readAll(try dir.write("text.pklg", bytes))
        #expect(records.map(\.kind) == [RecordKind](repeating: .note, count: 7) + [.controllerAdded])
        #expect(issues.count == 0)
        for foreign: UInt8 in [0xF6, 0xFF] {
            let path = try dir.write("foreign.pklg", CaptureBytes.pklgRecord([1, 2], type: foreign, seconds: 1, micros: 0, bigEndian: false))
            #expect(throws: CaptureError(.notACapture, "")) { try OpenedCapture.open(path: path) }
        }
    }
}

@Suite("pcap and pcapng through libpcap")
struct PcapReaderTests {
    @Test("linktype 201: BE direction word (1 = received), then H4")
    func linktype201() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.pcapHeader(linktype: 201)
            + CaptureBytes.pcapRecord(CaptureBytes.be32(0) + [0x01] + resetCommand, seconds: 1_700_000_000, fraction: 123_456)
            + CaptureBytes.pcapRecord(CaptureBytes.be32(1) + [0x04] + resetComplete, seconds: 1_700_000_000, fraction: 200_000)
        let (info, records, issues) = try readAll(try dir.write("x.pcapng", bytes))  // misnamed on purpose
        #expect(info.format == .pcap(linktype: 201))
        #expect(info.timestampDigits == 6)
        #expect(records.map(\.kind) == [.command, .event])
        #expect(records.map(\.direction) == [.sent, .received])
        #expect(records[0].micros == 1_700_000_000_123_456)
        #expect(records[0].payload == resetCommand)
        #expect(records.map(\.offset) == [24, 48] as [Int64])  // 24-byte file header, 16-byte record headers
        #expect(issues.count == 0)
    }

    @Test("linktype 187 has no direction: commands are sent, events received, ACL unknown")
    func linktype187() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.pcapHeader(linktype: 187, nanoseconds: true)
            + CaptureBytes.pcapRecord([0x01] + resetCommand, seconds: 1, fraction: 5)
            + CaptureBytes.pcapRecord([0x02] + aclReadRequest, seconds: 1, fraction: 6)
        let (info, records, _) = try readAll(try dir.write("h4.pcap", bytes))
        #expect(info.timestampDigits == 9)
        #expect(records.map(\.direction) == [.sent, .unknown])
    }

    @Test("linktype 254: BE adapter and opcode, then the monitor payload")
    func linktype254() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.pcapHeader(linktype: 254)
            + CaptureBytes.pcapRecord(CaptureBytes.be16(2) + CaptureBytes.be16(2) + resetCommand, seconds: 1, fraction: 0)
            + CaptureBytes.pcapRecord(CaptureBytes.be16(2) + CaptureBytes.be16(4) + aclReadRequest, seconds: 1, fraction: 1)
        let (_, records, _) = try readAll(try dir.write("mon.pcap", bytes))
        #expect(records.map(\.kind) == [.command, .acl])
        #expect(records.map(\.controller) == [2, 2])
        #expect(records[1].direction == .sent)
    }

    @Test("pcapng with nanosecond if_tsresol")
    func pcapngNano() throws {
        let dir = try TemporaryDirectory()
        let ts: UInt64 = 1_700_000_000_123_456_789
        let bytes = CaptureBytes.pcapng(linktype: 201, tsresol: 9, packets: [(CaptureBytes.be32(1) + [0x04] + resetComplete, ts)])
        let (info, records, issues) = try readAll(try dir.write("x.pcap", bytes))
        #expect(info.format == .pcapng(linktype: 201))
        #expect(info.timestampDigits == 9)
        #expect(records.count == 1)
        #expect(records[0].micros == 1_700_000_000_123_456)
        #expect(issues.count == 0)
    }

    @Test("LE sniffer linktypes are counted with a notice; foreign linktypes are refused")
    func sniffersAndForeign() throws {
        let dir = try TemporaryDirectory()
        let nordic = CaptureBytes.pcapHeader(linktype: 272) + CaptureBytes.pcapRecord([1, 2, 3], seconds: 1, fraction: 0)
        let (_, records, issues) = try readAll(try dir.write("n.pcap", nordic))
        #expect(records.map(\.kind) == [.linkLayer])
        #expect(issues.notices.count == 1)
        let ethernet = CaptureBytes.pcapHeader(linktype: 1) + CaptureBytes.pcapRecord([1, 2, 3], seconds: 1, fraction: 0)
        #expect(throws: CaptureError(.unsupportedLinktype, "")) { try OpenedCapture.open(path: try dir.write("e.pcap", ethernet)) }
    }

    @Test("a truncated pcap record is reported, the records before it kept")
    func truncated() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.pcapHeader(linktype: 201)
            + CaptureBytes.pcapRecord(CaptureBytes.be32(0) + [0x01] + resetCommand, seconds: 1, fraction: 0)
            + CaptureBytes.pcapRecord(CaptureBytes.be32(1) + [0x04] + resetComplete, seconds: 1, fraction: 1)
        let (_, records, issues) = try readAll(try dir.write("cut.pcap", Array(bytes.dropLast(4))))
        #expect(records.count == 1)
        #expect(issues.issues.first?.code == .truncatedRecord)
        #expect(issues.issues.first?.recordNumber == 2)
    }
}

@Suite("pcap and pcapng errors from libpcap")
struct PcapErrorTests {
    static func pcap201() -> [UInt8] {
        CaptureBytes.pcapHeader(linktype: 201)
            + CaptureBytes.pcapRecord(CaptureBytes.be32(0) + [0x01] + resetCommand, seconds: 1, fraction: 0)
            + CaptureBytes.pcapRecord(CaptureBytes.be32(1) + [0x04] + resetComplete, seconds: 1, fraction: 1)
    }

    static func pcapng201() -> [UInt8] {
        CaptureBytes.pcapng(linktype: 201, packets: [(CaptureBytes.be32(0) + [0x01] + resetCommand, 1),
                                                     (CaptureBytes.be32(1) + [0x04] + resetComplete, 2)])
    }

    /// Bytes dropped from the end: inside the last record's data, inside its header.
    @Test("a file that ends inside a record is a truncated record, the records before it kept",
          arguments: [("pcap", 4), ("pcap", 11 + 6), ("pcapng", 4), ("pcapng", 30)])
    func cutShort(format: String, dropped: Int) throws {
        let dir = try TemporaryDirectory()
        let whole = format == "pcap" ? Self.pcap201() : Self.pcapng201()
        let (_, records, issues) = try readAll(try dir.write("cut.\(format)", Array(whole.dropLast(dropped))))
        #expect(records.count == 1)
        #expect(issues.issues.map(\.code) == [.truncatedRecord])
        #expect(issues.issues.first?.recordNumber == 2)
        #expect(issues.issues.first?.byteOffset == (format == "pcap" ? 48 : 88))
    }

    @Test("a record whose caplen no linktype allows, with bytes still to come, is an impossible length, not a truncation")
    func refusedRecord() throws {
        let dir = try TemporaryDirectory()
        // caplen 0x7FFFFFFF: above any linktype's limit (libpcap refuses such a header before reading on; classic
        // pcap is framed by btlens, which stops there as for a btsnoop record length).
        let bytes = Self.pcap201() + CaptureBytes.le32(1) + CaptureBytes.le32(0) + CaptureBytes.le32(0x7FFF_FFFF)
            + CaptureBytes.le32(0x7FFF_FFFF) + [UInt8](repeating: 0, count: 64)
        let (_, records, issues) = try readAll(try dir.write("bad.pcap", bytes))
        #expect(records.count == 2)
        #expect(issues.issues.map(\.code) == [.absurdLength])
        #expect(issues.issues.first?.recordNumber == 3)
    }
}

/// Offsets and lengths of every record, which `ReadRecord` leaves out.
func recordExtents(_ path: String) throws -> [(offset: Int64, length: Int, originalLength: Int, payload: Int)] {
    struct Collect: RecordSourceVisitor {
        mutating func visit<S: RecordSource>(_ source: S) throws -> [(offset: Int64, length: Int, originalLength: Int, payload: Int)] {
            var out: [(offset: Int64, length: Int, originalLength: Int, payload: Int)] = []
            while let r = source.next() { out.append((r.offset, r.length, r.originalLength, r.payload.count)) }
            return out
        }
    }
    var visitor = Collect()
    return try OpenedCapture.open(path: path).accept(&visitor)
}

@Suite("pcap record offsets and lengths")
struct PcapExtentTests {
    @Test("records longer than the snaplen: offsets and lengths count the bytes libpcap skipped")
    func snaplenCut() throws {
        let dir = try TemporaryDirectory()
        let first = CaptureBytes.pcapRecord(CaptureBytes.be32(0) + [0x01] + resetCommand, seconds: 1, fraction: 0)  // 8 bytes
        let second = CaptureBytes.pcapRecord(CaptureBytes.be32(1) + [0x04] + resetComplete, seconds: 1, fraction: 1)  // 11
        let third = CaptureBytes.pcapRecord(CaptureBytes.be32(0) + [0x02] + aclReadRequest, seconds: 1, fraction: 2)  // 16
        let bytes = CaptureBytes.pcapHeader(linktype: 201, snaplen: 8) + first + second + third
        let extents = try recordExtents(try dir.write("snap.pcap", bytes))
        #expect(extents.map(\.offset) == [24, 24 + 24, 24 + 24 + 27] as [Int64])
        #expect(extents.map(\.length) == [24, 27, 32])
        #expect(extents.map(\.payload) == [3, 3, 3])  // 8 bytes kept, 5 of them pseudo-header and H4
        #expect(extents.map(\.originalLength) == [3, 6, 11])
        let (_, records, issues) = try readAll(dir.file("snap.pcap"))
        #expect(records.map(\.kind) == [.command, .event, .acl])
        #expect(issues.count == 0)
    }

    @Test("pcapng offsets are where each block starts")
    func pcapngOffsets() throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.pcapng(linktype: 201, packets: [(CaptureBytes.be32(0) + [0x01] + resetCommand, 1),
                                                                 (CaptureBytes.be32(1) + [0x04] + resetComplete, 2)])
        let extents = try recordExtents(try dir.write("x.pcapng", bytes))
        // SHB 28 bytes, IDB 20; EPBs of 32 + data padded to 4.
        #expect(extents.map(\.offset) == [48, 48 + 40] as [Int64])
        #expect(extents.map(\.length) == [40, 44])
    }

    @Test("a header whose len is below the pseudo-header gives an original length of 0, never negative",
          arguments: [(Linktype.bluetoothHCIH4, [UInt8]([0x01]) + resetCommand),
                      (Linktype.bluetoothHCIH4WithPHDR, CaptureBytes.be32(0) + [0x01] + resetCommand),
                      (Linktype.bluetoothLinuxMonitor, CaptureBytes.be16(0) + CaptureBytes.be16(2) + resetCommand)])
    func originalLengthClamped(linktype: Int, frame: [UInt8]) throws {
        let dir = try TemporaryDirectory()
        let bytes = CaptureBytes.pcapHeader(linktype: UInt32(linktype))
            + CaptureBytes.pcapRecord(frame, seconds: 1, fraction: 0, originalLength: 0)
            + CaptureBytes.pcapRecord(frame, seconds: 1, fraction: 1, originalLength: 1)
            + CaptureBytes.pcapRecord(frame, seconds: 1, fraction: 2)
        let extents = try recordExtents(try dir.write("len.pcap", bytes))
        #expect(extents.map(\.originalLength) == [0, 0, resetCommand.count])
        #expect(extents.map(\.payload) == [resetCommand.count, resetCommand.count, resetCommand.count])
    }
}

@Suite("pcap magics and byte orders")
struct PcapMagicTests {
    /// A classic pcap file with every field in the writer's byte order.
    static func pcap(bigEndian: Bool, nanoseconds: Bool, records: [([UInt8], UInt32, UInt32)]) -> [UInt8] {
        let u32 = bigEndian ? CaptureBytes.be32 : CaptureBytes.le32
        let u16 = bigEndian ? CaptureBytes.be16 : CaptureBytes.le16
        var out = u32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4) + u16(2) + u16(4) + u32(0) + u32(0) + u32(65535) + u32(201)
        for (data, seconds, fraction) in records {
            out += u32(seconds) + u32(fraction) + u32(UInt32(data.count)) + u32(UInt32(data.count)) + data
        }
        return out
    }

    @Test("µs and ns magics in both byte orders open as pcap with their resolution",
          arguments: [(false, false), (false, true), (true, false), (true, true)])
    func classic(bigEndian: Bool, nanoseconds: Bool) throws {
        let dir = try TemporaryDirectory()
        let bytes = Self.pcap(bigEndian: bigEndian, nanoseconds: nanoseconds,
                              records: [(CaptureBytes.be32(1) + [0x04] + resetComplete, 1_700_000_000, nanoseconds ? 123_456_789 : 123_456)])
        let (info, records, issues) = try readAll(try dir.write("x.cap", bytes))
        #expect(info.format == .pcap(linktype: 201))
        #expect(info.timestampDigits == (nanoseconds ? 9 : 6))
        #expect(records.map(\.kind) == [.event])
        #expect(records.first?.micros == 1_700_000_000_123_456)
        #expect(issues.count == 0)
    }

    /// A big-endian pcapng: SHB, IDB with `if_tsresol`, one EPB.
    static func bigEndianPcapng(tsresol: UInt8, data: [UInt8], timestamp: UInt64) -> [UInt8] {
        let be32 = CaptureBytes.be32, be16 = CaptureBytes.be16
        let shbBody = be32(0x1A2B_3C4D) + be16(1) + be16(0) + [UInt8](repeating: 0xFF, count: 8)
        var out = be32(0x0A0D_0D0A) + be32(UInt32(12 + shbBody.count)) + shbBody + be32(UInt32(12 + shbBody.count))
        let idbBody = be16(201) + be16(0) + be32(0) + be16(9) + be16(1) + [tsresol, 0, 0, 0] + be16(0) + be16(0)
        out += be32(1) + be32(UInt32(12 + idbBody.count)) + idbBody + be32(UInt32(12 + idbBody.count))
        var epbBody = be32(0) + be32(UInt32(timestamp >> 32)) + be32(UInt32(timestamp & 0xFFFF_FFFF))
            + be32(UInt32(data.count)) + be32(UInt32(data.count)) + data
        while epbBody.count % 4 != 0 { epbBody.append(0) }
        out += be32(6) + be32(UInt32(12 + epbBody.count)) + epbBody + be32(UInt32(12 + epbBody.count))
        return out
    }

    @Test("a big-endian pcapng's if_tsresol is read in its byte order", arguments: [(UInt8(6), 6), (UInt8(9), 9)])
    func bigEndianPcapng(tsresol: UInt8, digits: Int) throws {
        let dir = try TemporaryDirectory()
        let ts: UInt64 = tsresol == 9 ? 1_700_000_000_123_456_789 : 1_700_000_000_123_456
        let bytes = Self.bigEndianPcapng(tsresol: tsresol, data: CaptureBytes.be32(1) + [0x04] + resetComplete, timestamp: ts)
        let (info, records, issues) = try readAll(try dir.write("be.pcapng", bytes))
        #expect(info.format == .pcapng(linktype: 201))
        #expect(info.timestampDigits == digits)
        #expect(records.first?.micros == 1_700_000_000_123_456)
        #expect(issues.count == 0)
    }

    @Test("a file starting \"btsn\" but cut inside the btsnoop header is refused by the btsnoop reader")
    func cutBTSnoopHeader() throws {
        let dir = try TemporaryDirectory()
        let error = #expect(throws: CaptureError.self) {
            try OpenedCapture.open(path: try dir.write("cut.log", Array("btsnoop\0".utf8) + [0, 0]))
        }
        #expect(error?.code == .notACapture)
        #expect(error?.message.hasPrefix("btsnoop file header is cut short") == true)
    }
}

@Suite("format sniffing and foreign input")
struct SniffingTests {
    @Test("text, ELF, empty and tiny files are not captures")
    func foreign() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: CaptureError(.notACapture, "")) { try OpenedCapture.open(path: try dir.write("a.txt", Array("hello world, this is text\n".utf8))) }
        #expect(throws: CaptureError(.notACapture, "")) { try OpenedCapture.open(path: try dir.write("a.elf", [0x7F, 0x45, 0x4C, 0x46] + [UInt8](repeating: 0, count: 60))) }
        #expect(throws: CaptureError(.empty, "")) { try OpenedCapture.open(path: try dir.write("empty", [])) }
        #expect(throws: CaptureError(.notACapture, "")) { try OpenedCapture.open(path: try dir.write("tiny", [0x62, 0x74])) }
        #expect(throws: CaptureError(.cannotOpen, "")) { try OpenedCapture.open(path: dir.path + "/missing.log") }
        #expect(throws: CaptureError(.cannotOpen, "")) { try OpenedCapture.open(path: dir.path) }
    }
}
