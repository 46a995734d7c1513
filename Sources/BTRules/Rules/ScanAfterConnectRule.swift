import BTWire
import BTCapture
import BTTrack
import HeapModule

/// BTL001: the app's scan still on more than 2 s after a connection came up, or run while the app was connected
/// without leading to a new connection. Judges the app's scans (`AppScan`), not the controller's: on Android the
/// scan that runs on after a connection is usually the OS's filtered background scan.
public struct ScanAfterConnectRule: Rule {
    public static let description = RuleDescription(
        id: "BTL001", name: "scan-after-connect", title: "Scanning left on after connecting",
        category: .scanning, defaultSeverity: .warning,
        rationale: "While scanning, the controller listens on the advertising channels for the scan window of every scan interval, competing with the connection for radio time and keeping the receiver on. Once the app has found and connected to its peripheral, every further scan window is spent energy with nothing to gain.",
        coreBluetooth: "call centralManager.stopScan() as soon as didDiscover finds the peripheral, before connect(_:options:); to reconnect later use retrievePeripherals(withIdentifiers:) and connect directly.",
        android: "call BluetoothLeScanner.stopScan(callback) in onScanResult before BluetoothDevice.connectGatt(); for reconnection keep the BluetoothDevice (or getRemoteDevice(address)) instead of scanning again.",
        options: [RuleOption("grace_seconds", 2, unit: "s", "How long scanning may continue after the connection comes up.")],
        fixtures: [.triggers("wasteful-central", findings: 2, connection: 1), .clean("heart-rate-session"),
                   .clean("fragmented-acl"), .clean("android-scan-churn")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] { collected(model, context: context) }

    /// Each finding as it is made: a scan left on across thousands of links makes one per span.
    public func evaluate(_ model: CaptureModel, context: RuleContext, found: (Finding) -> Void) {
        let grace = Int64(saturating: context.option("grace_seconds") * 1e9)
        let all = model.links
        // Indexes into `all`: a copy of each summary would cost as much memory as the summaries.
        // The app's LE links the capture saw start, then those up before it began, which count as up all along when
        // the phone's client drove them: indexes into `all` (a copy of each summary would cost as much memory).
        var candidates: [Int32] = [], joined: [Int32] = []
        for i in all.indices {
            let c = all[i]
            guard c.transport == .le && model.isAppLink(c) else { continue }
            if !c.implicitStart { candidates.append(Int32(i)) } else if c.clientDriven { joined.append(Int32(i)) }
        }
        let seenStarting = candidates.count
        candidates += joined
        let starts = model.linkStarts
        var upAt = LinkUpAt(all, candidates, implicitStarts: seenStarting, end: model.endTime.nanoseconds,
                            askedInOrder: LinkUpAt.inOrder(model.appScans.lazy.map(\.start.timestamp.nanoseconds)))
        var repeats = RepeatNumbering()
        for scan in model.appScans {
            let from = scan.start.timestamp.nanoseconds
            let until = (scan.endTimestamp ?? model.endTime).nanoseconds
            guard until > from else { continue }
            let session = model.scans[scan.pricedSession]
            let kind = "\(scan.isActive ? "active" : "passive"), \(Self.duty(scan))"
            // The app's links that came up during the scan: how many, the first by id that kept its summary (the
            // model keeps the first after each scan boundary whole; the rest may be known by their start alone), and
            // the smallest ids, one more than are named (the first is not named among the others).
            var cameCount = 0
            var firstCame: LinkStarts.Started?
            var smallestCame: [Int] = []
            starts.forEachStarted(controller: scan.controller, from: from, until: until) { l in
                guard l.isAppLE else { return }
                cameCount += 1
                if l.summary != nil, l.id < firstCame?.id ?? .max { firstCame = l }
                smallestCame = Self.smallest(smallestCame, adding: l.id, keeping: Self.namedConnections + 1)
            }
            if let firstCame, let firstIndex = firstCame.summary {
                let first = all[firstIndex]
                // One finding per scan span, from the first connection it outlived: no span is charged twice.
                let after = until.minusSaturating(first.start.timestamp.nanoseconds)
                guard after > grace else { continue }
                let stillOn = scan.end == nil ? " and was still on when the capture ended" : ""
                let named = smallestCame.filter { $0 != firstCame.id }.prefix(Self.namedConnections)
                let others = cameCount - 1
                let also = others == 0 ? "" : " (\(others == 1 ? "connection" : "connections") \(Self.listed(Array(named), count: others)) came up during it too)"
                var records = [scan.start, first.start]
                if let end = scan.end { records.append(end) }
                found(Finding(
                    rule: Self.description, controller: scan.controller, connection: first,
                    discriminator: repeats.discriminator(key: "\(first.id)"), start: first.start.timestamp, end: Timestamp(nanoseconds: until), records: records,
                    message: "Scanning (\(kind)\(Self.whose(scan))) continued \(RuleText.seconds(after)) after \(RuleText.connection(first)) came up\(stillOn)\(also).")
                    .costing(RuleCost.scanning(session, seconds: Double(after) / 1e9, context)))
                continue
            }
            // Started while one of the app's links was up, ran past the grace, and connected to nothing new. A scan
            // the capture shows only by its reports (no enable seen) has no start to judge.
            guard until.minusSaturating(from) > grace, scan.sessions.first.map({ !model.scans[$0].implicitStart }) ?? false,
                  !starts.any(controller: scan.controller, from: until, through: until.plusSaturating(grace)),
                  let up = upAt.first(controller: scan.controller, upAt: from)
            else { continue }
            var records = [scan.start]
            if let end = scan.end { records.append(end) }
            found(Finding(
                rule: Self.description, controller: scan.controller, connection: up,
                discriminator: repeats.discriminator(key: "\(up.id)"), start: scan.start.timestamp, end: Timestamp(nanoseconds: until), records: records,
                message: "The app scanned (\(kind)\(Self.whose(scan))) for \(RuleText.seconds(until.minusSaturating(from))) while \(RuleText.connection(up)) was up, and connected to nothing new\(scan.end == nil ? "; it was still on when the capture ended" : "").")
                .costing(RuleCost.scanning(session, seconds: Double(until.minusSaturating(from)) / 1e9, context)))
        }
    }

    /// The first of `candidates` (indexes into `all`, in order) up at a time on a controller: started before it
    /// (those from `implicitStarts` on were up before the capture began) and ended after it. Asked at times in
    /// order (`sweeping`) about candidates that started in order, it sweeps them once, a heap per controller
    /// holding those started and not yet known to have ended; otherwise it looks through them all each time.
    /// A capture of 100,000 links and as many scans is then read once, not once per scan.
    struct LinkUpAt {
        let all: LinkSummaries
        let candidates: [Int32]
        let implicitStarts: Int
        let end: Int64
        let sweeping: Bool
        /// Candidates before `next` (and every implicit start) are in `started`, by place among the candidates.
        var next = 0
        var started: [UInt16: Heap<Int32>] = [:]

        /// `askedInOrder`: whether the times asked about come in order.
        init(_ all: LinkSummaries, _ candidates: [Int32], implicitStarts: Int, end: Int64, askedInOrder: Bool) {
            self.all = all
            self.candidates = candidates
            self.implicitStarts = implicitStarts
            self.end = end
            sweeping = askedInOrder && Self.inOrder(candidates.prefix(implicitStarts).lazy.map { all[Int($0)].start.timestamp.nanoseconds })
            if sweeping {
                for k in implicitStarts..<candidates.count { started[all[Int(candidates[k])].controller, default: []].insert(Int32(k)) }
            }
        }

        static func inOrder<S: Sequence<Int64>>(_ times: S) -> Bool {
            var last = Int64.min
            for t in times { if t < last { return false }; last = t }
            return true
        }

        private func isUp(_ c: LinkSummary, controller: UInt16, at t: Int64) -> Bool {
            c.controller == controller && (c.implicitStart || c.start.timestamp.nanoseconds < t)
                && (c.end?.timestamp.nanoseconds ?? end) > t
        }

        mutating func first(controller: UInt16, upAt t: Int64) -> LinkSummary? {
            guard sweeping else {
                for i in candidates { let c = all[Int(i)]; if isUp(c, controller: controller, at: t) { return c } }
                return nil
            }
            while next < implicitStarts {
                let c = all[Int(candidates[next])]
                guard c.start.timestamp.nanoseconds < t else { break }
                started[c.controller, default: []].insert(Int32(next))
                next += 1
            }
            // Those ended by `t` are ended for every later time: gone for good.
            while let top = started[controller]?.min {
                let c = all[Int(candidates[Int(top)])]
                if (c.end?.timestamp.nanoseconds ?? end) > t { return c }
                started[controller]!.removeMin()
            }
            return nil
        }
    }

    /// Connections named in a finding before the rest are counted: a scan left on for hours outlives thousands.
    static let namedConnections = 10

    /// "#4, #5, #6", or the first ten and how many more: "#4, #5, #6, #7, #8, #9, #10, #11, #12, #13 and 31171 more".
    /// `count`: how many there are, when `ids` holds only the first (at least ten) of them.
    static func listed(_ ids: [Int], count: Int? = nil) -> String {
        let total = count ?? ids.count
        let named = ids.prefix(namedConnections).map { "#\($0)" }.joined(separator: ", ")
        return total > namedConnections ? "\(named) and \(total - namedConnections) more" : named
    }

    /// `kept` (the smallest ids so far, in order) with `id`, if it is among the `limit` smallest: a scan
    /// left on for hours outlives thousands of links, added one at a time.
    static func smallest(_ kept: [Int], adding id: Int, keeping limit: Int = namedConnections) -> [Int] {
        guard kept.count < limit || id < kept[kept.count - 1] else { return kept }
        var kept = kept
        kept.insert(id, at: kept.firstIndex { $0 > id } ?? kept.count)
        if kept.count > limit { kept.removeLast() }
        return kept
    }

    static func duty(_ scan: AppScan) -> String {
        scan.parametersKnown ? "duty cycle \(Int(saturating: (scan.dutyCycle * 100).rounded())) %" : "duty cycle unknown"
    }

    /// How the capture shows it was the app's scan, when it shows more than the controller's session.
    static func whose(_ scan: AppScan) -> String {
        switch scan.attribution {
        case .allPassFilter: ", unfiltered: Android's all-pass filter \(scan.client.map { "index \($0.filterIndex)" } ?? "")"
        case .startedWithAppScan: ", filter index \(scan.client?.filterIndex ?? 0) started with the app's unfiltered scan"
        case .controllerSession: ""
        case .bugReport: ", filter index \(scan.client?.filterIndex ?? 0), the app's by the bug report"
        }
    }
}
