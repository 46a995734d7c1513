import Testing
import BTWire
import BTCapture
import BTDecode

/// `PacketDecoder.plainPacket` hands the tracker's reading loop the records it can take from their parts; every
/// other record (short, cut, declared longer than it is, the debug log's handle, any other event) must be nil, so
/// it is decoded and its issues reported as before.
@Suite("Plain packets: what the reading loop takes without a frame")
struct PlainPacketTests {
    static func plain(_ kind: RecordKind, _ bytes: [UInt8], cutShortFrom: Int? = nil, validating: Bool = false)
        -> (kind: String, first: UInt8?, count: Int, handle: UInt16?)?
    {
        var decoder = PacketDecoder(issues: IssueLog())
        decoder.validatesAdvertisingReports = validating
        return bytes.withUnsafeBytes { raw in
            let record = CaptureRecord(number: 1, offset: 0, timestamp: Timestamp(nanoseconds: 0), direction: .received,
                                       kind: kind, controller: 0, sourceType: 0, originalLength: cutShortFrom ?? raw.count,
                                       payload: raw)
            switch decoder.plainPacket(record) {
            case .advertisingReports(let sub, let p)?: return ("reports \(sub.rawValue)", p.first, p.count, nil)
            case .acl(let acl)?: return ("acl", acl.data.first, acl.data.count, acl.handle)
            case nil: return nil
            }
        }
    }

    /// An LE Advertising Report event with one legacy report of 3 data bytes.
    static let report: [UInt8] = [0x3E, 15, 0x02, 1, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 3, 0xA, 0xB, 0xC, 0xC4]

    @Test("a whole advertising event: its parameters after the subevent")
    func advertising() {
        let p = Self.plain(.event, Self.report)
        #expect(p?.kind == "reports 2")
        #expect(p?.first == 1)  // the report count
        #expect(p?.count == 14)
        var extended = Self.report
        extended[2] = 0x0D
        #expect(Self.plain(.event, extended)?.kind == "reports 13")
    }

    @Test("events the decoder must see: validated reports, short, other subevents and codes")
    func eventsDecoded() {
        #expect(Self.plain(.event, Self.report, validating: true) == nil)
        #expect(Self.plain(.event, Array(Self.report.dropLast())) == nil)  // declares a byte more than it has
        #expect(Self.plain(.event, Array(Self.report.dropLast()), cutShortFrom: Self.report.count) == nil)
        #expect(Self.plain(.event, [0x3E, 0]) == nil)  // no subevent
        #expect(Self.plain(.event, [0x3E, 1]) == nil)
        var connection = Self.report
        connection[2] = 0x01
        #expect(Self.plain(.event, connection) == nil)
        var other = Self.report
        other[0] = 0x0E
        #expect(Self.plain(.event, other) == nil)
    }

    @Test("ACL: whole packets on a link's handle; short, cut and the debug log's handle decoded")
    func acl() {
        let packet: [UInt8] = [0x40, 0x20, 3, 0, 7, 8, 9]  // handle 0x040, PB 2, 3 bytes
        let p = Self.plain(.acl, packet)
        #expect(p?.kind == "acl")
        #expect(p?.handle == 0x040)
        #expect(p?.first == 7)
        #expect(p?.count == 3)
        #expect(Self.plain(.acl, packet + [0xFF])?.count == 3)  // extra bytes are not the packet's
        #expect(Self.plain(.acl, Array(packet.dropLast())) == nil)
        #expect(Self.plain(.acl, Array(packet.dropLast()), cutShortFrom: packet.count) == nil)
        #expect(Self.plain(.acl, [0x40, 0x20, 0]) == nil)
        #expect(Self.plain(.acl, [0xDC, 0x2E, 1, 0, 0]) == nil)  // 0x0EDC: perhaps the Qualcomm debug log
        #expect(Self.plain(.command, [0x01, 0x0C, 0]) == nil)
    }
}
