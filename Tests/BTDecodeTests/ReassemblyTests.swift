import Testing
import BTWire
import BTCapture
import BTDecode

/// Feeds HCI packets through PacketDecoder without a file: records are built over caller-owned bytes.
struct DecoderHarness {
    let issues = IssueLog()
    var decoder: PacketDecoder
    var number = 0

    init() { decoder = PacketDecoder(issues: issues) }

    /// Decodes one packet; returns the completed L2CAP PDU (copied) and whether the frame was malformed.
    /// - Parameter cutShortFrom: the packet's length on the wire when the capture kept only `bytes`.
    mutating func feed(_ kind: RecordKind, _ bytes: [UInt8], direction: Direction = .received, controller: UInt16 = 0,
                       cutShortFrom: Int? = nil)
        -> (pdu: (handle: UInt16, cid: UInt16, payload: [UInt8], fragments: Int, firstRecord: Int)?, malformed: Bool, advertisingReports: Int)
    {
        number += 1
        let n = number
        return bytes.withUnsafeBytes { raw in
            let record = CaptureRecord(number: n, offset: Int64(n * 100), timestamp: Timestamp(nanoseconds: Int64(n)),
                                       direction: direction, kind: kind, controller: controller, sourceType: 0,
                                       originalLength: cutShortFrom ?? raw.count, payload: raw)
            let frame = decoder.decode(record)
            let pdu = frame.l2cap.map { ($0.handle, $0.channelID, Array($0.payload), $0.fragments, $0.firstRecord) }
            return (pdu, frame.isMalformed, frame.advertisingReports)
        }
    }
}

/// ACL packet bytes: handle with PB flags, length, data.
func acl(handle: UInt16, pb: UInt8, _ data: [UInt8]) -> [UInt8] {
    let hf = handle | UInt16(pb) << 12
    return [UInt8(hf & 0xFF), UInt8(hf >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data
}

/// An L2CAP basic frame: length, CID, payload.
func l2cap(cid: UInt16, _ payload: [UInt8]) -> [UInt8] {
    [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
}

/// Splits `pdu` into ACL fragments at `cuts` (offsets into the PDU).
func fragments(handle: UInt16, pdu: [UInt8], cuts: [Int]) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var start = 0
    for (i, end) in (cuts + [pdu.count]).enumerated() where end > start {
        out.append(acl(handle: handle, pb: i == 0 ? 0b10 : 0b01, Array(pdu[start..<end])))
        start = end
    }
    return out
}

@Suite("ACL → L2CAP reassembly")
struct ReassemblyTests {
    // A 40-byte ATT Handle Value Notification for handle 0x0012 (opcode 1b, handle, 37 value bytes).
    static let notification: [UInt8] = [0x1B, 0x12, 0x00] + (0..<37).map { UInt8($0) }
    static let pdu = l2cap(cid: 4, notification)

    @Test("whole, byte by byte, and every two-way split deliver the same PDU exactly once")
    func everySplit() {
        var splits: [[Int]] = [[], Array(1..<Self.pdu.count)]
        for cut in 1..<Self.pdu.count { splits.append([cut]) }  // includes cuts inside the 4-byte header
        for cuts in splits {
            var h = DecoderHarness()
            var delivered: [[UInt8]] = []
            let parts = fragments(handle: 0x40, pdu: Self.pdu, cuts: cuts)
            for (i, part) in parts.enumerated() {
                let out = h.feed(.acl, part)
                #expect(!out.malformed)
                if let pdu = out.pdu {
                    delivered.append(pdu.payload)
                    #expect(i == parts.count - 1, "delivered before the last fragment (cuts \(cuts))")
                    #expect(pdu.fragments == parts.count)
                    #expect(pdu.firstRecord == 1)
                    #expect(pdu.cid == 4)
                }
            }
            #expect(delivered == [Self.notification], "cuts \(cuts)")
            #expect(h.decoder.reassembler.pendingCount == 0)
        }
    }

    @Test("fragments interleaved across handles and directions reassemble independently")
    func interleaved() {
        var h = DecoderHarness()
        let a = fragments(handle: 0x40, pdu: Self.pdu, cuts: [10, 20, 30])
        let b = fragments(handle: 0x41, pdu: l2cap(cid: 4, [0x0A, 0x2A, 0x00]) + [], cuts: [2])
        let c = fragments(handle: 0x40, pdu: l2cap(cid: 6, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]), cuts: [5])
        var results: [(UInt16, UInt16, [UInt8])] = []
        let order: [([UInt8], Direction)] = [(a[0], .received), (b[0], .received), (c[0], .sent), (a[1], .received),
                                             (b[1], .received), (a[2], .received), (c[1], .sent), (a[3], .received)]
        for (bytes, direction) in order {
            if let p = h.feed(.acl, bytes, direction: direction).pdu { results.append((p.handle, p.cid, p.payload)) }
        }
        #expect(results.count == 3)
        #expect(results.map(\.0) == [0x41, 0x40, 0x40])
        #expect(results.map(\.1) == [4, 6, 4])
        #expect(results[2].2 == Self.notification)
    }

    @Test("a continuation without a start is malformed and dropped")
    func orphan() {
        var h = DecoderHarness()
        let out = h.feed(.acl, acl(handle: 0x40, pb: 0b01, [1, 2, 3]))
        #expect(out.malformed)
        #expect(out.pdu == nil)
        #expect(h.issues.issues.first?.code == .orphanContinuation)
    }

    @Test("a Qualcomm debug-log packet (header 0x2EDC from the controller) is no L2CAP; the same handle otherwise is")
    func qualcommDebugLog() {
        var h = DecoderHarness()
        // A counter of 0x0004 where L2CAP would have its CID, then `0a 00 f0`: tshark's "ATT Read Request".
        let log = acl(handle: 0x0EDC, pb: 0b10, [0x0A, 0x00, 0x04, 0x00, 0x0A, 0x00, 0xF0, 0x02, 0x01, 0x00])
        let out = h.feed(.acl, log, direction: .received)
        #expect(out.pdu == nil && !out.malformed)
        // Sent by the host, or with another packet boundary, it is ordinary ACL data for that handle.
        let sent = h.feed(.acl, acl(handle: 0x0EDC, pb: 0b10, l2cap(cid: 4, [0x0A, 0x03, 0x00])), direction: .sent)
        #expect(sent.pdu?.cid == 4)
        let nonFlushable = h.feed(.acl, acl(handle: 0x0EDC, pb: 0b00, l2cap(cid: 4, [0x0A, 0x03, 0x00])))
        #expect(nonFlushable.pdu?.payload == [0x0A, 0x03, 0x00])
        #expect(h.issues.issues.isEmpty)
    }

    @Test("a link given handle 0x0edc (controllers that number links upwards reach it) carries L2CAP until it ends")
    func linkOnDebugLogHandle() {
        var h = DecoderHarness()
        let read = acl(handle: 0x0EDC, pb: 0b10, l2cap(cid: 4, [0x0A, 0x03, 0x00]))
        // LE Connection Complete: status 0, handle 0x0edc, role, peer type, peer, interval, latency, timeout, SCA.
        let complete: [UInt8] = [0x3E, 19, 0x01, 0x00, 0xDC, 0x0E, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 24, 0, 0, 0, 0xF4, 0x01, 0]
        _ = h.feed(.event, complete)
        #expect(h.feed(.acl, read).pdu?.payload == [0x0A, 0x03, 0x00])
        // Disconnection Complete: status 0, handle 0x0edc, reason 0x13. The handle is the log's again.
        _ = h.feed(.event, [0x05, 4, 0x00, 0xDC, 0x0E, 0x13])
        #expect(h.feed(.acl, read).pdu == nil)
        // A BR/EDR Connection Complete (status 0, handle 0x0edc, address, ACL, no encryption) counts too.
        _ = h.feed(.event, [0x03, 11, 0x00, 0xDC, 0x0E, 1, 2, 3, 4, 5, 6, 0x01, 0x00])
        #expect(h.feed(.acl, read).pdu?.cid == 4)
        #expect(h.issues.issues.isEmpty)
    }

    @Test("a new start discards an unfinished PDU and is itself delivered")
    func interrupted() {
        var h = DecoderHarness()
        let parts = fragments(handle: 0x40, pdu: Self.pdu, cuts: [10])
        _ = h.feed(.acl, parts[0])
        let out = h.feed(.acl, acl(handle: 0x40, pb: 0b10, l2cap(cid: 4, [0x0A, 0x2A, 0x00])))
        #expect(out.malformed)
        #expect(out.pdu?.payload == [0x0A, 0x2A, 0x00])
        #expect(h.issues.issues.first?.code == .interruptedPDU)
    }

    @Test("more bytes than the L2CAP length announces is an overlong PDU")
    func overlong() {
        var h = DecoderHarness()
        let parts = fragments(handle: 0x40, pdu: Self.pdu, cuts: [10])
        _ = h.feed(.acl, parts[0])
        let out = h.feed(.acl, acl(handle: 0x40, pb: 0b01, Array(Self.pdu[10...]) + [0xEE]))
        #expect(out.malformed)
        #expect(out.pdu == nil)
        #expect(h.issues.issues.first?.code == .overlongPDU)
    }

    @Test("a continuation that would grow a PDU past its announced or largest length is overlong, never copied")
    func overlongNeverCopied() {
        // Announces the largest L2CAP PDU (0xFFFF), then a full-size continuation: 1 byte too many.
        var h = DecoderHarness()
        _ = h.feed(.acl, acl(handle: 0x40, pb: 0b10, [0xFF, 0xFF, 0x04, 0x00, 0x1B]))
        var out = h.feed(.acl, acl(handle: 0x40, pb: 0b01, [UInt8](repeating: 0xAB, count: 0xFFFF)))
        #expect(out.malformed && out.pdu == nil)
        #expect(h.issues.issues.last?.code == .overlongPDU)
        #expect(h.decoder.reassembler.pendingCount == 0)
        // A start too short to hold the L2CAP header: the continuation completes the header (length 0).
        _ = h.feed(.acl, acl(handle: 0x41, pb: 0b10, [0x00, 0x00]))
        out = h.feed(.acl, acl(handle: 0x41, pb: 0b01, [UInt8](repeating: 0xAB, count: 0xFFFF)))
        #expect(out.malformed && out.pdu == nil)
        #expect(h.issues.issues.last?.code == .overlongPDU)
        #expect(h.decoder.reassembler.pendingCount == 0)
    }

    @Test("ACL packets the capture cut short (snap length) are skipped with their continuations, not malformed")
    func snapTruncated() {
        var h = DecoderHarness()
        let parts = fragments(handle: 0x40, pdu: Self.pdu, cuts: [20])
        // The start was 24 bytes on the wire, the capture kept 8; its continuation fits the snap length.
        var out = h.feed(.acl, Array(parts[0].prefix(8)), cutShortFrom: parts[0].count)
        #expect(!out.malformed && out.pdu == nil)
        out = h.feed(.acl, parts[1])
        #expect(!out.malformed && out.pdu == nil)
        // The next whole PDU is delivered, and nothing was reported.
        for part in parts { out = h.feed(.acl, part) }
        #expect(out.pdu?.payload == Self.notification)
        #expect(h.issues.issues.isEmpty)
        #expect(h.decoder.reassembler.pendingCount == 0)
    }

    @Test("Disconnection Complete clears a handle's partial PDU, so a reused handle starts clean")
    func disconnectClears() {
        var h = DecoderHarness()
        _ = h.feed(.acl, fragments(handle: 0x40, pdu: Self.pdu, cuts: [10])[0])
        #expect(h.decoder.reassembler.pendingCount == 1)
        // Disconnection Complete: status 0, handle 0x0040, reason 0x13.
        _ = h.feed(.event, [0x05, 0x04, 0x00, 0x40, 0x00, 0x13])
        #expect(h.decoder.reassembler.pendingCount == 0)
        let out = h.feed(.acl, acl(handle: 0x40, pb: 0b01, [1, 2, 3]))
        #expect(out.malformed)  // the old PDU is gone
    }

    @Test("HCI Reset drops the controller's partial PDUs, other controllers keep theirs")
    func resetClears() {
        var h = DecoderHarness()
        _ = h.feed(.acl, fragments(handle: 0x40, pdu: Self.pdu, cuts: [10])[0])
        _ = h.feed(.acl, fragments(handle: 0x40, pdu: Self.pdu, cuts: [10])[0], controller: 1)
        // Command Complete for HCI Reset (0x0c03), status 0, on controller 0.
        _ = h.feed(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        #expect(h.decoder.reassembler.pendingCount == 1)
        let out = h.feed(.acl, fragments(handle: 0x40, pdu: Self.pdu, cuts: [10])[1], controller: 1)
        #expect(out.pdu?.payload == Self.notification)
    }

    @Test("partial PDUs are bounded: the least recently used is recycled past the limit")
    func bounded() {
        var h = DecoderHarness()
        for handle in 0..<UInt16(ACLReassembler.maximumPending + 10) {
            _ = h.feed(.acl, acl(handle: handle, pb: 0b10, [0x20, 0x00, 0x04, 0x00, 1]))
        }
        #expect(h.decoder.reassembler.pendingCount == ACLReassembler.maximumPending)
    }

    @Test("ATT on a dynamic channel opened for PSM 0x001F and on EATT (SPSM 0x0027) is recognised")
    func dynamicATTChannels() {
        var h = DecoderHarness()
        // BR/EDR signalling on CID 1: Connection Request id 1, PSM 0x001F, SCID 0x0041 (host → controller).
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x02, 0x01, 0x04, 0x00, 0x1F, 0x00, 0x41, 0x00])), direction: .sent)
        // Connection Response id 1: DCID 0x0070, SCID 0x0041, result 0, status 0.
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x03, 0x01, 0x08, 0x00, 0x70, 0x00, 0x41, 0x00, 0, 0, 0, 0])))
        // ATT Read Request on the remote's CID 0x0070.
        let out = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 0x70, [0x0A, 0x03, 0x00])), direction: .sent)
        #expect(out.pdu?.cid == 0x70)
        var frameIsATT = false
        [UInt8](acl(handle: 0x0C, pb: 0b10, l2cap(cid: 0x41, [0x0B, 0x01]))).withUnsafeBytes { raw in
            let record = CaptureRecord(number: 9, offset: 0, timestamp: Timestamp(nanoseconds: 0), direction: .received,
                                       kind: .acl, controller: 0, sourceType: 0, originalLength: raw.count, payload: raw)
            frameIsATT = h.decoder.decode(record).attPDU?.first == 0x0B
        }
        #expect(frameIsATT)

        // LE: Credit Based Connection Request id 2, SPSM 0x0027, SCID 0x0040, MTU 64, MPS 64, credits 5.
        _ = h.feed(.acl, acl(handle: 0x40, pb: 0b00, l2cap(cid: 5, [0x14, 0x02, 0x0A, 0x00, 0x27, 0x00, 0x40, 0x00, 64, 0, 64, 0, 5, 0])), direction: .sent)
        // Response id 2: DCID 0x0045, MTU, MPS, credits, result 0.
        _ = h.feed(.acl, acl(handle: 0x40, pb: 0b10, l2cap(cid: 5, [0x15, 0x02, 0x0A, 0x00, 0x45, 0x00, 64, 0, 64, 0, 5, 0, 0, 0])))
        // K-frame on 0x0045: SDU length 3, then ATT Read Request handle 0x0003.
        var eatt: UInt8? = nil
        [UInt8](acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [0x03, 0x00, 0x0A, 0x03, 0x00]))).withUnsafeBytes { raw in
            let record = CaptureRecord(number: 10, offset: 0, timestamp: Timestamp(nanoseconds: 0), direction: .sent,
                                       kind: .acl, controller: 0, sourceType: 0, originalLength: raw.count, payload: raw)
            eatt = h.decoder.decode(record).attPDU?.first
        }
        #expect(eatt == 0x0A)
    }

    @Test("both directions of a dynamic channel share one bearer, so a request and its response can be paired")
    func dynamicChannelBearers() {
        var h = DecoderHarness()
        func bearer(cid: UInt16, _ direction: Direction, handle: UInt16 = 0x0C) -> UInt32? {
            var b: UInt32?
            [UInt8](acl(handle: handle, pb: 0b10, l2cap(cid: cid, [0x0A, 0x03, 0x00]))).withUnsafeBytes { raw in
                let record = CaptureRecord(number: 50, offset: 0, timestamp: Timestamp(nanoseconds: 0), direction: direction,
                                           kind: .acl, controller: 0, sourceType: 0, originalLength: raw.count, payload: raw)
                b = h.decoder.decode(record).l2cap?.bearer
            }
            return b
        }
        // We open ATT over BR/EDR (SCID 0x0041, the peer answers DCID 0x0070); the peer opens one too, with
        // its own SCID 0x0041 and our DCID 0x0050.
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x02, 0x01, 0x04, 0x00, 0x1F, 0x00, 0x41, 0x00])), direction: .sent)
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x03, 0x01, 0x08, 0x00, 0x70, 0x00, 0x41, 0x00, 0, 0, 0, 0])))
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x02, 0x07, 0x04, 0x00, 0x1F, 0x00, 0x41, 0x00])))
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x03, 0x07, 0x08, 0x00, 0x50, 0x00, 0x41, 0x00, 0, 0, 0, 0])), direction: .sent)
        let ours = bearer(cid: 0x70, .sent)
        #expect(ours != nil && ours == bearer(cid: 0x41, .received))
        let theirs = bearer(cid: 0x41, .sent)
        #expect(theirs != nil && theirs == bearer(cid: 0x50, .received))
        #expect(ours != theirs)
        // Fixed channels keep their CID; an unopened dynamic CID differs per direction.
        #expect(bearer(cid: 4, .sent) == 4 && bearer(cid: 4, .received) == 4)
        #expect(bearer(cid: 0x99, .sent) != bearer(cid: 0x99, .received))
    }

    /// Opens EATT on handle 0x40: our SCID 0x0040, the peer's DCID 0x0045 (MTU 64, MPS 23, credits 5).
    static func openEATT(_ h: inout DecoderHarness) {
        _ = h.feed(.acl, acl(handle: 0x40, pb: 0b00, l2cap(cid: 5, [0x17, 0x02, 0x0A, 0x00, 0x27, 0x00, 64, 0, 23, 0, 5, 0, 0x40, 0x00])), direction: .sent)
        _ = h.feed(.acl, acl(handle: 0x40, pb: 0b10, l2cap(cid: 5, [0x18, 0x02, 0x0A, 0x00, 64, 0, 23, 0, 5, 0, 0, 0, 0x45, 0x00])))
    }

    /// Decodes one ACL packet; returns the ATT PDU (copied) and the K-frames its SDU came in.
    static func eattFeed(_ h: inout DecoderHarness, _ bytes: [UInt8], direction: Direction) -> (att: [UInt8]?, kFrames: Int, malformed: Bool) {
        h.number += 1
        let n = h.number
        return bytes.withUnsafeBytes { raw in
            let record = CaptureRecord(number: n, offset: Int64(n * 100), timestamp: Timestamp(nanoseconds: Int64(n)),
                                       direction: direction, kind: .acl, controller: 0, sourceType: 0,
                                       originalLength: raw.count, payload: raw)
            let frame = h.decoder.decode(record)
            return (frame.attPDU.map { Array($0) }, Int(frame.l2cap?.kFrames ?? 0), frame.isMalformed)
        }
    }

    @Test("an EATT SDU segmented into K-frames is reassembled; only the first K-frame carries the SDU length")
    func eattSegmentedSDU() {
        var h = DecoderHarness()
        Self.openEATT(&h)
        // A 40-byte Read Response (0x0B + 39 value bytes) sent by us to the peer on its CID 0x0045, MPS 23:
        // K-frame 1 = SDU length 40 + 21 bytes, K-frame 2 = 19 bytes.
        let sdu: [UInt8] = [0x0B] + (1...39).map { UInt8($0) }
        let first = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [40, 0] + sdu[0..<21])), direction: .sent)
        #expect(first.att == nil && !first.malformed)
        let second = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, Array(sdu[21...]))), direction: .sent)
        #expect(second.att == sdu && second.kFrames == 2 && !second.malformed)
        #expect(h.decoder.sdus.pendingCount == 0)
        // The next K-frame starts a new SDU: a Write Command to handle 0x0021, whole in one K-frame.
        let next = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [4, 0, 0x52, 0x21, 0x00, 0x07])), direction: .sent)
        #expect(next.att == [0x52, 0x21, 0x00, 0x07] && next.kFrames == 1)
    }

    @Test("EATT SDUs on the two directions of a channel pair are kept apart, and a disconnection forgets partial ones")
    func eattSDUsPerChannel() {
        var h = DecoderHarness()
        Self.openEATT(&h)
        // Partial SDUs both ways: 30 bytes announced, 10 sent each way.
        _ = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [30, 0] + [UInt8](repeating: 0x1B, count: 10))), direction: .sent)
        _ = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b10, l2cap(cid: 0x40, [30, 0] + [UInt8](repeating: 0x1D, count: 10))), direction: .received)
        #expect(h.decoder.sdus.pendingCount == 2)
        let rest = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b10, l2cap(cid: 0x40, [UInt8](repeating: 0x1D, count: 20))), direction: .received)
        #expect(rest.att == [UInt8](repeating: 0x1D, count: 30) && rest.kFrames == 2)
        #expect(h.decoder.sdus.pendingCount == 1)
        // Disconnection Complete for handle 0x0040, status 0, reason 0x13.
        _ = h.feed(.event, [0x05, 0x04, 0x00, 0x40, 0x00, 0x13])
        #expect(h.decoder.sdus.pendingCount == 0)
    }

    @Test("a K-frame beyond its SDU's announced length, or without an SDU length, is malformed and never trapped on")
    func eattMalformedKFrames() {
        var h = DecoderHarness()
        Self.openEATT(&h)
        // One K-frame carrying more than its SDU length announces.
        let overlong = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [2, 0, 0x0A, 0x03, 0x00])), direction: .sent)
        #expect(overlong.att == nil && overlong.malformed)
        // A continuation overrunning the SDU: 5 announced, 3 + 4 sent.
        _ = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [5, 0, 0x12, 0x21, 0x00])), direction: .sent)
        let overrun = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [1, 2, 3, 4])), direction: .sent)
        #expect(overrun.att == nil && overrun.malformed && h.decoder.sdus.pendingCount == 0)
        // A 1-byte K-frame has no room for the SDU length.
        let short = Self.eattFeed(&h, acl(handle: 0x40, pb: 0b00, l2cap(cid: 0x45, [7])), direction: .sent)
        #expect(short.att == nil && short.malformed)
        // Partial SDUs on many channels stay bounded; the oldest is dropped and reported.
        var sdus = SDUReassembler()
        let issues = IssueLog()
        let kFrame: [UInt8] = [100, 0, 1, 2, 3]
        kFrame.withUnsafeBytes { raw in
            let record = CaptureRecord(number: 1, offset: 0, timestamp: Timestamp(nanoseconds: 0), direction: .sent,
                                       kind: .acl, controller: 0, sourceType: 0, originalLength: raw.count, payload: raw)
            for cid in UInt16(0x40)..<UInt16(0x40 + SDUReassembler.maximumPending + 8) {
                _ = sdus.push(raw, controller: 0, handle: 0x40, cid: cid, direction: .sent, record: record, issues: issues)
            }
        }
        #expect(sdus.pendingCount == SDUReassembler.maximumPending)
        #expect(issues.count == 8)
    }

    @Test("a dynamic CID means ATT only in the direction it was opened for: each side numbers its own channels")
    func dynamicChannelsHaveDirections() {
        var h = DecoderHarness()
        // The peer opens ATT over BR/EDR: Connection Request id 3, PSM 0x001F, its SCID 0x0040 (received).
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x02, 0x03, 0x04, 0x00, 0x1F, 0x00, 0x40, 0x00])))
        // Our response: our DCID 0x0041, its SCID 0x0040, success (sent).
        _ = h.feed(.acl, acl(handle: 0x0C, pb: 0b10, l2cap(cid: 1, [0x03, 0x03, 0x08, 0x00, 0x41, 0x00, 0x40, 0x00, 0, 0, 0, 0])),
                   direction: .sent)
        func isATT(cid: UInt16, _ direction: Direction) -> Bool {
            var att = false
            [UInt8](acl(handle: 0x0C, pb: 0b10, l2cap(cid: cid, [0x0A, 0x03, 0x00]))).withUnsafeBytes { raw in
                let record = CaptureRecord(number: 99, offset: 0, timestamp: Timestamp(nanoseconds: 0), direction: direction,
                                           kind: .acl, controller: 0, sourceType: 0, originalLength: raw.count, payload: raw)
                att = h.decoder.decode(record).attPDU != nil
            }
            return att
        }
        // ATT travels to the peer on its CID 0x0040 and to us on ours, 0x0041.
        #expect(isATT(cid: 0x40, .sent) && isATT(cid: 0x41, .received))
        // The same numbers the other way are other channels (e.g. an SDP channel we opened earlier).
        #expect(!isATT(cid: 0x41, .sent) && !isATT(cid: 0x40, .received))
    }
}

@Suite("HCI decoding and statistics")
struct HCIDecodingTests {
    @Test("short packets are malformed, never trapped on")
    func shortPackets() {
        var h = DecoderHarness()
        #expect(h.feed(.command, [0x03]).malformed)
        #expect(h.feed(.event, [0x0E, 0x04, 0x01]).malformed)  // declares 4, has 1
        #expect(h.feed(.acl, [0x40, 0x20, 0x10, 0x00, 0x01]).malformed)
        #expect(h.feed(.sco, [0x40]).malformed)
        #expect(h.issues.count == 4)
        #expect(h.issues.issues.allSatisfy { $0.code == .shortPacket })
    }

    @Test("legacy advertising reports are counted per report; a lying count is malformed")
    func advertisingReports() {
        var h = DecoderHarness()
        // LE Meta, subevent 02, 2 reports, each: type 0, addr type 1, address, data len 3 (02 01 06), rssi -60.
        let report: [UInt8] = [0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x03, 0x02, 0x01, 0x06, 0xC4]
        let params: [UInt8] = [0x02, 0x02] + report + report
        let out = h.feed(.event, [0x3E, UInt8(params.count)] + params)
        #expect(out.advertisingReports == 2)
        #expect(!out.malformed)
        let lying: [UInt8] = [0x02, 0x03] + report
        let bad = h.feed(.event, [0x3E, UInt8(lying.count)] + lying)
        #expect(bad.malformed)
        #expect(bad.advertisingReports == 1)
    }

    @Test("extended advertising reports: 24 fixed bytes then data")
    func extendedReports() {
        var h = DecoderHarness()
        let report: [UInt8] = [0x13, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x01, 0x00, 0xFF, 0x7F, 0xC4, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x03, 0x02, 0x01, 0x06]
        let params: [UInt8] = [0x0D, 0x01] + report
        let out = h.feed(.event, [0x3E, UInt8(params.count)] + params)
        #expect(out.advertisingReports == 1)
        #expect(!out.malformed)
    }

    /// What the scan tracker counts per report, in one word: sender bits as `DeviceKey` has them, plus the
    /// scan-response and extended bits, read from legacy and extended reports alike.
    @Test("packed sightings: address, address type, scan response and extended bits")
    func packedSightings() {
        // Legacy: an ADV_IND from a random address, then a SCAN_RSP (type 4) from a public one.
        let advInd: [UInt8] = [0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x00, 0xC4]
        let scanRsp: [UInt8] = [0x04, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0xC4]
        let legacy: [UInt8] = [0x02] + advInd + scanRsp
        let packed: [PackedSighting] = legacy.withUnsafeBytes { bytes in
            var reports = AdvertisingReportIterator(subevent: .advertisingReport, parameters: bytes)
            var all: [PackedSighting] = []
            while let sighting = reports.nextSighting() { all.append(PackedSighting(sighting)) }
            return all
        }
        #expect(packed.map(\.rawValue) == [0x8001_6655_4433_2211, 0x8100_0605_0403_0201])
        #expect(packed.map(\.scanResponse) == [0, 1])
        #expect(packed.map(\.extended) == [0, 0])
        #expect(packed[1].senderBits == 0x8000_0605_0403_0201)
        // Extended: event type 0x001B has the scan-response bit (0x08); address type 1.
        let report: [UInt8] = [0x1B, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x01, 0x00, 0xFF, 0x7F, 0xC4, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x00]
        let extended: [UInt8] = [0x01] + report
        let sighting: PackedSighting? = extended.withUnsafeBytes { bytes in
            var reports = AdvertisingReportIterator(subevent: .extendedAdvertisingReport, parameters: bytes)
            return reports.nextSighting().map(PackedSighting.init)
        }
        #expect(sighting?.rawValue == 0x8301_0605_0403_0201)
        #expect(sighting?.scanResponse == 1)
        #expect(sighting?.extended == 1)
    }
}
