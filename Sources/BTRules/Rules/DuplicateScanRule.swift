import BTWire
import BTCapture
import BTTrack

/// BTL002: scanning with duplicate filtering off; severity rises with duration.
public struct DuplicateScanRule: Rule {
    public static let description = RuleDescription(
        id: "BTL002", name: "duplicate-scan", title: "Scanning with duplicate filtering off",
        category: .scanning, defaultSeverity: .warning,
        rationale: "Without duplicate filtering the controller reports every advertisement it hears, so the host wakes up for each one — often tens of reports per second per device — instead of once per device. The CPU and the HCI transport stay busy for as long as the scan runs.",
        coreBluetooth: "leave CBCentralManagerScanOptionAllowDuplicatesKey at false (the default) unless the app must track RSSI or advertising changes continuously, and then scan only briefly.",
        android: "use ScanSettings with SCAN_MODE_LOW_POWER or BALANCED, setCallbackType(CALLBACK_TYPE_FIRST_MATCH) and ScanFilters so the controller filters; stop the scan when the device is found.",
        options: [
            RuleOption("minimum_seconds", 5, unit: "s", "Shorter sessions are not judged (stacks toggle scanning around connections)."),
            RuleOption("minimum_rate", 1, unit: "reports/device/s", "Reports per device per second that show the controller is not filtering: below it the cost is small whatever the setting."),
            RuleOption("warning_seconds", 10, unit: "s", "Duration from which the finding is a warning (info before)."),
            RuleOption("error_seconds", 60, unit: "s", "Duration from which the finding is an error."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 2), .triggers("beacons", findings: 2), .clean("heart-rate-session")]
    )

    public init() {}

    /// The duplicate-filter setting alone is weak evidence — Android sets it off for all its clients and
    /// coalesces in the host — so the rule also asks for the cost to show: a session long enough, and the
    /// controller actually reporting each device again and again.
    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        // Sessions are told apart by their order among the reported ones on their controller.
        var repeats = RepeatNumbering()
        return model.scans.filter { !$0.filterDuplicates }.compactMap { s in
            let endTime = s.end?.timestamp ?? model.endTime
            let seconds = Double(endTime.nanoseconds - s.start.timestamp.nanoseconds) / 1e9
            let rate = s.uniqueDevices > 0 && seconds > 0 ? Double(s.reports) / Double(s.uniqueDevices) / seconds : 0
            guard seconds >= context.option("minimum_seconds"), rate >= context.option("minimum_rate") else { return nil }
            let severity: Severity = seconds >= context.option("error_seconds") ? .error
                : seconds >= context.option("warning_seconds") ? .warning : .info
            let perDevice = rate
            var records = [s.start]
            if let end = s.end { records.append(end) }
            return Finding(
                rule: Self.description, severity: severity, controller: s.controller,
                discriminator: repeats.discriminator(key: "hci\(s.controller)"), start: s.start.timestamp,
                end: endTime, records: records,
                message: "Scanned \(RuleText.seconds(endTime.nanoseconds - s.start.timestamp.nanoseconds)) with duplicate filtering off: \(Plural.of(s.reports, "report")) from \(Plural.of(s.uniqueDevices, "device")), \(DecimalText.fixed(perDevice, fractionDigits: 1)) reports per device per second.")
        }
    }
}
