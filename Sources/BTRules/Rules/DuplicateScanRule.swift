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
            RuleOption("warning_seconds", 10, unit: "s", "Duration from which the finding is a warning (info before)."),
            RuleOption("error_seconds", 60, unit: "s", "Duration from which the finding is an error."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 2), .triggers("beacons", findings: 2), .clean("heart-rate-session")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        model.scans.filter { !$0.filterDuplicates }.map { s in
            let endTime = s.end?.timestamp ?? model.endTime
            let seconds = Double(endTime.nanoseconds - s.start.timestamp.nanoseconds) / 1e9
            let severity: Severity = seconds >= context.option("error_seconds") ? .error
                : seconds >= context.option("warning_seconds") ? .warning : .info
            let perDevice = s.uniqueDevices > 0 && seconds > 0 ? Double(s.reports) / Double(s.uniqueDevices) / seconds : 0
            var records = [s.start]
            if let end = s.end { records.append(end) }
            return Finding(
                rule: Self.description, severity: severity, controller: s.controller, start: s.start.timestamp,
                end: endTime, records: records,
                message: "Scanned \(RuleText.seconds(endTime.nanoseconds - s.start.timestamp.nanoseconds)) with duplicate filtering off: \(s.reports) reports from \(s.uniqueDevices) devices, \(String(format1: perDevice)) reports per device per second.")
        }
    }
}
