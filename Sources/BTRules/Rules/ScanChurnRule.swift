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
        // Each connection's request (or start) and end, by the first: a restart looks up those asked for around it.
        let links = Self.linksByRequest(model)
        // The starts that count, per controller: 16 bytes each (a capture of tens of thousands of scans), set aside
        // as the model sets its scans aside. Each start of the app's scans: an Android client's every start (its
        // filter added again), while the restarts that keep a scan going without clients (the stack's schedule) are
        // one start.
        var byController: [UInt16: SetAsideArray<Start>] = [:]
        // The end of each controller's previous start's scan (nil: none yet, or it went on).
        var previousEnd: [UInt16: Int64?] = [:]
        // Where each controller's last look among the links began: its scans end later and later, so the next
        // look starts from there.
        var cursors: [UInt16: LinkCursor] = [:]
        // A scan stopped to connect (a connection asked for around its end) and resumed when that connection
        // ended is the stack or the app pausing it for the connection, not a new start.
        func add(_ start: Start, controller: UInt16, end: Timestamp?) {
            defer { previousEnd[controller] = .some(end?.nanoseconds) }
            if let before = previousEnd[controller], let before,
               Self.pausedFor(links, from: cursors[controller, default: LinkCursor()].first(askedFrom: before.minusSaturating(Self.restartGap), in: links),
                              scanEnd: before, resumed: start.time) {
                return
            }
            byController[controller, default: model.appScans.emptyCopy(of: Start.self)].append(start)
        }
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
        for (index, s) in model.appScans.enumerated() where !bringUp(s.start) {
            if s.attribution == .controllerSession {
                let (older, last) = previous[s.controller] ?? (nil, nil)
                previous[s.controller] = (last, s)
                if let older, let last, let stopped = last.endTimestamp, s.start.timestamp >= stopped,
                   s.start.timestamp - stopped <= AppScan.restartGap,
                   model.scans[s.pricedSession].scansAlike(model.scans[older.pricedSession]) {
                    continue
                }
                add(Start(time: s.start.timestamp.nanoseconds, scan: Int32(index), piece: -1), controller: s.controller, end: s.endTimestamp)
            } else {
                for (k, piece) in s.pieceStarts.enumerated() {
                    let last = k == s.pieceStarts.count - 1
                    add(Start(time: piece.timestamp.nanoseconds, scan: Int32(index), piece: Int32(k)), controller: s.controller,
                        end: last ? s.endTimestamp : nil)
                }
            }
        }
        func record(_ start: Start) -> RecordRef {
            let scan = model.appScans[Int(start.scan)]
            return start.piece < 0 ? scan.start : scan.pieceStarts[Int(start.piece)]
        }
        for (controller, starts) in byController.sorted(by: { $0.key < $1.key }) {
            // Bursts: maximal runs in which some window holds more than `maximum` starts; one finding each.
            var i = 0
            while i < starts.count {
                var j = i
                while j + 1 < starts.count && starts[j + 1].time.minusSaturating(starts[i].time) <= window { j += 1 }
                guard j - i + 1 > maximum else { i += 1; continue }
                // Extend while later starts keep the rate above the limit.
                var last = j
                while last + 1 < starts.count,
                      starts[last + 1].time.minusSaturating(starts[last + 1 - maximum].time) <= window {
                    last += 1
                }
                let burst = starts[i...last]
                let first = record(burst[i])
                let span = burst[last].time.minusSaturating(burst[i].time)
                let why = model.platform.platform == .android
                    ? "Android refuses the sixth start within 30 s, and every restart re-programs the controller."
                    : "every restart re-programs the controller and wakes the host."
                let p = context.energy.profile.phone
                // Each start and stop re-programs the controller: commands and their completions keep the host
                // awake for about the hold time per start.
                let hostMC = p.awakeMilliamps * p.holdSeconds * Double(burst.count - 1)
                findings.append(Finding(
                    rule: Self.description, controller: controller, discriminator: "\(first.number)",
                    start: first.timestamp, end: Timestamp(nanoseconds: burst[last].time),
                    records: burst.prefix(8).map(record),
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

    /// One start of the app's scan: when, and which (its place among the app's scans, and of its pieces' starts;
    /// -1 for the scan's own start).
    struct Start: PlainSetAsideValue {
        var time: Int64
        var scan: Int32
        var piece: Int32
    }

    /// A connection's request (or start) and end, in nanoseconds; `link` its place in id order, which makes the
    /// order by request total.
    struct Requested: PlainSetAsideValue {
        var asked: Int64
        var ended: Int64
        var link: Int32

        static func byRequest(_ a: Requested, _ b: Requested) -> Bool { (a.asked, a.link) < (b.asked, b.link) }
    }

    /// Links sorted in memory at once before a run is set aside (24 bytes each).
    static let runLength = 1 << 14

    /// The links by when they were asked for, sorted in runs set aside on a long capture and kept as the model keeps
    /// its scans (in memory, or set aside but the latest few): hundreds of thousands of links on a soak test.
    static func linksByRequest(_ model: CaptureModel) -> SetAsideArray<Requested> {
        var sorted = SortedRuns<Requested>(directory: model.scratchDirectory, runLength: runLength)
        for (index, c) in model.links.enumerated() {
            sorted.append(Requested(asked: (c.connectRequestedTime ?? c.start.timestamp).nanoseconds,
                                    ended: (c.end?.timestamp ?? model.endTime).nanoseconds, link: Int32(index)),
                          order: { Requested.byRequest })
        }
        var links = model.appScans.emptyCopy(of: Requested.self)
        sorted.drain(by: Requested.byRequest) { links.append($0) }
        // A run that could not be set aside or read back ends the sort early; the audit's own findings, set aside in
        // the same directory, report the disk.
        return links
    }

    /// Where one controller's last look among the links (by request) began. Its scans end in time order, so each
    /// look begins at or after the last: the links are read forward, in order, from where it left off (a search
    /// from the start would read a set-aside list here and there for every scan).
    struct LinkCursor {
        var from = Int64.min
        var index = 0

        /// The first link asked for at or after `time`.
        mutating func first(askedFrom time: Int64, in links: SetAsideArray<Requested>) -> Int {
            if time < from {
                index = links.partitioningIndex { $0.asked >= time }
            } else {
                while index < links.count, links[index].asked < time { index += 1 }
            }
            from = time
            return index
        }
    }

    /// Whether a connection asked for around a scan's end (`links` by when they were asked for, from `first`, the
    /// first asked for `restartGap` before the end) explains its resuming at `resumed`: asked for from
    /// `restartGap` before the end to twice that after it (and by the resumption), and the scan resumed by twice
    /// `restartGap` after the connection ended.
    static func pausedFor(_ links: SetAsideArray<Requested>, from first: Int, scanEnd: Int64, resumed: Int64) -> Bool {
        let last = min(scanEnd.plusSaturating(2 * restartGap), resumed)
        var k = first
        while k < links.count {
            let link = links[k]
            guard link.asked <= last else { break }
            if resumed <= link.ended.plusSaturating(2 * restartGap) { return true }
            k += 1
        }
        return false
    }

    /// A connection requested within this of a scan's end (before: 1 s, after: 2 s) is why it stopped.
    static let restartGap: Int64 = 1_000_000_000
}
