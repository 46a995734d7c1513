import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack

/// Hand-built air records through `PacketDecoder` and `CaptureTracker`: the cases a scenario rarely reaches
/// (instants across the 16-bit wrap, silence, a terminate, noise on a stray access address, a missed
/// CONNECT_IND on a container without event counters).
final class AirHarness {
    var encoder: LinkLayerRecordEncoder
    var decoder = PacketDecoder(issues: IssueLog())
    let tracker = CaptureTracker()
    var number = 0
    static let epoch: Int64 = 1_700_000_000_000_000

    init(_ container: LinkLayerContainer = .nordic(version: 3, board: 0)) {
        encoder = LinkLayerRecordEncoder(container: container)
    }

    /// One packet: access address, PDU (header and payload) and its CRC from `crcInit` (wrong when `crcOK` is
    /// false), at `ms` milliseconds into the capture.
    func send(ms: Double, aa: UInt32, _ pdu: [UInt8], crcInit: UInt32, channel: UInt8 = 5, counter: UInt16 = 0,
              direction: LinkLayerRecordInfo.Direction = .centralToPeripheral, crcOK: Bool = true) {
        var crc = pdu.withUnsafeBytes { LLCRC.compute($0, initialValue: crcInit) }
        if !crcOK { crc ^= 0x5A5A5A }
        let packet = [UInt8(aa & 0xFF), UInt8(aa >> 8 & 0xFF), UInt8(aa >> 16 & 0xFF), UInt8(aa >> 24)] + pdu
            + [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF)]
        let us = Self.epoch + Int64(ms * 1000)
        let advertising = aa == LLCapturedPacket.advertisingAccessAddress
        let info = LinkLayerRecordInfo(microseconds: us, channel: channel, rssi: -60, isAdvertising: advertising,
                                       direction: advertising ? .unknown : direction, crcOK: crcOK, eventCounter: counter)
        var bytes: [UInt8] = []
        packet.withUnsafeBytes { encoder.encode(info, packet: $0, into: &bytes) }
        number += 1
        bytes.withUnsafeBytes { raw in
            let record = CaptureRecord(number: number, offset: Int64(number * 64), timestamp: Timestamp(nanoseconds: us * 1000),
                                       direction: .unknown, kind: .linkLayer, controller: 0,
                                       sourceType: UInt32(encoder.container.linktype), originalLength: raw.count, payload: raw)
            tracker.observe(decoder.decode(record))
        }
    }

    /// CONNECT_IND from 11:22:33:44:55:66 to AA:BB:CC:DD:EE:FF: interval in 1.25 ms units, timeout in 10 ms.
    func connect(ms: Double, aa: UInt32, crcInit: UInt32, interval: UInt16, timeout: UInt16 = 200) {
        var p: [UInt8] = [0x05, 34]
        p += [0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA]
        p += [UInt8(aa & 0xFF), UInt8(aa >> 8 & 0xFF), UInt8(aa >> 16 & 0xFF), UInt8(aa >> 24)]
        p += [UInt8(crcInit & 0xFF), UInt8(crcInit >> 8 & 0xFF), UInt8(crcInit >> 16 & 0xFF)]
        p += [2, 0, 0, UInt8(interval & 0xFF), UInt8(interval >> 8), 0, 0, UInt8(timeout & 0xFF), UInt8(timeout >> 8)]
        p += [0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x05]
        send(ms: ms, aa: LLCapturedPacket.advertisingAccessAddress, p, crcInit: LLCRC.advertisingInitialValue, channel: 37)
    }

    static func empty(sn: UInt8, nesn: UInt8) -> [UInt8] { [0x01 | nesn << 2 | sn << 3, 0] }

    /// LL_CONNECTION_UPDATE_IND: interval and timeout as in LLData, instant.
    static func update(interval: UInt16, timeout: UInt16, instant: UInt16, sn: UInt8 = 0, nesn: UInt8 = 0) -> [UInt8] {
        [0x03 | nesn << 2 | sn << 3, 12, 0x00, 1, 0, 0, UInt8(interval & 0xFF), UInt8(interval >> 8), 0, 0,
         UInt8(timeout & 0xFF), UInt8(timeout >> 8), UInt8(instant & 0xFF), UInt8(instant >> 8)]
    }

    func finish() -> CaptureModel { tracker.finish() }
}

@Suite("Air tracking")
struct AirTrackerTests {
    static let aa: UInt32 = 0x5065_4D3A
    static let crcInit: UInt32 = 0x123456

    /// One connection event: the central's PDU, then the peripheral's empty answer, 150 µs apart.
    static func event(_ h: AirHarness, ms: Double, counter: UInt16, _ central: [UInt8] = AirHarness.empty(sn: 0, nesn: 0),
                      channel: UInt8 = 5) {
        h.send(ms: ms, aa: aa, central, crcInit: crcInit, channel: channel, counter: counter)
        h.send(ms: ms + 0.3, aa: aa, AirHarness.empty(sn: 0, nesn: 1), crcInit: crcInit, channel: channel, counter: counter,
               direction: .peripheralToCentral)
    }

    @Test("an update whose instant lies across the 16-bit wrap takes effect at that event (sniffer counters)")
    func instantAcrossTheWrap() {
        let h = AirHarness()
        // The capture joins an existing link near the wrap: counters 65530… from the nRF header.
        var ms = 0.0
        var counter: UInt16 = 65530
        for i in 0..<12 {
            let pdu = i == 1 ? AirHarness.update(interval: 80, timeout: 400, instant: 4) : AirHarness.empty(sn: 0, nesn: 0)
            Self.event(h, ms: ms, counter: counter, pdu, channel: UInt8(i % 37))
            // 30 ms apart, 100 ms from the instant on.
            ms += Int16(bitPattern: (counter &+ 1) &- 4) > 0 ? 100 : 30
            counter &+= 1
        }
        let model = h.finish()
        let c = try! #require(model.connections.first)
        #expect(c.implicitStart && c.air?.intervalEstimated == true)
        let change = c.events.compactMap { e -> (RecordRef, ConnectionParameters)? in
            if case .parametersChanged(let p) = e.kind { (e.at, p) } else { nil }
        }
        #expect(change.count == 1)
        #expect(change.first?.1 == ConnectionParameters(interval: 80, latency: 0, supervisionTimeout: 400))
        // Counter 4 is the 11th event (65530…65535, 0…4): its first packet is record 21.
        #expect(change.first?.0.number == 21)
        #expect(c.air?.lateInstants == 0)
        #expect(c.initialParameters?.interval == 24)
    }

    @Test("without event counters (linktype 251), events and the instant come from timing, across the wrap")
    func instantFromTiming() {
        let h = AirHarness(.leLL)
        h.connect(ms: 0, aa: Self.aa, crcInit: Self.crcInit, interval: 24)
        // Events every 30 ms from 2.5 ms on; one event in three goes unheard. The update at event 2 names instant
        // 10; the tracker's own counter must reach 10 by timing through the gaps.
        var heard: [Int: Int] = [:]
        for k in 0..<16 where k % 3 != 2 {
            let ms = 2.5 + Double(k) * 30 + (k >= 10 ? Double(k - 10) * 20 : 0)
            let pdu = k == 1 ? AirHarness.update(interval: 40, timeout: 200, instant: 10) : AirHarness.empty(sn: 0, nesn: 0)
            heard[k] = h.number + 1
            Self.event(h, ms: ms, counter: 0, pdu, channel: UInt8(k % 37))
        }
        let model = h.finish()
        let c = try! #require(model.connections.first)
        #expect(!c.implicitStart && c.initialParameters?.interval == 24)
        let change = c.events.first { if case .parametersChanged = $0.kind { true } else { false } }
        #expect(change?.at.number == heard[10])
        #expect(c.phases.count == 2)
        #expect(c.air?.phases.map(\.events) == [7, 4] && c.air?.phases.count == c.phases.count)
    }

    @Test("LL_TERMINATE_IND closes the link with its reason; later packets on the address open nothing")
    func terminate() {
        let h = AirHarness()
        h.connect(ms: 0, aa: Self.aa, crcInit: Self.crcInit, interval: 24)
        Self.event(h, ms: 2.5, counter: 0)
        Self.event(h, ms: 32.5, counter: 1, [0x03, 2, 0x02, 0x13])
        Self.event(h, ms: 62.5, counter: 2)
        let model = h.finish()
        #expect(model.connections.count == 1)
        let c = try! #require(model.connections.first)
        #expect(c.disconnectReason == .remoteUserTerminatedConnection && c.disconnectRequestedLocally)
        #expect(c.end?.number == 4 && c.air?.endInferred == false)
        // The peripheral's acknowledgement in the terminate's event is the link's; the next event's are no one's.
        #expect(c.airStatistics?.packets == 4 && c.airStatistics?.events == 2)
        #expect(c.peerAddress == BDAddr("AA:BB:CC:DD:EE:FF") && c.air?.centralAddress == BDAddr("11:22:33:44:55:66"))
    }

    @Test("silence past the supervision timeout while the capture goes on ends the link as lost (inferred)")
    func lost() {
        let h = AirHarness()
        h.connect(ms: 0, aa: Self.aa, crcInit: Self.crcInit, interval: 24, timeout: 50)  // 500 ms
        for k in 0..<5 { Self.event(h, ms: 2.5 + Double(k) * 30, counter: UInt16(k)) }
        // Advertising goes on for two seconds; the link says nothing more.
        for k in 0..<8 {
            h.send(ms: 400 + Double(k) * 250, aa: LLCapturedPacket.advertisingAccessAddress,
                   [0x02, 6, 1, 2, 3, 4, 5, 6], crcInit: LLCRC.advertisingInitialValue, channel: 37)
        }
        let model = h.finish()
        let c = try! #require(model.connections.first)
        #expect(c.air?.endInferred == true && c.disconnectReason == nil && !c.isOpen)
        let lastPacket = 2.5 + 4 * 30 + 0.3
        let end = Double(c.end!.timestamp.nanoseconds - c.start.timestamp.nanoseconds) / 1e6
        #expect(abs(end - (lastPacket + 500)) < 0.01, "ended \(end) ms after the CONNECT_IND")
        #expect(c.events.contains { if case .linkLost = $0.kind { true } else { false } })
    }

    /// A CONNECT_IND, then the central's first empty PDU resent in `events` events, no answer; advertising goes on.
    static func unanswered(_ h: AirHarness, events: Int, container251: Bool = false, advanceSN: Bool = false) {
        h.connect(ms: 0, aa: aa, crcInit: crcInit, interval: 24, timeout: 100)  // 30 ms, 1 s
        for k in 0..<events {
            // Without direction (251) the decoder infers it from timing; the SN moving says something was acknowledged.
            let sn: UInt8 = advanceSN ? UInt8(k & 1) : 0
            h.send(ms: 2.5 + Double(k) * 30, aa: aa, AirHarness.empty(sn: sn, nesn: 0), crcInit: crcInit,
                   channel: UInt8(k % 37), counter: UInt16(k))
        }
        for k in 0..<8 {
            h.send(ms: 400 + Double(k) * 250, aa: LLCapturedPacket.advertisingAccessAddress,
                   [0x02, 6, 1, 2, 3, 4, 5, 6], crcInit: LLCRC.advertisingInitialValue, channel: 37)
        }
    }

    @Test("a central unanswered for its first six events failed to establish the link (0x3E): an attempt, not a connection",
          arguments: [false, true])
    func failedToEstablish(bareLinkLayer: Bool) throws {
        let h = AirHarness(bareLinkLayer ? .leLL : .nordic(version: 3, board: 0))
        Self.unanswered(h, events: 6)
        // A real link after it keeps number 1.
        h.connect(ms: 2500, aa: 0x7123_4567, crcInit: Self.crcInit, interval: 24)
        for k in 0..<3 {
            h.send(ms: 2502.5 + Double(k) * 30, aa: 0x7123_4567, AirHarness.empty(sn: 0, nesn: 0), crcInit: Self.crcInit,
                   counter: UInt16(k))
            h.send(ms: 2502.8 + Double(k) * 30, aa: 0x7123_4567, AirHarness.empty(sn: 0, nesn: 1), crcInit: Self.crcInit,
                   counter: UInt16(k), direction: .peripheralToCentral)
        }
        let model = h.finish()
        let failure = try #require(model.failedConnections.first)
        #expect(model.failedConnections.count == 1)
        #expect(failure.status == .connectionFailedToBeEstablished && failure.peerAddress == BDAddr("AA:BB:CC:DD:EE:FF"))
        #expect(failure.transport == .le && failure.requested?.number == 1 && failure.at.number == 7)
        #expect(failure.attemptDuration == .microseconds(2_500 + 5 * 30_000))
        #expect(model.connections.count == 1 && model.connections.first?.id == 1)
        #expect(model.connections.first?.air?.accessAddress == 0x7123_4567)
    }

    @Test("an attempt whose central made its six tries just before the capture ended failed too")
    func failedAtTheEnd() throws {
        let h = AirHarness()
        h.connect(ms: 0, aa: Self.aa, crcInit: Self.crcInit, interval: 24)
        for k in 0..<6 {
            h.send(ms: 2.5 + Double(k) * 30, aa: Self.aa, AirHarness.empty(sn: 0, nesn: 0), crcInit: Self.crcInit, counter: UInt16(k))
        }
        let model = h.finish()
        #expect(model.failedConnections.count == 1 && model.connections.isEmpty)
    }

    @Test("controls: a central heard for more than six events, or whose SN moved, or in only two events (the sniffer may have lost the link) had a link (lost), not a failed attempt",
          arguments: [(7, false), (4, true), (2, false)])
    func notFailed(events: Int, advanceSN: Bool) throws {
        let h = AirHarness()
        Self.unanswered(h, events: events, advanceSN: advanceSN)
        let model = h.finish()
        #expect(model.failedConnections.isEmpty)
        let c = try #require(model.connections.first)
        #expect(c.air?.endInferred == true && model.connections.count == 1)
    }

    @Test("CRC errors and retransmissions are counted per phase and kept out of ATT")
    func crcAndRetransmissions() {
        let h = AirHarness()
        h.connect(ms: 0, aa: Self.aa, crcInit: Self.crcInit, interval: 24)
        // ATT Read Request (handle 0x0003) from the central, heard with a bad CRC, then resent and answered.
        let read: [UInt8] = [0x02, 7, 3, 0, 4, 0, 0x0A, 0x03, 0x00]
        h.send(ms: 2.5, aa: Self.aa, read, crcInit: Self.crcInit, counter: 0, crcOK: false)
        h.send(ms: 32.5, aa: Self.aa, read, crcInit: Self.crcInit, counter: 1)
        // The peripheral's answer, resent once because the central's NESN did not acknowledge it.
        let response: [UInt8] = [0x02 | 1 << 2, 6, 2, 0, 4, 0, 0x0B, 0x2A]
        h.send(ms: 32.8, aa: Self.aa, response, crcInit: Self.crcInit, counter: 1, direction: .peripheralToCentral)
        h.send(ms: 62.5, aa: Self.aa, AirHarness.empty(sn: 1, nesn: 0), crcInit: Self.crcInit, counter: 2)
        h.send(ms: 62.8, aa: Self.aa, response, crcInit: Self.crcInit, counter: 2, direction: .peripheralToCentral)
        let model = h.finish()
        let c = try! #require(model.connections.first)
        let air = try! #require(c.airStatistics)
        #expect(air.crcErrors == 1 && air.retransmissions == 1)
        #expect(air.events == 3 && air.eventsWithData == 1)
        #expect(c.attCounts == [0x0A: 1, 0x0B: 1])
        #expect(c.transactions.completed == 1)
    }

    @Test("noise on a stray access address opens no link; a missed CONNECT_IND without CRC checks needs six packets in three events")
    func implicitEvidence() {
        let h = AirHarness(.leLL)
        h.send(ms: 0, aa: 0x1447_D714, AirHarness.empty(sn: 0, nesn: 0), crcInit: 0)
        h.send(ms: 40, aa: 0x1447_D714, AirHarness.empty(sn: 1, nesn: 0), crcInit: 0, channel: 9)
        for k in 0..<3 { Self.event(h, ms: 100 + Double(k) * 45, counter: 0, channel: UInt8(10 + k)) }
        let model = h.finish()
        #expect(model.connections.count == 1)
        let c = try! #require(model.connections.first)
        #expect(c.air?.accessAddress == Self.aa && c.implicitStart)
        #expect(c.parameters?.interval == 36)  // 45 ms from the events' spacing
    }
}
