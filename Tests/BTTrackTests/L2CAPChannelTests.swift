import Testing
import BTWire
import BTDecode
import BTScenario
@testable import BTTrack

/// L2CAP channels opened by signalling: BR/EDR Connection Request/Response and LE credit-based connections.
@Suite("L2CAP channels")
struct L2CAPChannelTests {
    /// One command through `L2CAPChannels`: (psm, requested, opened, result, asked by the host) when it ends one.
    static func feed(_ bytes: [UInt8], into channels: inout L2CAPChannels, sent: Bool)
        -> (psm: UInt16, requested: Int, opened: Int, result: UInt16, byHost: Bool)?
    {
        guard let change = bytes.withUnsafeBytes({ channels.signal(L2CAPSignal($0), sent: sent) }),
              case .l2capChannel(let psm, let requested, let opened, let result, _) = change.kind
        else { return nil }
        return (psm, requested, opened, result, change.byHost)
    }

    static func connectionRequest(_ identifier: UInt8, psm: UInt16, scid: UInt16) -> [UInt8] {
        L2CAPFrame.signal(.connectionRequest, identifier: identifier) { $0.u16(psm); $0.u16(scid) }
    }

    static func connectionResponse(_ identifier: UInt8, result: UInt16, status: UInt16 = 0) -> [UInt8] {
        L2CAPFrame.signal(.connectionResponse, identifier: identifier) { w in
            w.u16(result == 0 ? 0x0041 : 0); w.u16(0x0040); w.u16(result); w.u16(status)
        }
    }

    @Test("BR/EDR: the final response ends a request (pending waits); a refusal carries its result")
    func brEdr() throws {
        var channels = L2CAPChannels()
        #expect(Self.feed(Self.connectionRequest(1, psm: 0x0003, scid: 0x0040), into: &channels, sent: true) == nil)
        // Pending (authentication under way), then success: one event, at the final response.
        #expect(Self.feed(Self.connectionResponse(1, result: 0x0001, status: 0x0001), into: &channels, sent: false) == nil)
        let rfcomm = try #require(Self.feed(Self.connectionResponse(1, result: 0), into: &channels, sent: false))
        #expect(rfcomm.psm == 0x0003 && rfcomm.opened == 1 && rfcomm.result == 0 && rfcomm.byHost)
        // The peer asks for AVDTP, the host refuses: security block.
        #expect(Self.feed(Self.connectionRequest(9, psm: 0x0019, scid: 0x0050), into: &channels, sent: false) == nil)
        let refused = try #require(Self.feed(Self.connectionResponse(9, result: 0x0003), into: &channels, sent: true))
        #expect(refused.psm == 0x0019 && refused.opened == 0 && refused.result == 0x0003 && !refused.byHost)
        // A response travelling the same way as the request answers nothing.
        #expect(Self.feed(Self.connectionRequest(2, psm: 0x0001, scid: 0x0042), into: &channels, sent: true) == nil)
        #expect(Self.feed(Self.connectionResponse(2, result: 0), into: &channels, sent: true) == nil)
        #expect(channels.pending.count == 1)
    }

    @Test("LE credit-based channels (L2CAP CoC) are channels; Enhanced ATT bearers are not")
    func le() throws {
        var channels = L2CAPChannels()
        let request = L2CAPFrame.signal(.leCreditBasedConnectionRequest, identifier: 3) { w in
            w.u16(0x0080); w.u16(0x0040); w.u16(512); w.u16(247); w.u16(10)
        }
        #expect(Self.feed(request, into: &channels, sent: true) == nil)
        let response = L2CAPFrame.signal(.leCreditBasedConnectionResponse, identifier: 3) { w in
            w.u16(0x0041); w.u16(512); w.u16(247); w.u16(10); w.u16(0)
        }
        let coc = try #require(Self.feed(response, into: &channels, sent: false))
        #expect(coc.psm == 0x0080 && coc.opened == 1 && coc.byHost)
        let eatt = L2CAPFrame.creditBasedConnectionRequest(identifier: 4, spsm: .eatt, mtu: 247, mps: 64, credits: 5,
                                                           sourceCIDs: [0x40])
        #expect(Self.feed(eatt, into: &channels, sent: true) == nil)
        #expect(channels.pending.isEmpty)
    }
}
