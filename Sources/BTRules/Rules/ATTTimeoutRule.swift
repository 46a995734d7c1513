import BTWire
import BTCapture
import BTTrack

/// BTL010: a request never answered within 30 s.
public struct ATTTimeoutRule: Rule {
    public static let description = RuleDescription(
        id: "BTL010", name: "att-timeout", title: "ATT request never answered",
        category: .correctness, defaultSeverity: .error,
        rationale: "ATT allows one outstanding request per client; until the response comes, no other request can be sent on that bearer. After 30 s the transaction has timed out and the specification requires the bearer to be dropped — the app stalls for 30 s and then loses the link and must reconnect and rediscover.",
        coreBluetooth: "make sure the peripheral firmware answers every Write Request and Read Request; prefer writeValue(_:for:type: .withoutResponse) for data that needs no acknowledgement, and handle didWriteValueFor errors.",
        android: "wait for onCharacteristicWrite/onCharacteristicRead before the next request (one at a time); fix the peripheral's missing response or use WRITE_TYPE_NO_RESPONSE where an acknowledgement is not needed.",
        options: [RuleOption("timeout_seconds", 30, unit: "s", "The ATT transaction timeout.")],
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 2, attributeHandle: 0x001D), .clean("heart-rate-session")],
        scope: .link
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let limit = context.option("timeout_seconds")
        var findings: [Finding] = []
        var repeats = RepeatNumbering()
        for c in model.appConnections where !c.hidesTraffic {
            for e in c.events {
                // The host's own requests, or — when we are the GATT server (peripheral role) — the peer's requests
                // our side never answered. A peer's request on a link of unknown role is not judged.
                guard e.byHost || c.role == .peripheral,
                      case .attTimeout(let request, let handle, let waited, let timedOut) = e.kind
                else { continue }
                // An indication counts when the phone's own GATT server sent it: the peer never confirmed it.
                let indication = request == .handleValueIndication
                if indication && !e.byHost { continue }
                // A link lost (supervision or LL response timeout) with the request still pending: the peer went
                // silent in the middle of a transaction, whatever the wait.
                // On the air a link that ended without LL_TERMINATE_IND went silent: lost.
                // Only a request still pending at the end: one the next request overtook was not lost with the link.
                let pendingAtEnd = c.end.map { e.at.timestamp.nanoseconds &+ Int64(saturating: waited.seconds * 1e9) >= $0.timestamp.nanoseconds.minusSaturating(1_000) } ?? false
                let lost = !timedOut && pendingAtEnd && c.wasLost
                guard waited.seconds >= limit || lost else { continue }
                // An indication still unconfirmed when the link went down (often sent a moment before) was not
                // left unconfirmed: the link ended first.
                if indication && !timedOut && waited.seconds < limit { continue }
                // One finding per request opcode and attribute: a Write Request and a Read Request left
                // unanswered on the same characteristic are two things.
                let opcode = Hex.u8(request.rawValue)
                // The phone's own server's handles are not the peer's: the peer's database cannot name them.
                let target = handle.map { indication ? " of the phone's attribute \(Hex.u16($0))" : " to " + RuleText.attribute($0, in: c) } ?? ""
                let what: String
                if indication {
                    what = "Indication\(target) sent by the phone's GATT server on \(RuleText.connection(c)) was never confirmed by the peer (\(RuleText.seconds(waited)))" + (c.end != nil && timedOut ? "; the link was then dropped." : ".") + " The peer's doing, not the app's."
                } else if lost {
                    let how = c.disconnectReason.map { "\($0), \(Hex.u8($0.rawValue))" } ?? "it went silent on the air"
                    what = "\(request)\(target) on \(RuleText.connection(c)) was still unanswered when the link was lost (\(how)) \(RuleText.seconds(waited)) later: the radio's or the peer's doing, before ATT's \(RuleText.seconds(Int64(limit * 1e9))) timeout."
                } else {
                    what = "\(request)\(target) on \(RuleText.connection(c)) was not answered for \(RuleText.seconds(waited))."
                }
                // A link lost mid-request, and a peer that never confirms the phone's indication, are the radio's
                // or the peer's doing, not the app's: info. A request of the app left hanging for the whole ATT
                // timeout stays an error.
                findings.append(Finding(
                    rule: Self.description, severity: (lost && waited.seconds < limit) || indication ? .info : nil,
                    controller: c.controller, connection: c, attributeHandle: handle,
                    discriminator: repeats.discriminator(opcode, key: "\(c.id)|\(handle.map { Hex.u16($0) } ?? "-")"),
                    start: e.at.timestamp, end: e.at.timestamp.adding(nanoseconds: Int64(saturating: waited.seconds * 1e9)),
                    records: [e.at] + (c.end.map { [$0] } ?? []),
                    message: what)
                    // Saved: the link kept waiting for the answer (a peer that hangs is better dropped at once).
                    .costing(RuleCost.idleLink(c, seconds: waited.seconds, context)))
            }
        }
        return findings
    }
}
