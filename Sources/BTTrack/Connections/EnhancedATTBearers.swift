import BTWire
import BTCapture
import BTDecode

/// The Enhanced ATT bearers of one link: L2CAP channels opened with Credit Based Connection Requests on SPSM
/// 0x0027 (Core Vol 3 Part A §4.25–4.28), each its own ATT bearer with its own transactions.
///
/// Each side announces the MTU it can receive, in the request and in the response, and may raise it later
/// with a Credit Based Reconfigure Request. The ATT_MTU of the bearers is the smaller of the two sides'
/// values (Core Vol 3 Part F §3.2.8); no ATT Exchange MTU runs on them.
public struct EnhancedATTBearers: Sendable, Equatable {
    /// Bearers opened (a refused one has destination CID 0 in the response and is not counted).
    public internal(set) var opened = 0
    /// Bearers asked for, opened or not.
    public internal(set) var requested = 0
    /// The receive MTU our host announced, and the peer's.
    public internal(set) var hostMTU: Int?
    public internal(set) var peerMTU: Int?

    /// Requests waiting for their response.
    var pending = SignalRequests<Pending>()

    struct Pending: Sendable, Equatable {
        var mtu: Int
        /// Channels asked for; 0 for a reconfiguration.
        var channels: Int
    }

    public init() {}

    /// ATT_MTU on the bearers, once both sides announced theirs.
    public var mtu: Int? {
        guard let hostMTU, let peerMTU else { return nil }
        return min(hostMTU, peerMTU)
    }

    /// Follows one LE signalling command. When a response completes a request: the timeline event for it and
    /// whether our host asked.
    mutating func signal(_ signal: L2CAPSignal, sent: Bool) -> (kind: TimelineEvent.Kind, byHost: Bool)? {
        switch signal.command {
        case .creditBasedConnectionRequest(let spsm, let mtu, _, _, let sourceCIDs) where spsm == .eatt:
            pending.add(Pending(mtu: Int(mtu), channels: sourceCIDs.count), identifier: signal.identifier, sent: sent)
            return nil
        case .creditBasedReconfigureRequest(let mtu, _, _):
            pending.add(Pending(mtu: Int(mtu), channels: 0), identifier: signal.identifier, sent: sent)
            return nil
        case .creditBasedConnectionResponse(let mtu, _, _, let result, let destinationCIDs):
            guard let entry = pending.answer(signal.identifier, responseSent: sent), entry.request.channels > 0 else { return nil }
            let request = entry.request
            let opened = destinationCIDs.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
            requested += request.channels
            self.opened += opened
            if opened > 0 {
                setMTU(request.mtu, sentByHost: entry.sent)
                setMTU(Int(mtu), sentByHost: sent)
            }
            return (.enhancedATTBearers(requested: request.channels, opened: opened, result: result, mtu: self.mtu),
                    entry.sent)
        case .creditBasedReconfigureResponse(let result):
            guard let entry = pending.answer(signal.identifier, responseSent: sent), entry.request.channels == 0 else { return nil }
            if result == 0 { setMTU(entry.request.mtu, sentByHost: entry.sent) }
            return (.enhancedATTReconfigured(result: result, mtu: self.mtu), entry.sent)
        default:
            return nil
        }
    }

    mutating func setMTU(_ mtu: Int, sentByHost: Bool) {
        if sentByHost { hostMTU = mtu } else { peerMTU = mtu }
    }
}
