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

    /// Requests waiting for their response: few at once, matched by identifier and direction.
    var pending: [Pending] = []

    struct Pending: Sendable, Equatable {
        var identifier: UInt8
        /// Our host sent the request.
        var sent: Bool
        var mtu: Int
        /// Channels asked for; 0 for a reconfiguration.
        var channels: Int
    }

    /// At most this many requests wait for responses; older ones are forgotten (never answered).
    static let maximumPending = 8

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
            remember(Pending(identifier: signal.identifier, sent: sent, mtu: Int(mtu), channels: sourceCIDs.count))
            return nil
        case .creditBasedReconfigureRequest(let mtu, _, _):
            remember(Pending(identifier: signal.identifier, sent: sent, mtu: Int(mtu), channels: 0))
            return nil
        case .creditBasedConnectionResponse(let mtu, _, _, let result, let destinationCIDs):
            guard let request = answer(signal.identifier, responseSent: sent), request.channels > 0 else { return nil }
            let opened = destinationCIDs.reduce(0) { $0 + ($1 == 0 ? 0 : 1) }
            requested += request.channels
            self.opened += opened
            if opened > 0 {
                setMTU(request.mtu, sentByHost: request.sent)
                setMTU(Int(mtu), sentByHost: sent)
            }
            return (.enhancedATTBearers(requested: request.channels, opened: opened, result: result, mtu: self.mtu),
                    request.sent)
        case .creditBasedReconfigureResponse(let result):
            guard let request = answer(signal.identifier, responseSent: sent), request.channels == 0 else { return nil }
            if result == 0 { setMTU(request.mtu, sentByHost: request.sent) }
            return (.enhancedATTReconfigured(result: result, mtu: self.mtu), request.sent)
        default:
            return nil
        }
    }

    mutating func remember(_ request: Pending) {
        pending.removeAll { $0.identifier == request.identifier && $0.sent == request.sent }
        if pending.count >= Self.maximumPending { pending.removeFirst() }
        pending.append(request)
    }

    /// The request a response answers: same identifier, sent the other way.
    mutating func answer(_ identifier: UInt8, responseSent: Bool) -> Pending? {
        guard let i = pending.firstIndex(where: { $0.identifier == identifier && $0.sent != responseSent }) else {
            return nil
        }
        return pending.remove(at: i)
    }

    mutating func setMTU(_ mtu: Int, sentByHost: Bool) {
        if sentByHost { hostMTU = mtu } else { peerMTU = mtu }
    }
}
