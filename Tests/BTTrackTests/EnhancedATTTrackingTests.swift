import Testing
import BTWire
import BTCapture
import BTDecode
import BTScenario
import TestSupport
@testable import BTTrack

/// ATT over an EATT bearer (L2CAP credit based channel, SPSM 0x0027) with SDUs larger than the MPS, so every
/// long PDU crosses in several K-frames: the tracker must see the same procedures as over CID 4.
@Suite("EATT tracking")
struct EnhancedATTTrackingTests {
    @Test("eatt-logger: discovery, a Read Blob chain, a write and notifications over K-frames, nothing malformed")
    func loggerOverEATT() throws {
        let h = try TrackingHarness.run(scenario: EnhancedATTLogger.name)
        #expect(h.decoder.issues.count == 0)
        let model = h.tracker.finish()
        let link = try #require(model.connections.first)
        #expect(model.connections.count == 1)
        #expect(link.disconnectReason == .connectionTerminatedByLocalHost)
        // The logger service and its characteristics were discovered over the EATT bearer.
        #expect(link.gatt.services.map(\.uuid) == [SampleProfiles.loggerService])
        let log = try #require(link.gatt.characteristics.first { $0.uuid == SampleProfiles.loggerLog })
        let stream = try #require(link.gatt.characteristics.first { $0.uuid == SampleProfiles.loggerStream })
        // 600 bytes at MTU 247: one Read (246 bytes) and two Read Blobs, each answer in up to four K-frames.
        let reads = try #require(link.usage[log.valueHandle])
        #expect(reads.reads == 1 && reads.readBlobs == 2)
        // One long read: the Read Blobs carried on the Read where its value ended.
        #expect(link.runs.contains { $0.kind == .read && $0.blobReads == 2 && $0.bytes == 600 })
        #expect(!link.runs.contains { $0.kind == .readBlob })
        // Every request was answered and paired although requests and responses travel on different CIDs.
        #expect(link.transactions.timeouts == 0 && link.transactions.unansweredAtEnd == 0)
        #expect(link.transactions.unsolicitedResponses == 0)
        #expect(link.transactions.completed == link.attCounts.filter { ATTOpcode(rawValue: $0.key).isRequest }.map(\.value).reduce(0, +))
        // Subscribed, then five 244-byte notifications, each value joined from four K-frames.
        let notified = try #require(link.usage[stream.valueHandle])
        #expect(notified.notifications == EnhancedATTLogger.notifications)
        // The last value's first 64 bytes (what is kept): more than the 59 value bytes of a first K-frame.
        let last = (0..<64).map { UInt8($0 + EnhancedATTLogger.notifications - 1) }
        #expect(notified.lastValue == last)
        #expect(link.gatt.cccdValues.values.contains(1))
        // The bearer itself: one opened by the host, MTU 247 both ways, shown in the timeline before discovery.
        #expect(link.enhancedATT.opened == 1 && link.enhancedATT.requested == 1)
        #expect(link.enhancedATT.mtu == 247)
        #expect(link.mtu == 23)  // no ATT Exchange MTU: the unenhanced bearer keeps the default
        let opened = try #require(link.events.firstIndex {
            if case .enhancedATTBearers(1, 1, 0, .some(247)) = $0.kind { return true } else { return false }
        })
        #expect(link.events[opened].byHost)
        let discovery = try #require(link.events.firstIndex { if case .discovery = $0.kind { true } else { false } })
        #expect(opened < discovery)
    }

    /// pcap linktype 187 has no direction: the credit-based request is taken for the host's and its response
    /// for the peer's, so they still pair.
    @Test("eatt-logger without directions (pcap 187): the bearer still opens, asked by the host, MTU 247")
    func loggerWithoutDirections() throws {
        let model = try track(try writeScenario(EnhancedATTLogger.name, format: .pcapH4))
        let link = try #require(model.connections.first)
        #expect(link.enhancedATT.opened == 1 && link.enhancedATT.mtu == 247)
        #expect(link.events.contains { if case .enhancedATTBearers(1, 1, 0, .some(247)) = $0.kind { $0.byHost } else { false } })
        #expect(link.runs.contains { $0.kind == .notification && $0.count == EnhancedATTLogger.notifications })
    }

    /// What a command completed: bearers (requested, opened, result, asked by the host) or a reconfiguration.
    enum Change {
        case opened(Int, Int, UInt16, Bool)
        case reconfigured(UInt16, Bool)
    }

    /// One signalling command as the tracker sees it.
    static func signal(_ bytes: [UInt8], into bearers: inout EnhancedATTBearers, sent: Bool) -> Change? {
        guard let change = bytes.withUnsafeBytes({ bearers.signal(L2CAPSignal($0), sent: sent) }) else { return nil }
        switch change.kind {
        case .enhancedATTBearers(let requested, let opened, let result, let mtu):
            #expect(mtu == bearers.mtu, "the event carries the bearers' MTU after the response")
            return .opened(requested, opened, result, change.byHost)
        case .enhancedATTReconfigured(let result, let mtu):
            #expect(mtu == bearers.mtu)
            return .reconfigured(result, change.byHost)
        default:
            Issue.record("not an EATT event: \(change.kind)")
            return nil
        }
    }

    static func reconfigure(identifier: UInt8, mtu: UInt16, cids: [UInt16]) -> [UInt8] {
        L2CAPFrame.signal(.creditBasedReconfigureRequest, identifier: identifier) { w in
            w.u16(mtu)
            w.u16(64)
            for cid in cids { w.u16(cid) }
        }
    }

    static func reconfigureResponse(identifier: UInt8, result: UInt16) -> [UInt8] {
        L2CAPFrame.signal(.creditBasedReconfigureResponse, identifier: identifier) { $0.u16(result) }
    }

    @Test("bearers: partly refused request, MTU from both sides, reconfiguration raises it, other SPSMs ignored")
    func bearerBookkeeping() throws {
        var b = EnhancedATTBearers()
        // The peer asks for three bearers with MTU 512; the host opens two (one CID 0) with MTU 100.
        let request = L2CAPFrame.creditBasedConnectionRequest(identifier: 7, spsm: .eatt, mtu: 512, mps: 64, credits: 5,
                                                              sourceCIDs: [0x40, 0x41, 0x42])
        #expect(Self.signal(request, into: &b, sent: false) == nil)
        let response = L2CAPFrame.creditBasedConnectionResponse(identifier: 7, mtu: 100, mps: 64, credits: 5, result: 0x0004,
                                                                destinationCIDs: [0x50, 0x51, 0])
        guard case .opened(3, 2, 0x0004, false)? = Self.signal(response, into: &b, sent: true) else {
            Issue.record("expected 2 of 3 opened by the peer's request")
            return
        }
        #expect(b.opened == 2 && b.requested == 3)
        #expect(b.hostMTU == 100 && b.peerMTU == 512 && b.mtu == 100)
        // A response answers only a request sent the other way with the same identifier.
        #expect(Self.signal(response, into: &b, sent: true) == nil)
        // The host raises its MTU to 247; accepted.
        #expect(Self.signal(Self.reconfigure(identifier: 9, mtu: 247, cids: [0x50, 0x51]), into: &b, sent: true) == nil)
        guard case .reconfigured(0, true)? = Self.signal(Self.reconfigureResponse(identifier: 9, result: 0), into: &b, sent: false)
        else {
            Issue.record("expected an accepted reconfiguration")
            return
        }
        #expect(b.mtu == 247)
        // A refused reconfiguration changes nothing.
        _ = Self.signal(Self.reconfigure(identifier: 10, mtu: 400, cids: [0x50]), into: &b, sent: true)
        guard case .reconfigured(0x0002, true)? = Self.signal(Self.reconfigureResponse(identifier: 10, result: 0x0002),
                                                             into: &b, sent: false)
        else {
            Issue.record("expected a refused reconfiguration")
            return
        }
        #expect(b.hostMTU == 247)
        // Credit based channels for another SPSM are not ATT bearers.
        let other = L2CAPFrame.creditBasedConnectionRequest(identifier: 11, spsm: L2CAPPSM(rawValue: 0x0080), mtu: 23, mps: 23,
                                                            credits: 1, sourceCIDs: [0x43])
        #expect(Self.signal(other, into: &b, sent: true) == nil)
        let otherResponse = L2CAPFrame.creditBasedConnectionResponse(identifier: 11, mtu: 23, mps: 23, credits: 1, result: 0,
                                                                     destinationCIDs: [0x52])
        #expect(Self.signal(otherResponse, into: &b, sent: false) == nil)
        #expect(b.opened == 2 && b.mtu == 247)
    }

    @Test("bearers: all refused, no MTU; requests never answered stay bounded")
    func refusedAndUnanswered() {
        var b = EnhancedATTBearers()
        let request = L2CAPFrame.creditBasedConnectionRequest(identifier: 1, spsm: .eatt, mtu: 247, mps: 64, credits: 5,
                                                              sourceCIDs: [0x40, 0x41])
        _ = Self.signal(request, into: &b, sent: true)
        let refused = L2CAPFrame.creditBasedConnectionResponse(identifier: 1, mtu: 0, mps: 0, credits: 0, result: 0x0005,
                                                               destinationCIDs: [0, 0])
        guard case .opened(2, 0, 0x0005, true)? = Self.signal(refused, into: &b, sent: false) else {
            Issue.record("expected both refused")
            return
        }
        #expect(b.opened == 0 && b.mtu == nil)
        for id in 1...50 {
            _ = Self.signal(L2CAPFrame.creditBasedConnectionRequest(identifier: UInt8(id), spsm: .eatt, mtu: 247, mps: 64,
                                                                    credits: 5, sourceCIDs: [0x40]),
                            into: &b, sent: true)
        }
        #expect(b.pending.count == SignalRequests<EnhancedATTBearers.Pending>.maximum)
    }
}
