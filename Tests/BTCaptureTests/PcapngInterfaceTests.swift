import Testing
import BTCapture
import TestSupport

/// pcapng blocks as btlens frames them: each packet keeps its interface (as its controller), each interface its
/// linktype and time base, and what libpcap refuses is reported where it is.
@Suite("pcapng interfaces")
struct PcapngInterfaceTests {
    /// Little-endian pcapng blocks, annotated.
    enum Block {
        static let le32 = CaptureBytes.le32, le16 = CaptureBytes.le16

        static func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
            var body = body
            while body.count % 4 != 0 { body.append(0) }
            return le32(type) + le32(UInt32(12 + body.count)) + body + le32(UInt32(12 + body.count))
        }

        /// Section header: byte-order magic, version 1.0, section length unknown (-1).
        static func section(bigEndianMagic: Bool = false) -> [UInt8] {
            block(0x0A0D_0D0A, le32(bigEndianMagic ? 0x4D3C_2B1A : 0x1A2B_3C4D) + le16(1) + le16(0)
                  + [UInt8](repeating: 0xFF, count: 8))
        }

        /// Interface description: linktype, reserved, snaplen; if_tsresol (9) and if_tsoffset (14) options.
        static func interface(_ linktype: UInt16, tsresol: UInt8? = nil, tsoffset: Int64? = nil) -> [UInt8] {
            var body = le16(linktype) + le16(0) + le32(0)
            if let tsresol { body += le16(9) + le16(1) + [tsresol, 0, 0, 0] }
            if let tsoffset {
                body += le16(14) + le16(8) + le32(UInt32(truncatingIfNeeded: tsoffset)) + le32(UInt32(truncatingIfNeeded: tsoffset >> 32))
            }
            return block(1, body + le16(0) + le16(0))
        }

        /// Enhanced packet: interface, timestamp high and low, captured and original length, data.
        static func packet(_ interface: UInt32, _ timestamp: UInt64, _ data: [UInt8], captured: UInt32? = nil) -> [UInt8] {
            block(6, le32(interface) + le32(UInt32(timestamp >> 32)) + le32(UInt32(timestamp & 0xFFFF_FFFF))
                  + le32(captured ?? UInt32(data.count)) + le32(UInt32(data.count)) + data)
        }

        /// Simple packet: original length, data (interface 0, no timestamp).
        static func simplePacket(_ data: [UInt8]) -> [UInt8] { block(3, le32(UInt32(data.count)) + data) }

        /// Obsolete packet: interface u16, drops u16, timestamp, lengths, data.
        static func obsoletePacket(_ interface: UInt16, _ timestamp: UInt64, _ data: [UInt8]) -> [UInt8] {
            block(2, le16(interface) + le16(0) + le32(UInt32(timestamp >> 32)) + le32(UInt32(timestamp & 0xFFFF_FFFF))
                  + le32(UInt32(data.count)) + le32(UInt32(data.count)) + data)
        }

        /// Interface statistics: not a packet.
        static func statistics(_ interface: UInt32) -> [UInt8] { block(5, le32(interface) + le32(0) + le32(0)) }
    }

    /// Linktype 201 frames: direction word, H4 indicator, HCI packet.
    static let command = CaptureBytes.be32(0) + [0x01] + resetCommand
    static let event = CaptureBytes.be32(1) + [0x04] + resetComplete

    @Test("two adapters in one file: each packet's interface is its controller, each interface has its own time base")
    func twoInterfaces() throws {
        let dir = try TemporaryDirectory()
        let bytes = Block.section() + Block.interface(201) + Block.interface(201, tsresol: 9, tsoffset: 100)
            + Block.packet(0, 1_700_000_000_000_001, Self.command)
            + Block.statistics(0)
            + Block.packet(1, 1_699_999_900_000_002_000, Self.event)
            + Block.obsoletePacket(1, 1_699_999_900_000_003_000, Self.command)
            + Block.simplePacket(Self.event)
        let (info, records, issues) = try readAll(try dir.write("two.pcapng", bytes))
        #expect(info.format == .pcapng(linktype: 201))
        #expect(info.timestampDigits == 6)
        #expect(records.map(\.number) == [1, 2, 3, 4])
        #expect(records.map(\.controller) == [0, 1, 1, 0])
        #expect(records.map(\.kind) == [.command, .event, .command, .event])
        // Interface 1 counts ns from 100 s before the epoch its if_tsoffset names; the simple packet has no time
        // and takes the previous packet's.
        #expect(records.map(\.micros) == [1_700_000_000_000_001, 1_700_000_000_000_002, 1_700_000_000_000_003,
                                          1_700_000_000_000_003])
        // SHB 28, IDBs 24 and 44 (options), EPB 40, ISB 24, EPB 44, OPB 40: each record where its block starts.
        #expect(records.map(\.offset) == [96, 160, 204, 244] as [Int64])
        #expect(issues.count == 0 && issues.notices.count == 0)
    }

    @Test("an interface that is not Bluetooth: its packets are skipped, counted in one notice, and keep their numbers")
    func foreignInterface() throws {
        let dir = try TemporaryDirectory()
        let ethernet: UInt16 = 1
        let bytes = Block.section() + Block.interface(201) + Block.interface(ethernet)
            + Block.packet(1, 1, [0xAA, 0xBB]) + Block.packet(0, 2, Self.command) + Block.packet(1, 3, [0xCC])
            + Block.packet(0, 4, Self.event)
        let (_, records, issues) = try readAll(try dir.write("mixed.pcapng", bytes))
        #expect(records.map(\.number) == [2, 4])
        #expect(records.map(\.kind) == [.command, .event])
        #expect(issues.count == 0)
        #expect(issues.notices.contains { $0.hasPrefix("2 packets of pcapng interfaces with") && $0.contains("(linktype 1)") })
    }

    @Test("a file whose first interface is not Bluetooth is refused as before")
    func foreignFirst() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("eth.pcapng", Block.section() + Block.interface(1) + Block.packet(0, 1, [0]))
        let error = #expect(throws: CaptureError.self) { try OpenedCapture.open(path: path) }
        #expect(error?.code == .unsupportedLinktype)
    }

    @Test("a new section starts a new interface list, in its own byte order")
    func sections() throws {
        let dir = try TemporaryDirectory()
        let be32 = CaptureBytes.be32, be16 = CaptureBytes.be16
        // A big-endian section: SHB, IDB for linktype 201 with ns resolution, one EPB.
        let shbBody = be32(0x1A2B_3C4D) + be16(1) + be16(0) + [UInt8](repeating: 0xFF, count: 8)
        let idbBody = be16(201) + be16(0) + be32(0) + be16(9) + be16(1) + [9, 0, 0, 0] + be16(0) + be16(0)
        let ts: UInt64 = 1_700_000_000_000_005_000
        var epbBody = be32(0) + be32(UInt32(ts >> 32)) + be32(UInt32(ts & 0xFFFF_FFFF)) + be32(UInt32(Self.event.count))
            + be32(UInt32(Self.event.count)) + Self.event
        while epbBody.count % 4 != 0 { epbBody.append(0) }
        let bigEndian = be32(0x0A0D_0D0A) + be32(UInt32(12 + shbBody.count)) + shbBody + be32(UInt32(12 + shbBody.count))
            + be32(1) + be32(UInt32(12 + idbBody.count)) + idbBody + be32(UInt32(12 + idbBody.count))
            + be32(6) + be32(UInt32(12 + epbBody.count)) + epbBody + be32(UInt32(12 + epbBody.count))
        let bytes = Block.section() + Block.interface(201) + Block.interface(201) + Block.packet(1, 1_700_000_000_000_004, Self.command)
            + bigEndian
        let (_, records, issues) = try readAll(try dir.write("sections.pcapng", bytes))
        #expect(records.map(\.controller) == [1, 0])
        #expect(records.map(\.micros) == [1_700_000_000_000_004, 1_700_000_000_000_005])
        #expect(issues.count == 0)
    }

    /// Blocks libpcap refuses, after one good packet.
    static let refusedBlocks: [(String, [UInt8])] = {
        let zeros: [UInt8] = [UInt8](repeating: 0, count: 32)
        let notMultipleOf4: [UInt8] = Block.le32(6) + Block.le32(30) + zeros
        let below12: [UInt8] = Block.le32(6) + Block.le32(8) + zeros
        return [("undeclared interface", Block.packet(3, 2, event)),
                ("captured length past the block", Block.packet(0, 2, event, captured: 200)),
                ("block length not a multiple of 4", notMultipleOf4),
                ("block length below 12", below12)]
    }()

    @Test("what libpcap refuses stops reading where it is: the packets before are kept", arguments: refusedBlocks)
    func refused(label: String, bad: [UInt8]) throws {
        let dir = try TemporaryDirectory()
        let bytes = Block.section() + Block.interface(201) + Block.packet(0, 1, Self.command) + bad + Block.packet(0, 3, Self.event)
        let (_, records, issues) = try readAll(try dir.write("bad.pcapng", bytes))
        #expect(records.count == 1, "\(label)")
        #expect(issues.issues.map(\.code) == [.absurdLength], "\(label)")
        #expect(issues.issues.first?.recordNumber == 2, "\(label)")
        #expect(issues.issues.first?.byteOffset == Int64(28 + 24 + 40), "\(label)")
    }

    @Test("a file of nothing but interface descriptions stops at 4096: memory does not grow with the file")
    func tooManyInterfaces() throws {
        let dir = try TemporaryDirectory()
        var bytes = Block.section()
        for _ in 0..<5000 { bytes += Block.interface(201) }
        bytes += Block.packet(0, 1, Self.command)
        let (_, records, issues) = try readAll(try dir.write("many.pcapng", bytes))
        #expect(records.isEmpty)
        #expect(issues.issues.map(\.code) == [.absurdLength])
        #expect(issues.issues.first?.message.contains("more than 4096 interfaces") == true)
    }

    @Test("a first interface description after over a megabyte of other blocks is left to libpcap, which reads it")
    func farDescription() throws {
        let dir = try TemporaryDirectory()
        let custom = Block.block(0x0000_0BAD, [UInt8](repeating: 0, count: 2 << 20))
        let bytes = Block.section() + custom + Block.interface(201) + Block.packet(0, 1, Self.command)
        let (info, records, issues) = try readAll(try dir.write("far.pcapng", bytes))
        #expect(info.format == .pcapng(linktype: 201))
        #expect(records.map(\.kind) == [.command])
        #expect(issues.count == 0)
    }
}
