import BTWire
import BTCapture
import BTTrack

/// BTL006: no ATT traffic for more than 30 s before the disconnect or the end of the capture, or the link kept
/// after every subscription was turned off.
public struct LingeringConnectionRule: Rule {
    public static let description = RuleDescription(
        id: "BTL006", name: "lingering-connection", title: "Connection kept open after the data is in",
        category: .connection, defaultSeverity: .warning,
        rationale: "An idle LE link still costs a connection event every interval on both sides (fewer with peripheral latency), and it keeps the peripheral from advertising to others or sleeping deeply. When the app has its data and nothing is subscribed, the link is pure cost.",
        coreBluetooth: "call centralManager.cancelPeripheralConnection(peripheral) when the transfer is done (after setNotifyValue(false, …) for the last subscription); reconnect later with connect(_:options:), which does not time out.",
        android: "call BluetoothGatt.disconnect() and close() when the transfer is done; keep the BluetoothDevice to reconnect later with connectGatt().",
        options: [
            RuleOption("idle_seconds", 30, unit: "s", "Idle time before the disconnect (or the capture's end) that is reported."),
            RuleOption("after_unsubscribe_seconds", 10, unit: "s", "Time kept after the last subscription was turned off."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 2, connection: 1), .clean("heart-rate-session")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let idleLimit = Int64(saturating: context.option("idle_seconds") * 1e9)
        let unsubscribeLimit = Int64(saturating: context.option("after_unsubscribe_seconds") * 1e9)
        var findings: [Finding] = []
        // A link the capture joined midway whose role is unknown is not judged: its purpose is unknown too.
        for c in model.connections where (c.transport == .le || c.transport == .unknown) && !(c.implicitStart && c.role == .unknown) {
            guard let lastATT = c.lastATT else { continue }
            let endRef = c.end
            let endTime = (endRef?.timestamp ?? model.endTime).nanoseconds
            let idle = endTime - lastATT.timestamp.nanoseconds
            let how = endRef == nil ? "the end of the capture (still connected)" : "the disconnect"
            if idle > idleLimit {
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, start: lastATT.timestamp,
                    end: Timestamp(nanoseconds: endTime), records: [lastATT] + (endRef.map { [$0] } ?? []),
                    message: "\(RuleText.connection(c)) stayed up \(RuleText.seconds(idle)) without ATT traffic before \(how)."))
                continue
            }
            // Every subscription turned off, then the link kept.
            let subscriptions = c.events.compactMap { e -> (RecordRef, UInt16, UInt16)? in
                if case .subscription(let cccd, _, let value, _) = e.kind { return (e.at, cccd, value) }
                return nil
            }
            var state: [UInt16: UInt16] = [:]
            var lastOff: RecordRef?
            for (at, cccd, value) in subscriptions {
                state[cccd] = value
                lastOff = state.values.allSatisfy { $0 == 0 } ? at : nil
            }
            if let off = lastOff, endTime - off.timestamp.nanoseconds > unsubscribeLimit {
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c, start: off.timestamp,
                    end: Timestamp(nanoseconds: endTime), records: [off] + (endRef.map { [$0] } ?? []),
                    message: "\(RuleText.connection(c)) was kept \(RuleText.seconds(endTime - off.timestamp.nanoseconds)) after its last subscription was turned off."))
            }
        }
        return findings
    }
}
