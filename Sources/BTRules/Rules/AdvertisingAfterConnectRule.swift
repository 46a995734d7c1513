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
        for c in model.links where c.role == .peripheral {
            let up = c.start.timestamp.nanoseconds
            let down = (c.end?.timestamp ?? model.endTime).nanoseconds
            // Advertising that overlaps the connection by more than the grace period. When several sets do, the
            // one reported is the one most likely to be the mistake: a connectable set, or one the host turned
            // back on after a connection ended it, before a non-connectable broadcast; then the longest overlap.
            var candidate: (session: AdvertisingSession, start: Int64, end: Int64, suspect: Bool)?
            for a in model.ownAdvertising where a.controller == c.controller {
                let start = a.start.timestamp.nanoseconds
                let end = (a.end?.timestamp ?? model.endTime).nanoseconds
                guard min(end, down) - max(start, up + grace) > 0 else { continue }
                let overlap = (start: max(start, up), end: min(end, down))
                let suspect = a.isConnectable || a.resumedAfterConnection != nil
                if let best = candidate {
                    if best.suspect && !suspect { continue }
                    if best.suspect == suspect && overlap.end - overlap.start <= best.end - best.start { continue }
                }
                candidate = (a, overlap.start, overlap.end, suspect)
            }
            guard let (a, start, end, _) = candidate else { continue }
            let resumed = a.start.timestamp.nanoseconds > up
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c,
                discriminator: resumed ? "resumed" : "left-on", start: Timestamp(nanoseconds: start),
                end: Timestamp(nanoseconds: end), records: [c.start, a.start],
                message: "Advertising (set \(a.setHandle)) was on for \(RuleText.seconds(end - start)) while \(RuleText.connection(c)) was up\(resumed ? ": it was turned back on \(RuleText.seconds(a.start.timestamp.nanoseconds - up)) after the central connected" : "").")
                    .costing(RuleCost.advertising(a, seconds: Double(end - start) / 1e9, context)))
        }
        return findings
    }
}
