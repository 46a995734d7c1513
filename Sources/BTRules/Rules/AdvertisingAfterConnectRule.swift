import BTWire
import BTCapture
import BTTrack

/// BTL013: in the peripheral role, advertising left on (or turned back on) after a central connected.
public struct AdvertisingAfterConnectRule: Rule {
    public static let description = RuleDescription(
        id: "BTL013", name: "advertising-after-connect", title: "Advertising left on after a central connected",
        category: .advertising, defaultSeverity: .warning,
        rationale: "Advertising transmits on three channels every advertising interval. Once the central the app waited for has connected, further advertising only invites more connections and costs transmit power for the rest of the connection.",
        coreBluetooth: "call peripheralManager.stopAdvertising() once a central subscribes or connects (peripheralManager(_:central:didSubscribeTo:)), and start again when it leaves, unless the app really serves several centrals.",
        android: "call BluetoothLeAdvertiser.stopAdvertisingSet(callback) (or stopAdvertising) in BluetoothGattServerCallback.onConnectionStateChange(STATE_CONNECTED), or use AdvertisingSetParameters with a limited duration.",
        options: [RuleOption("grace_seconds", 2, unit: "s", "How long advertising may continue after the connection comes up.")],
        fixtures: [.triggers("peripheral-role", findings: 2), .clean("heart-rate-session"), .clean("wasteful-central")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let grace = Int64(saturating: context.option("grace_seconds") * 1e9)
        var findings: [Finding] = []
        for c in model.connections where c.role == .peripheral {
            let up = c.start.timestamp.nanoseconds
            let down = (c.end?.timestamp ?? model.endTime).nanoseconds
            // Advertising that overlaps the connection by more than the grace period.
            let overlapping = model.ownAdvertising.filter { a in
                guard a.controller == c.controller else { return false }
                let start = a.start.timestamp.nanoseconds
                let end = (a.end?.timestamp ?? model.endTime).nanoseconds
                return min(end, down) - max(start, up + grace) > 0
            }
            guard let a = overlapping.first else { continue }
            let start = max(a.start.timestamp.nanoseconds, up)
            let end = min((a.end?.timestamp ?? model.endTime).nanoseconds, down)
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: Timestamp(nanoseconds: start),
                end: Timestamp(nanoseconds: end), records: [c.start, a.start],
                message: "Advertising (set \(a.setHandle)) was on for \(RuleText.seconds(end - start)) while \(RuleText.connection(c)) was up\(a.start.timestamp.nanoseconds > up ? ": it was turned back on \(RuleText.seconds(a.start.timestamp.nanoseconds - up)) after the central connected" : "")."))
        }
        return findings
    }
}
