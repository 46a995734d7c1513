import BTWire
import BTDecode

/// The L2CAP channels a link opens by signalling (Core Vol 3 Part A §4.2–4.3, §4.22–4.23, §4.25–4.26): BR/EDR
/// connection-oriented channels (SDP, RFCOMM, AVDTP, ATT over BR/EDR, …) and LE credit-based channels, as
/// CoreBluetooth's `openL2CAPChannel` and Android's `createL2capChannel` open them. Enhanced ATT bearers
/// (SPSM 0x0027) are `EnhancedATTBearers`' concern.
struct L2CAPChannels: Sendable, Equatable {
    /// Requests waiting for their final response: the PSM and how many channels each asked for.
    var pending = SignalRequests<Pending>()

    struct Pending: Sendable, Equatable {
        var psm: UInt16
        var channels: Int
    }

    /// Follows one signalling command; when a final response answers a request, the timeline event for it and
    /// whether our host asked. A pending result (authentication or authorization under way) waits for the next.
    mutating func signal(_ signal: L2CAPSignal, sent: Bool) -> (kind: TimelineEvent.Kind, byHost: Bool)? {
        switch signal.command {
        case .connectionRequest(let psm, _), .leCreditBasedConnectionRequest(let psm, _, _, _, _):
            pending.add(Pending(psm: psm.rawValue, channels: 1), identifier: signal.identifier, sent: sent)
        case .creditBasedConnectionRequest(let spsm, _, _, _, let sources) where spsm != .eatt:
            pending.add(Pending(psm: spsm.rawValue, channels: sources.count), identifier: signal.identifier, sent: sent)
        case .connectionResponse(_, _, let result, _) where result != Self.pendingResult:
            return answered(signal, sent: sent, result: result, opened: result == 0 ? 1 : 0)
        case .leCreditBasedConnectionResponse(_, _, _, _, let result):
            return answered(signal, sent: sent, result: result, opened: result == 0 ? 1 : 0)
        case .creditBasedConnectionResponse(_, _, _, let result, let destinations):
            // A destination CID of 0 is a refused channel.
            return answered(signal, sent: sent, result: result, opened: destinations.reduce(0) { $0 + ($1 == 0 ? 0 : 1) })
        default:
            break
        }
        return nil
    }

    /// Connection Response result 0x0001: pending, a final response follows (§4.3).
    static let pendingResult: UInt16 = 0x0001

    mutating func answered(_ signal: L2CAPSignal, sent: Bool, result: UInt16, opened: Int)
        -> (kind: TimelineEvent.Kind, byHost: Bool)?
    {
        guard let entry = pending.answer(signal.identifier, responseSent: sent) else { return nil }
        let request = entry.request
        return (.l2capChannel(psm: request.psm, requested: request.channels, opened: opened, result: result,
                              response: signal.code.rawValue),
                entry.sent)
    }
}
