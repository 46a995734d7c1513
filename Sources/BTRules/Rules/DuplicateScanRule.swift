import BTWire
import BTCapture
import BTTrack

/// BTL002: a scan with duplicate filtering off that flooded the host with reports of devices it had already
/// reported, judged by the flood (redundant reports, their rate, the scan's length), not by the setting alone.
public struct DuplicateScanRule: Rule {
    public static let description = RuleDescription(
        id: "BTL002", name: "duplicate-scan", title: "Scanning with duplicate filtering off",
        category: .scanning, defaultSeverity: .warning,
        rationale: "Without duplicate filtering the controller reports every advertisement it hears, so the host wakes up for each one — often tens of reports per second per device — instead of once per device. Every report is an HCI event that wakes the host's CPU and the transport, whatever the scan's length: a few dense seconds cost as much as a long trickle.",
        coreBluetooth: "leave CBCentralManagerScanOptionAllowDuplicatesKey at false (the default) unless the app must track RSSI or advertising changes continuously, and then scan only briefly.",
        android: "give startScan() ScanFilters (service UUID, device address or name) so that controllers that support it filter in hardware (offloaded scan filters), use setCallbackType(CALLBACK_TYPE_FIRST_MATCH) and SCAN_MODE_LOW_POWER or BALANCED, and stop the scan when the device is found.",
        options: [
            RuleOption("min_redundant_reports", 100, "Reports beyond the first per device that a session must deliver to be reported."),
            RuleOption("warning_rate", 10, unit: "reports/s", "Redundant reports per second from which the finding is a warning (info below: a trickle, however long)."),
            RuleOption("error_rate", 200, unit: "reports/s", "Redundant reports per second from which the finding is an error."),
            RuleOption("error_seconds", 60, unit: "s", "Duration from which a flood at the warning rate is an error."),
        ],
        fixtures: [.triggers("wasteful-central", findings: 2), .triggers("beacons", findings: 2), .clean("heart-rate-session")]
    )

    public init() {}

    /// The duplicate-filter setting alone is weak evidence — with filters offloaded to the controller, or few
    /// advertisers around, a duplicates-off scan delivers little — so the rule counts what the host received
    /// during the app's scan: from its first start to its last stop across restarts, and only while it was the
    /// app's (an Android client's lifetime, not the OS's scan that ran on after it).
    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] { collected(model, context: context) }

    /// Each finding as it is made: one per scan, and a long capture holds thousands.
    public func evaluate(_ model: CaptureModel, context: RuleContext, found: (Finding) -> Void) {
        var repeats = RepeatNumbering()
        let android = model.platform.platform == .android
        // The host's wake-ups as `energy` prices them: the findings together save at most that.
        var hostBudget = context.energy.profile.phone.awakeMilliamps * model.hostWakeups.awakeSeconds.typical
        for s in model.appScans where !s.filterDuplicates {
            let nanoseconds = s.duration(captureEnd: model.endTime)
            let seconds = Double(nanoseconds) / 1e9
            let received = s.received
            let redundant = received.redundant
            guard Double(redundant) > context.option("min_redundant_reports") else { continue }
            // Scans are told apart by their order among the reported ones on their controller.
            let discriminator = repeats.discriminator(key: "hci\(s.controller)")
            let rate = seconds > 0 ? Double(redundant) / seconds : Double(redundant)
            let severity: Severity =
                rate >= context.option("error_rate")
                    || (rate >= context.option("warning_rate") && seconds >= context.option("error_seconds")) ? .error
                : rate >= context.option("warning_rate") ? .warning : .info
            var records = [s.start]
            if let end = s.end { records.append(end) }
            let devices = "\(received.devicesIsUpperBound ? "at most " : "")\(Plural.of(received.devices, "device"))"
            let restarts = s.pieceStarts.count > 1 ? " (one scan, started \(s.pieceStarts.count) times)" : ""
            var message = "Scanned \(RuleText.seconds(nanoseconds))\(restarts) with duplicate filtering off: \(Plural.of(received.reports, "report")) from \(devices), \(received.devicesIsUpperBound ? "at least " : "")\(Plural.of(redundant, "report")) of devices already reported (\(DecimalText.fixed(rate, fractionDigits: 1)) per second)."
            if s.attribution == .allPassFilter {
                message += " The app scanned without ScanFilters (Android's all-pass filter\(s.client.map { " index \($0.filterIndex)" } ?? "")): every advertisement reached the host."
            } else if s.sessions.contains(where: { model.scans[$0].offloadedFilters }) {
                message += " Scan filters were offloaded to the controller (Android APCF), yet these reports passed them."
            } else if android {
                message += " No scan filters were offloaded to the controller."
            }
            if android {
                message += " Android's stack scans with duplicate filtering off for every app; the app decides how many reports pass by its ScanFilters."
            }
            var finding = Finding(
                rule: Self.description, severity: severity, controller: s.controller,
                discriminator: discriminator, start: s.start.timestamp,
                end: Timestamp(nanoseconds: s.start.timestamp.nanoseconds.plusSaturating(nanoseconds)), records: records, message: message)
                .costing(RuleCost.redundantReports(received, seconds: seconds, context).hostCapped(at: hostBudget))
            hostBudget -= finding.cost?.hostMC ?? 0
            if android {
                // The app cannot turn duplicate filtering on: say what it can do.
                finding.advice = "Android: \(Self.description.android) The duplicate-filter setting is the stack's, not the app's."
            }
            found(finding)
        }
    }
}
