import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTEnergy

/// BR/EDR radio time: the baseband figures, each kind of activity priced from synthetic HCI, and what the tracker
/// reads of Mode Change, Synchronous Connection Complete, paging and inquiry.
@Suite("Energy model: BR/EDR")
struct ClassicLinkEnergyTests {
    /// Hand-built HCI packets (H4 kind + bytes) fed to the decoder and tracker.
    struct Feed {
        var decoder = PacketDecoder(issues: IssueLog())
        let tracker = CaptureTracker(options: .withoutAdvertisers)
        var number = 0

        mutating func feed(_ kind: RecordKind, _ bytes: [UInt8], _ direction: Direction = .received, at seconds: Double) {
            number += 1
            let n = number
            bytes.withUnsafeBytes { raw in
                let record = CaptureRecord(number: n, offset: Int64(n * 32), timestamp: Timestamp(nanoseconds: Int64(seconds * 1e9)),
                                           direction: direction, kind: kind, controller: 0, sourceType: 0,
                                           originalLength: raw.count, payload: raw)
                tracker.observe(decoder.decode(record))
            }
        }

        static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        static let peer: [UInt8] = [0x66, 0xDB, 0x72, 0x6B, 0x18, 0x00]

        mutating func command(_ opcode: UInt16, _ p: [UInt8], at t: Double) {
            feed(.command, Self.le16(opcode) + [UInt8(p.count)] + p, .sent, at: t)
        }
        mutating func event(_ code: UInt8, _ p: [UInt8], at t: Double) { feed(.event, [code, UInt8(p.count)] + p, at: t) }
        mutating func commandStatus(_ opcode: UInt16, status: UInt8 = 0, at t: Double) {
            event(0x0F, [status, 1] + Self.le16(opcode), at: t)
        }
        mutating func createConnection(at t: Double) {
            command(0x0405, Self.peer + Self.le16(0xCC18) + [0x01, 0x00] + Self.le16(0) + [0x01], at: t)
            commandStatus(0x0405, at: t)
        }
        /// Connection Complete: status, handle, address, link type, encryption.
        mutating func connectionComplete(status: UInt8 = 0, handle: UInt16, linkType: UInt8 = 1, at t: Double) {
            event(0x03, [status] + Self.le16(handle) + Self.peer + [linkType, 0x00], at: t)
        }
        /// Mode Change: status, handle, mode, interval.
        mutating func modeChange(handle: UInt16, mode: UInt8, interval: UInt16, at t: Double) {
            event(0x14, [0x00] + Self.le16(handle) + [mode] + Self.le16(interval), at: t)
        }
        /// An L2CAP PDU of `bytes` payload on a dynamic channel, in one ACL packet.
        mutating func acl(handle: UInt16, bytes: Int, _ direction: Direction, at t: Double) {
            let l2 = Self.le16(UInt16(bytes)) + Self.le16(0x0040) + [UInt8](repeating: 0x55, count: bytes)
            feed(.acl, Self.le16(handle | 0x2000) + Self.le16(UInt16(l2.count)) + l2, direction, at: t)
        }
        mutating func disconnection(handle: UInt16, at t: Double) { event(0x05, [0x00] + Self.le16(handle) + [0x13], at: t) }

        /// An answer to LE Get Controller Activity Energy Info (0xFD59): tx, rx and idle ms, energy.
        mutating func counters(tx: UInt32, rx: UInt32, idle: UInt32, at t: Double) {
            func le32(_ v: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: v >> $0) } }
            event(0x0E, [0x01] + Self.le16(0xFD59) + [0x00] + le32(tx) + le32(rx) + le32(idle) + le32(0), at: t)
        }

        func report() -> EnergyReport { EnergyReport(model: tracker.finish()) }
    }

    static func close(_ a: Double, _ b: Double, within: Double = 1e-9) -> Bool { abs(a - b) <= within }
    static func seconds(_ a: Timestamp, _ b: Timestamp) -> Double { Double(b.nanoseconds - a.nanoseconds) / 1e9 }

    @Test("baseband packets: POLL 126 µs, ID 68 µs, DH5/2-DH5/3-DH5 full as the Core tables give them (2870 µs ± 10)")
    func packets() {
        #expect(BREDRAirTime.headerSeconds == 126e-6 && BREDRAirTime.idPacketSeconds == 68e-6)
        for name in ["DH5", "2-DH5", "3-DH5"] {
            let type = BREDRAirTime.aclTypes.first { $0.name == name }!
            #expect(abs(type.seconds(payload: type.maximumPayload) - 2870e-6) <= 10e-6, "\(name)")
            #expect(type.seconds(payload: type.maximumPayload) < Double(type.slots) * BREDRAirTime.slotSeconds)
        }
        // The priced type: 2-DH5, a 679-byte packet in 2876 µs; two packets carry 1,000 bytes.
        #expect(BREDRAirTime.aclPacket.name == "2-DH5")
        #expect(Self.close(BREDRAirTime.aclSeconds(packets: 1, bytes: 679), 2876e-6, within: 1e-9))
        #expect(Self.close(BREDRAirTime.aclSeconds(packets: 2, bytes: 1000),
                           BREDRAirTime.aclSeconds(payload: 500, megabitsPerSecond: 2) * 2, within: 1e-12))
        // Synchronous: HV3 366 µs, EV3 382 µs, 2-EV3 with mSBC's 60 bytes 392 µs.
        #expect(Self.close(BREDRAirTime.synchronousSeconds(bytes: 30, extended: false), 366e-6))
        #expect(Self.close(BREDRAirTime.synchronousSeconds(bytes: 30, extended: true), 382e-6))
        #expect(Self.close(BREDRAirTime.synchronousSeconds(bytes: 60, extended: true), 392e-6))
    }

    @Test("an idle active link: a POLL and a NULL every 25 ms; sniff: one exchange per anchor; hold: nothing")
    func modes() {
        let model = EnergyModel()
        let idle = LinkLayerTraffic()
        let active = model.classicLinkTime(seconds: 10, mode: ClassicLinkMode(), sent: idle, received: idle, phoneIsCentral: true)
        // 400 polls: 126 µs out, 126 µs back and the ±10 µs window.
        #expect(Self.close(active.txSeconds, 400 * 126e-6) && Self.close(active.rxSeconds, 400 * 146e-6))
        let sniff = model.classicLinkTime(seconds: 10, mode: ClassicLinkMode(mode: .sniff, intervalSlots: 800), sent: idle,
                                          received: idle, phoneIsCentral: true)
        #expect(Self.close(sniff.txSeconds, 20 * 126e-6) && Self.close(sniff.rxSeconds, 20 * 146e-6))
        var subrated = ClassicLinkMode(mode: .sniff, intervalSlots: 800)
        subrated.subrate = 4
        let sub = model.classicLinkTime(seconds: 10, mode: subrated, sent: idle, received: idle, phoneIsCentral: true)
        #expect(Self.close(sub.txSeconds, 5 * 126e-6))
        // A peripheral in sniff listens through its attempt: 4 slots, three beyond the exchange.
        var attempt = ClassicLinkMode(mode: .sniff, intervalSlots: 800)
        attempt.attemptSlots = 4
        let peripheral = model.classicLinkTime(seconds: 10, mode: attempt, sent: idle, received: idle, phoneIsCentral: false)
        #expect(Self.close(peripheral.rxSeconds, 20 * 146e-6 + 20 * 3 * 92e-6))
        let hold = model.classicLinkTime(seconds: 10, mode: ClassicLinkMode(mode: .hold, intervalSlots: 800), sent: idle,
                                         received: idle, phoneIsCentral: true)
        #expect(hold.total == 0)
    }

    @Test("SCO/eSCO: a packet each way every T_eSCO")
    func synchronous() {
        var mode = ClassicLinkMode()
        mode.synchronous = SynchronousSlots(isExtended: true, intervalSlots: 12, windowSlots: 2, rxPacketBytes: 60, txPacketBytes: 60,
                                            airMode: 3)
        let t = EnergyModel().classicLinkTime(seconds: 7.5, mode: mode, sent: LinkLayerTraffic(), received: LinkLayerTraffic(),
                                              phoneIsCentral: true)
        // 1,000 intervals of 7.5 ms: 392 µs out, 392 µs + the window back.
        #expect(Self.close(t.txSeconds, 1000 * 392e-6, within: 1e-9) && Self.close(t.rxSeconds, 1000 * 412e-6, within: 1e-9))
    }

    @Test("paging and inquiry: 2 ID packets every 1.25 ms, listening half the time")
    func trains() {
        let t = EnergyModel().classicTrainTime(seconds: 5.12)
        #expect(Self.close(t.txSeconds, 4096 * 2 * 68e-6, within: 1e-9) && Self.close(t.rxSeconds, 2.56, within: 1e-9))
    }

    @Test("from HCI: a link paged for, active with A2DP-sized packets, then sniff; its phases, paging and the counters' interval")
    func fromHCI() throws {
        var f = Feed()
        f.createConnection(at: 1)
        f.connectionComplete(handle: 0x0C, at: 1.5)
        // 10 s active with 100 packets of 800 bytes sent (2 baseband packets each) and 10 of 20 bytes received.
        for i in 0..<100 { f.acl(handle: 0x0C, bytes: 796, .sent, at: 2 + Double(i) * 0.05) }
        for i in 0..<10 { f.acl(handle: 0x0C, bytes: 16, .received, at: 2 + Double(i) * 0.5) }
        f.modeChange(handle: 0x0C, mode: 2, interval: 800, at: 11.5)
        f.disconnection(handle: 0x0C, at: 21.5)
        let r = f.report()
        let link = try #require(r.links.first)
        // The rules read `role` as an LE link's: a BR/EDR link's stays unknown (its mode holds who is central).
        #expect(link.modelled && link.isClassic && link.connection.role == .unknown)
        // The peer's side of a BR/EDR link is not priced: no peripheral cost, in the link or the totals.
        #expect(link.peripheral == nil && r.peripheralTotal == nil)
        #expect(link.phases.map(\.name) == ["active", "sniff 500 ms"])
        let active = link.phases[0], sniff = link.phases[1]
        // Active 10 s: 400 polls; 200 packets out replace 200 POLLs, 10 in replace 10 NULLs.
        let sent = BREDRAirTime.aclSeconds(packets: 200, bytes: 100 * 800)
        let received = BREDRAirTime.aclSeconds(packets: 10, bytes: 10 * 20)
        #expect(Self.close(active.radio.txSeconds, sent + 200 * 126e-6, within: 1e-9))
        #expect(Self.close(active.radio.rxSeconds, received + 390 * 126e-6 + 400 * 20e-6, within: 1e-9))
        #expect(Self.close(sniff.radio.txSeconds, 20 * 126e-6, within: 1e-9))
        // The paging before it: 0.5 s of train, apart from the totals.
        let paging = try #require(r.classicProcedures.first)
        #expect(paging.kind == .paging && Self.close(paging.radio.rxSeconds, 0.25, within: 1e-9))
        #expect(Self.close(r.phoneTotal.radioSeconds, link.phone.radioSeconds, within: 1e-12))
    }

    @Test("a failed page lasts the page timeout at most; an inquiry runs until it is cancelled; eSCO from its event")
    func procedures() throws {
        var f = Feed()
        f.command(0x0C18, Feed.le16(0x1000), at: 0)  // Write Page Timeout: 2.56 s
        f.createConnection(at: 1)
        f.connectionComplete(status: 0x04, handle: 0, at: 21)  // Page Timeout, reported 20 s later
        f.command(0x0401, [0x33, 0x8B, 0x9E, 0x0A, 0x00], at: 30)  // GIAC, 10 × 1.28 s
        f.commandStatus(0x0401, at: 30.001)
        f.command(0x0402, [], at: 33)
        f.event(0x0E, [0x01] + Feed.le16(0x0402) + [0x00], at: 33.001)
        // An eSCO link: T_eSCO 12, W_eSCO 2, 60 bytes each way, transparent air mode.
        f.connectionComplete(handle: 0x0C, at: 40)
        f.event(0x2C, [0x00] + Feed.le16(0x0D) + Feed.peer + [0x02, 12, 2] + Feed.le16(60) + Feed.le16(60) + [0x03], at: 41)
        f.disconnection(handle: 0x0D, at: 48.5)
        let r = f.report()
        let kinds = r.classicProcedures.map(\.kind)
        #expect(kinds == [.paging, .inquiry])
        #expect(Self.close(Self.seconds(r.classicProcedures[0].start, r.classicProcedures[0].end), 2.56, within: 1e-6))
        #expect(Self.close(Self.seconds(r.classicProcedures[1].start, r.classicProcedures[1].end), 3, within: 0.01))
        let sco = try #require(r.links.first { $0.connection.transport == .sco })
        #expect(sco.phases.map(\.name) == ["eSCO every 7.5 ms"])
        #expect(Self.close(sco.radio.txSeconds, 1000 * 392e-6, within: 1e-9))
    }

    @Test("the counters' intervals: a link seen from its start is priced, never the reason; one joined midway is")
    func gaps() throws {
        var f = Feed()
        f.counters(tx: 0, rx: 0, idle: 0, at: 0)
        // Seen from its Connection Complete: active for 10 s, the counters far above the model.
        f.connectionComplete(handle: 0x0C, at: 0.5)
        f.disconnection(handle: 0x0C, at: 10.5)
        f.counters(tx: 500, rx: 500, idle: 10_000, at: 11)
        // Joined midway: a signalling PDU (CID 1) on a handle with no Connection Complete.
        let signal: [UInt8] = Feed.le16(4) + Feed.le16(0x0001) + [0x0A, 0x01, 0x00, 0x00]  // Information Request, no data
        f.feed(.acl, Feed.le16(0x0D | 0x2000) + Feed.le16(UInt16(signal.count)) + signal, .sent, at: 12)
        f.counters(tx: 400, rx: 600, idle: 10_000, at: 22)
        let r = f.report()
        #expect(r.measured.count == 2)
        let seen = r.measured[0], joined = r.measured[1]
        #expect(seen.brEdrActive && !seen.brEdrUnpriced && seen.shares.brEdrTx > 0 && seen.gap != .brEdrNotModelled)
        #expect(joined.brEdrActive && joined.brEdrUnpriced && joined.gap == .brEdrNotModelled)
    }
}
