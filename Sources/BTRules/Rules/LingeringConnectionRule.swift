import BTWire
import BTCapture
import BTTrack

/// BTL006: no ATT traffic for more than 30 s before the disconnect or the end of the capture, or the link kept
/// after every subscription was turned off (counted from the last ATT operation when the app went on using it).
public struct LingeringConnectionRule: Rule {
    public static let description = RuleDescription(
        id: "BTL006", name: "lingering-connection", title: "Connection kept open after the data is in",
        category: .connection, defaultSeverity: .warning,
        rationale: "An idle LE link still costs a connection event every interval on both sides (fewer with peripheral latency), and it keeps the peripheral from advertising to others or sleeping deeply. When the app has its data and nothing is subscribed, the link is pure cost.",
        coreBluetooth: "call centralManager.cancelPeripheralConnection(peripheral) when the transfer is done (after setNotifyValue(false, …) for the last subscription); reconnect later with connect(_:options:), which does not time out.",
        android: "call BluetoothGatt.disconnect() and close() when the transfer is done; keep the BluetoothDevice to reconnect later with connectGatt().",
        options: [
            RuleOption("idle_seconds", 30, unit: "s", "Idle time before the disconnect (or the capture's end) that is reported."),
            RuleOption("after_unsubscribe_seconds", 10, unit: "s", "Time kept after the last subscription was turned off (or after the last ATT operation, when the app went on reading or writing)."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 2, connection: 1), .clean("heart-rate-session")],
        scope: .link
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let idleLimit = Int64(saturating: context.option("idle_seconds") * 1e9)
        let unsubscribeLimit = Int64(saturating: context.option("after_unsubscribe_seconds") * 1e9)
        var findings: [Finding] = []
        // A link the capture joined midway whose role is unknown is not judged (its purpose is unknown too) unless
        // the phone's client drove it.
        for c in model.appConnections where (c.transport == .le || c.transport == .unknown)
            && !(c.implicitStart && c.role == .unknown && !c.clientDriven)
            && !c.hidesTraffic {
            guard let lastATT = c.lastATT else { continue }
            let endRef = c.end
            let endTime = (endRef?.timestamp ?? model.endTime).nanoseconds
            let idle = endTime - lastATT.timestamp.nanoseconds
            let how = endRef == nil ? "the end of the capture (still connected)" : "the disconnect"
            // At the limit counts: a link held until ATT's 30 s transaction timeout tears it down lingered. On the
            // air both ends of the span sit on connection events, so a whole number of intervals can meet it exactly.
            // A link with notifications or indications still on is waiting for them, not lingering: only the
            // subscription being turned off (below) makes it lingering.
            if idle >= idleLimit, !c.isSubscribed(atNanoseconds: lastATT.timestamp.nanoseconds) {
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, start: lastATT.timestamp,
                    end: Timestamp(nanoseconds: endTime), records: [lastATT] + (endRef.map { [$0] } ?? []),
                    message: "\(RuleText.connection(c)) stayed up \(RuleText.seconds(idle)) without ATT traffic before \(how).")
                    .costing(RuleCost.idleLink(c, seconds: Double(idle) / 1e9, context)))  // a prompt disconnect saves it all
                continue
            }
            // Every subscription turned off, then the link kept: measured from the later of the unsubscribe and
            // the link's last ATT operation, since an app that unsubscribed and went on reading is still using it.
            // Only a CCCD that was on can be turned off: a 0 written to one never switched on changes nothing. Its
            // characteristic's notifications or indications received before show it was on, even when the capture
            // lacks the write that turned it on (it began later, or an air sniffer missed the packet).
            var state: [UInt16: UInt16] = [:]
            var pushed: Set<UInt16> = []
            var lastOff: RecordRef?
            var lastOperation: RecordRef?
            func operation(_ r: RecordRef) {
                if r.timestamp.nanoseconds > (lastOperation?.timestamp.nanoseconds ?? .min) { lastOperation = r }
            }
            for e in c.events {
                switch e.kind {
                case .subscription(let cccd, _, let value, _):
                    // The stack's own subscriptions (Service Changed) neither keep a link nor end its wait.
                    guard c.gatt.isDataSubscription(cccd: cccd) else { operation(e.at); continue }
                    let wasOn = state[cccd].map { $0 != 0 }
                        ?? c.gatt.characteristic(containing: cccd).map { pushed.contains($0.valueHandle) } ?? false
                    state[cccd] = value
                    if value != 0 {
                        lastOff = nil
                    } else if wasOn, state.values.allSatisfy({ $0 == 0 }) {
                        lastOff = e.at
                    }
                    operation(e.at)
                case .activity(let i):
                    // Read in place: a copy of the run would retain and release its records.
                    if !c.runs[i].sent && (c.runs[i].kind == .notification || c.runs[i].kind == .indication)
                        && c.gatt.isDataValue(c.runs[i].handle) {
                        pushed.insert(c.runs[i].handle)
                    }
                    operation(c.runs[i].last)
                case .discovery(let i):
                    operation(c.discoveries[i].last)
                case .mtuExchange:
                    operation(e.at)
                default:
                    break
                }
            }
            guard let off = lastOff else { continue }
            let from = lastOperation.map { $0.timestamp.nanoseconds > off.timestamp.nanoseconds ? $0 : off } ?? off
            let kept = endTime - from.timestamp.nanoseconds
            guard kept > unsubscribeLimit else { continue }
            let message = from == off
                ? "\(RuleText.connection(c)) was kept \(RuleText.seconds(kept)) after its last subscription was turned off."
                : "\(RuleText.connection(c)) was kept \(RuleText.seconds(kept)) after its last ATT operation, with every subscription turned off \(RuleText.seconds(from.timestamp.nanoseconds - off.timestamp.nanoseconds)) before it."
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: from.timestamp,
                end: Timestamp(nanoseconds: endTime), records: (from == off ? [off] : [off, from]) + (endRef.map { [$0] } ?? []),
                message: message).costing(RuleCost.idleLink(c, seconds: Double(kept) / 1e9, context)))
        }
        return findings
    }
}
