import BTWire
import BTDecode

/// The L2CAP channels a link opens by signalling (Core Vol 3 Part A §4.2–4.3, §4.22–4.23, §4.25–4.26): BR/EDR
/// connection-oriented channels (SDP, RFCOMM, AVDTP, ATT over BR/EDR, …) and LE credit-based channels, as
/// CoreBluetooth's `openL2CAPChannel` and Android's `createL2capChannel` open them. Enhanced ATT bearers
/// (SPSM 0x0027) are `EnhancedATTBearers`' concern.
struct L2CAPChannels: Sendable, Equatable {
    /// Requests waiting for their final response: few at once, matched by identifier and direction.
    var pending: [Pending] = []

    struct Pending: Sendable, Equatable {
        var identifier: UInt8
        var sent: Bool
        var psm: UInt16
        var channels: Int
    }

    /// At most this many requests wait for responses; older ones are forgotten (never answered).
    static let maximumPending = 8

    /// Follows one signalling command; when a final response answers a request, the timeline event for it and
    /// whether our host asked. A pending result (authentication or authorization under way) waits for the next.
    mutating func signal(_ signal: L2CAPSignal, sent: Bool) -> (kind: TimelineEvent.Kind, byHost: Bool)? {
        switch signal.command {
        case .connectionRequest(let psm, _), .leCreditBasedConnectionRequest(let psm, _, _, _, _):
            remember(Pending(identifier: signal.identifier, sent: sent, psm: psm.rawValue, channels: 1))
        case .creditBasedConnectionRequest(let spsm, _, _, _, let sources) where spsm != .eatt:
            remember(Pending(identifier: signal.identifier, sent: sent, psm: spsm.rawValue, channels: sources.count))
        case .connectionResponse(_, _, let result, _) where result != Self.pendingResult:
            return answered(signal, sent: sent, result: result) { _ in result == 0 ? 1 : 0 }
        case .leCreditBasedConnectionResponse(_, _, _, _, let result):
            return answered(signal, sent: sent, result: result) { _ in result == 0 ? 1 : 0 }
        case .creditBasedConnectionResponse(_, _, _, let result, let destinations):
            return answered(signal, sent: sent, result: result) { _ in destinations.reduce(0) { $0 + ($1 == 0 ? 0 : 1) } }
        default:
            break
        }
        return nil
    }

    /// Connection Response result 0x0001: pending, a final response follows (§4.3).
    static let pendingResult: UInt16 = 0x0001

    mutating func answered(_ signal: L2CAPSignal, sent: Bool, result: UInt16, opened: (Pending) -> Int)
        -> (kind: TimelineEvent.Kind, byHost: Bool)?
    {
        guard let i = pending.firstIndex(where: { $0.identifier == signal.identifier && $0.sent != sent }) else { return nil }
        let request = pending.remove(at: i)
        return (.l2capChannel(psm: request.psm, requested: request.channels, opened: opened(request), result: result,
                              response: signal.code.rawValue),
                request.sent)
    }

    mutating func remember(_ request: Pending) {
        pending.removeAll { $0.identifier == request.identifier && $0.sent == request.sent }
        if pending.count >= Self.maximumPending { pending.removeFirst() }
        pending.append(request)
    }
}
