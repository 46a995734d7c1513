import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// BTL014: the app started its scan more often than Android allows (5 starts in 30 s) or the work needs.
/// Counts the app's logical scans (`AppScan`): the stack's stop and restart around a connection, or a
/// re-programming for other clients, is not a new start.
public struct ScanChurnRule: Rule {
    public static let description = RuleDescription(
        id: "BTL014", name: "scan-churn", title: "Scan started too often",
        category: .scanning, defaultSeverity: .warning,
        rationale: "Android refuses an app's sixth scan start within 30 s: the scan then silently delivers nothing (or onScanFailed reports SCAN_FAILED_SCANNING_TOO_FREQUENTLY), so the app misses the device it looks for. Every start and stop also re-programs the controller's scan and its offloaded filters, waking the host and the controller each time.",
        coreBluetooth: "start one scan and keep it running until the peripheral is found (CoreBluetooth coalesces duplicate scans); to refresh results use CBCentralManagerScanOptionAllowDuplicatesKey briefly instead of stopping and starting again.",
        android: "start the scan once with the ScanFilters and ScanSettings the app needs and stop it when done; never restart it in a loop to refresh results (use CALLBACK_TYPE_ALL_MATCHES or a longer scan instead). Android allows at most 5 startScan() calls per app in 30 s.",
        options: [
            RuleOption("maximum_starts", 5, "Scan starts allowed within the window (Android's limit is 5 in 30 s)."),
            RuleOption("window_seconds", 30, unit: "s", "The sliding window the starts are counted in."),
        ],
        fixtures: [.triggers("android-scan-churn", findings: 1), .clean("heart-rate-session"), .clean("wasteful-central")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        // At least one start: the window is judged from the start that many before (a config may say anything).
        let maximum = max(1, Int(saturating: context.option("maximum_starts")))
        let window = max(0, Int64(saturating: context.option("window_seconds") * 1e9))
        var findings: [Finding] = []
        // Each start of the app's scans: an Android client's every start (its filter added again), while the
        // restarts that keep a scan going without clients (the stack's schedule) are one start.
        var byController: [UInt16: [Start]] = [:]
        // iOS's Bluetooth server brings its scans up after an HCI Reset (Bluetooth turned on, a controller
        // restart), with no scan clients to tell them from the app's: those starts are the stack's. (Android's own
        // scans are filtered clients, told apart already.)
        let android = model.platform.platform == .android
        func bringUp(_ r: RecordRef) -> Bool {
            !android && model.controllerResets.contains { $0.controller == r.controller && r.timestamp >= $0.timestamp
                && r.timestamp - $0.timestamp <= Self.bringUp }
        }
        // Without clients, a scan that takes up again at once the parameters of the one before the last (the stack
        // returning to its own scan when another stopped) resumes it: no start.
        var previous: [UInt16: (older: AppScan?, last: AppScan?)] = [:]
        // Nearly always one controller: its starts grow without being copied.
        if let first = model.appScans.first { byController[first.controller, default: []].reserveCapacity(model.appScans.count) }
        for s in model.appScans where !bringUp(s.start) {
            if s.attribution == .controllerSession {
                let (older, last) = previous[s.controller] ?? (nil, nil)
                previous[s.controller] = (last, s)
                if let older, let last, let stopped = last.endTimestamp, s.start.timestamp >= stopped,
                   s.start.timestamp - stopped <= AppScan.restartGap,
                   model.scans[s.pricedSession].scansAlike(model.scans[older.pricedSession]) {
                    continue
                }
                byController[s.controller, default: []].append(Start(start: s.start, endTimestamp: s.endTimestamp))
            } else {
                for (k, piece) in s.pieceStarts.enumerated() {
                    let last = k == s.pieceStarts.count - 1
                    byController[s.controller, default: []].append(Start(start: piece, endTimestamp: last ? s.endTimestamp : nil))
                }
            }
        }
        // Each connection: when it was asked for (or came up) and when it ended.
        let links: [(asked: Int64, ended: Int64)] = model.links.map { c in
            ((c.connectRequestedTime ?? c.start.timestamp).nanoseconds, (c.end?.timestamp ?? model.endTime).nanoseconds)
        }
        for (controller, scans) in byController.sorted(by: { $0.key < $1.key }) {
            // A scan stopped to connect (a connection asked for around its end) and resumed when that connection
            // ended is the stack or the app pausing it for the connection, not a new start.
            // Places in `scans`: a capture of tens of thousands of scans would otherwise hold them twice.
            var starts = StartsKept(scans: scans)
            for (i, s) in scans.enumerated() {
                let begins = s.start.timestamp.nanoseconds
                if i > 0, let previousEnd = scans[i - 1].endTimestamp?.nanoseconds,
                   links.contains(where: { $0.asked >= previousEnd.minusSaturating(Self.restartGap) && $0.asked <= previousEnd.plusSaturating(2 * Self.restartGap)
                       && $0.asked <= begins && begins <= $0.ended.plusSaturating(2 * Self.restartGap) }) {
                    continue
                }
                starts.places.append(Int32(i))
            }
            // Bursts: maximal runs in which some window holds more than `maximum` starts; one finding each.
            var i = 0
            while i < starts.count {
                var j = i
                while j + 1 < starts.count && starts[j + 1].start.timestamp.nanoseconds.minusSaturating(starts[i].start.timestamp.nanoseconds) <= window { j += 1 }
                guard j - i + 1 > maximum else { i += 1; continue }
                // Extend while later starts keep the rate above the limit.
                var last = j
                while last + 1 < starts.count,
                      starts[last + 1].start.timestamp.nanoseconds.minusSaturating(starts[last + 1 - maximum].start.timestamp.nanoseconds) <= window {
                    last += 1
                }
                let burst = Array(starts[i...last])
                let span = burst[burst.count - 1].start.timestamp.nanoseconds.minusSaturating(burst[0].start.timestamp.nanoseconds)
                let why = model.platform.platform == .android
                    ? "Android refuses the sixth start within 30 s, and every restart re-programs the controller."
                    : "every restart re-programs the controller and wakes the host."
                let p = context.energy.profile.phone
                // Each start and stop re-programs the controller: commands and their completions keep the host
                // awake for about the hold time per start.
                let hostMC = p.awakeMilliamps * p.holdSeconds * Double(burst.count - 1)
                findings.append(Finding(
                    rule: Self.description, controller: controller, discriminator: "\(burst[0].start.number)",
                    start: burst[0].start.timestamp, end: burst[burst.count - 1].start.timestamp,
                    records: burst.prefix(8).map(\.start),
                    message: "The app started scanning \(burst.count) times in \(RuleText.seconds(span)) (more than \(maximum) in \(RuleText.seconds(window))): \(why)")
                    .costing(FindingCost(phone: RadioCost(radioSeconds: 0, chargeMC: hostMC, lowMC: hostMC * 0.1 / p.holdSeconds,
                                                          highMC: hostMC * 3 / p.holdSeconds), hostMC: hostMC)))
                i = last + 1
            }
        }
        return findings
    }

    /// Scan starts this soon after an HCI Reset are the stack bringing the controller up.
    static let bringUp: Duration = .seconds(10)

    /// One start of the app's scan, and when that scan stopped (nil: it went on).
    struct Start {
        var start: RecordRef
        var endTimestamp: Timestamp?
    }

    /// The starts that count, by their places among all the starts.
    struct StartsKept: RandomAccessCollection {
        let scans: [Start]
        var places: [Int32] = []
        var startIndex: Int { 0 }
        var endIndex: Int { places.count }
        subscript(i: Int) -> Start { scans[Int(places[i])] }
    }

    /// A connection requested within this of a scan's end (before: 1 s, after: 2 s) is why it stopped.
    static let restartGap: Int64 = 1_000_000_000
}
