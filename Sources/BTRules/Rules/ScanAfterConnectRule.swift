import BTWire
import BTCapture
import BTTrack

/// BTL001: scanning still enabled more than 2 s after a connection came up.
public struct ScanAfterConnectRule: Rule {
    public static let description = RuleDescription(
        id: "BTL001", name: "scan-after-connect", title: "Scanning left on after connecting",
        category: .scanning, defaultSeverity: .warning,
        rationale: "While scanning, the controller listens on the advertising channels for the scan window of every scan interval, competing with the connection for radio time and keeping the receiver on. Once the app has found and connected to its peripheral, every further scan window is spent energy with nothing to gain.",
        coreBluetooth: "call centralManager.stopScan() as soon as didDiscover finds the peripheral, before connect(_:options:); to reconnect later use retrievePeripherals(withIdentifiers:) and connect directly.",
        android: "call BluetoothLeScanner.stopScan(callback) in onScanResult before BluetoothDevice.connectGatt(); for reconnection keep the BluetoothDevice (or getRemoteDevice(address)) instead of scanning again.",
        options: [RuleOption("grace_seconds", 2, unit: "s", "How long scanning may continue after the connection comes up.")],
        fixtures: [.triggers("wasteful-central", findings: 2, connection: 1), .clean("heart-rate-session"),
                   .clean("fragmented-acl")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        let grace = Int64(saturating: context.option("grace_seconds") * 1e9)
        var findings: [Finding] = []
        var repeats = RepeatNumbering()
        for c in model.connections where c.transport == .le && !c.implicitStart {
            let up = c.start.timestamp.nanoseconds
            for s in model.scans where s.controller == c.controller && s.start.timestamp.nanoseconds <= up {
                let endTime = (s.end?.timestamp ?? model.endTime).nanoseconds
                guard endTime > up else { continue }
                let after = endTime - up
                guard after > grace else { continue }
                let stillOn = s.end == nil ? " and was still on when the capture ended" : ""
                var records = [s.start, c.start]
                if let end = s.end { records.append(end) }
                findings.append(Finding(
                    rule: Self.description, controller: c.controller, connection: c,
                    discriminator: repeats.discriminator(key: "\(c.id)"), start: c.start.timestamp, end: Timestamp(nanoseconds: endTime), records: records,
                    message: "Scanning (\(s.isActive ? "active" : "passive"), duty cycle \(Int(saturating: (s.dutyCycle * 100).rounded())) %) continued \(RuleText.seconds(after)) after \(RuleText.connection(c)) came up\(stillOn).")
                    // Saved: the scan's duty cycle over all the time it ran with the link up (the grace only
                    // decides what is reported).
                    .costing(RuleCost.scanning(s, seconds: Double(after) / 1e9, context)))
            }
        }
        return findings
    }
}
