import BTWire
import BTCapture
import BTTrack

/// BTL007: after a disconnect, the app scans again to reach a peer it already knew instead of connecting directly.
public struct ReconnectByScanRule: Rule {
    public static let description = RuleDescription(
        id: "BTL007", name: "reconnect-by-scan", title: "Scanning again to reconnect to a known peer",
        category: .scanning, defaultSeverity: .warning,
        rationale: "A scan to find a device the app was already connected to spends scan windows (and wakes the host for every report) only to learn an address it had. A direct connection request (or a background accept-list connection) reaches the peer without the scan.",
        coreBluetooth: "keep the peripheral's identifier and call retrievePeripherals(withIdentifiers:) then connect(_:options:) — the connection request stays pending without a timeout until the device is in range.",
        android: "keep the address and call getRemoteDevice(address).connectGatt(context, /*autoConnect*/ true, callback) for a background reconnection instead of starting a new scan.",
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 2), .clean("heart-rate-session"),
                   .clean("fragmented-acl")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] { collected(model, context: context) }

    /// Each finding as it is made, in the links' start order: a soak test reconnecting by scan makes one per link.
    public func evaluate(_ model: CaptureModel, context: RuleContext, found: (Finding) -> Void) {
        evaluate(model, context: context, runLength: Self.runLength, found: found)
    }

    /// `evaluate`, the links sorted `runLength` at a time when the model has a scratch directory.
    func evaluate(_ model: CaptureModel, context: RuleContext, runLength: Int, found: (Finding) -> Void) {
        // The app's scans per controller, in time order, to find "a scan between A's end and B's start". On one
        // controller (nearly always) the model's own list, not a copy: a long capture holds tens of thousands. On
        // several, each controller's copy is set aside as the model's list is.
        var scansByController: [UInt16: AppScanList] = [:]
        if let first = model.appScans.first, model.appScans.allSatisfy({ $0.controller == first.controller }) {
            scansByController[first.controller] = model.appScans
        } else {
            for s in model.appScans { scansByController[s.controller, default: model.appScans.emptyCopy()].append(s) }
        }
        // Each scan's start and end (nanoseconds; `Spans.stillOn` when it went on), read once: the searches below
        // would otherwise read each scan they pass anew.
        let spans = scansByController.mapValues { Spans($0, directory: model.scratchDirectory, held: runLength) }
        // The links with a peer on a controller the app scanned on, sorted by (controller and peer, start, id):
        // a peer's earlier links are only looked up among its own, so nothing is kept per peer across the capture
        // (a soak test meets a new random address per link). Sorted in runs set aside on a long capture: 32 bytes
        // a link, and hundreds of thousands of links. (Runs that cannot be set aside, a full disk, end the sort
        // early; the audit's own findings, set aside in the same directory, report the disk.)
        let all = model.links
        var byPeer = SortedRuns<PeerStart>(directory: model.scratchDirectory, runLength: runLength)
        for (index, c) in all.enumerated() {
            guard let peer = c.peerAddress, scansByController[c.controller] != nil else { continue }
            byPeer.append(PeerStart(peer: UInt64(c.controller) << 48 | peer.rawValue,
                                    start: c.start.timestamp.nanoseconds, end: c.end?.timestamp.nanoseconds ?? 0,
                                    index: Int32(index), ended: c.end != nil,
                                    reconnects: c.transport == .le && model.isAppLink(c)),
                          order: { PeerStart.byPeer })
        }
        // Which links have a finding and the link each came back after; the findings are made afterwards in the
        // links' start order (ties by id), so that none waits for the others.
        var reconnections = SortedRuns<Reconnection>(directory: model.scratchDirectory, runLength: runLength)
        var peer: UInt64?
        // The latest ended link of this peer before each start, maintained in start order, from what the sort
        // carried of each: no link is read back here (a long capture's are in a file, and the peers' order would
        // read them here and there).
        var lastEnded: (index: Int32, end: Int64)?
        var pendingEnds: [(index: Int32, end: Int64)] = []  // links not yet ended at the current start time
        func next(_ entry: PeerStart) {
            pendingEnds.removeAll { p in
                guard p.end < entry.start else { return false }
                if let knownEnd = lastEnded?.end, knownEnd > p.end { return true }
                lastEnded = p
                return true
            }
            defer { if entry.ended { pendingEnds.append((entry.index, entry.end)) } }
            guard entry.reconnects, let previous = lastEnded else { return }
            reconnections.append(Reconnection(start: entry.start, link: entry.index, previous: previous.index),
                                 order: { Reconnection.byStart })
        }
        byPeer.drain(by: PeerStart.byPeer) { entry in
            if entry.peer != peer {
                peer = entry.peer
                lastEnded = nil
                pendingEnds.removeAll(keepingCapacity: true)
            }
            next(entry)
        }
        reconnections.drain(by: Reconnection.byStart) { r in
            let c = all[Int(r.link)], previous = all[Int(r.previous)]
            guard let peer = c.peerAddress, let ended = previous.end, let scans = scansByController[c.controller],
                  let spans = spans[c.controller],
                  let finding = Self.finding(c, previous: previous, ended: ended, peer: peer, scans: scans, spans: spans, model, context)
            else { return }
            found(finding)
        }
    }

    /// A link's place among its peer's links: its controller and peer as one number, its start and end
    /// (nanoseconds; `ended` says whether it has one) and its place in id order, and whether it is an LE link of
    /// the app's (one that can come back by scan; the others only end links before one).
    struct PeerStart {
        var peer: UInt64
        var start: Int64
        var end: Int64
        var index: Int32
        var ended: Bool
        var reconnects: Bool

        static func byPeer(_ a: PeerStart, _ b: PeerStart) -> Bool {
            (a.peer, a.start, a.index) < (b.peer, b.start, b.index)
        }
    }

    /// A link that came back after `previous` ended (places in id order), by its start.
    struct Reconnection {
        var start: Int64
        var link: Int32
        var previous: Int32

        static func byStart(_ a: Reconnection, _ b: Reconnection) -> Bool { (a.start, a.link) < (b.start, b.link) }
    }

    /// Links sorted in memory at once before a run is set aside (32 bytes each).
    static let runLength = 1 << 14

    /// The finding for `c` when the app scanned between `previous`'s end and `c`'s start: a scan it started after
    /// the disconnect, or one that was on at the disconnect, ran on for `minimumScanAfterDisconnect` and stopped
    /// as the app reconnected (it found the peer again).
    static func finding(_ c: LinkSummary, previous: LinkSummary, ended: RecordRef, peer: BDAddr, scans: AppScanList,
                        spans: Spans, _ model: CaptureModel, _ context: RuleContext) -> Finding? {
        // The first scan that started after the previous link ended and before this one started.
        let endedAt = ended.timestamp.nanoseconds, startedAt = c.start.timestamp.nanoseconds
        let lo = spans.firstStarted(after: endedAt)
        let scan: AppScan
        if lo < spans.count, spans.start(lo) < startedAt {
            scan = scans[lo]
        } else if let on = spans.lastStopped(before: lo, after: ended.timestamp, by: startedAt.plusSaturating(stoppedForReconnect)) {
            scan = scans[on]
        } else {
            return nil
        }
        let from = max(scan.start.timestamp, ended.timestamp)
        let scanned = max(0, min(c.start.timestamp.nanoseconds, (scan.endTimestamp ?? c.start.timestamp).nanoseconds)
            .minusSaturating(from.nanoseconds))
        // Each session read once (from a file on a long capture), the priced one among them.
        var fromPeer = 0
        var priced: ScanSession?
        for i in scan.sessions {
            let session = model.scans[i]
            fromPeer += session.reportsPerDevice.reduce(0) { $0 + ($1.address == peer ? $1.reports : 0) }
            if i == scan.pricedSession { priced = session }
        }
        let ofPeer = scan.reports > 0 ? ", \(fromPeer) of them from \(peer)" : ""
        let how = scan.start.timestamp < ended.timestamp ? "kept scanning" : "scanned again"
        return Finding(
            rule: Self.description, controller: c.controller, connection: c, start: from,
            end: c.start.timestamp, records: [ended, scan.start, c.start],
            message: "After \(RuleText.connection(previous)) ended, the app \(how) (\(RuleText.seconds(scanned)), \(Plural.of(scan.reports, "report"))\(ofPeer)) to reconnect to \(peer) as \(RuleText.connection(c)).")
                .costing(RuleCost.scanning(priced ?? model.scans[scan.pricedSession], seconds: Double(scanned) / 1e9, context))
    }

    /// The app's scans' starts and ends on one controller, in their order: in memory (16 bytes a scan) up to
    /// `held` scans, set aside in the model's scratch directory beyond (about 4 bytes a scan in memory), as the
    /// model's scans are; 10 GB of many scans has about 75,000.
    struct Spans {
        /// A scan's start and end, nanoseconds (`stillOn` for a scan still on at the end of the capture).
        struct Span: PlainSetAsideValue {
            var start: Int64
            var end: Int64
        }

        private var spans = SetAsideArray<Span>()
        /// The ends of the scans that stopped never go back in time (the usual case: one controller's scans follow
        /// one another), so a search back through them can stop at the first that stopped too early.
        private(set) var endsInOrder = true
        /// The end of a scan still on at the end of the capture.
        static let stillOn = Int64.min

        init(_ scans: AppScanList, directory: String?, held: Int) {
            self.init(scans.lazy.map { Span(start: $0.start.timestamp.nanoseconds, end: $0.endTimestamp?.nanoseconds ?? Self.stillOn) },
                      count: scans.count, directory: directory, held: held)
        }

        init(starts: [Int64], ends: [Int64], directory: String? = nil, held: Int = .max) {
            self.init(zip(starts, ends).lazy.map { Span(start: $0, end: $1) }, count: starts.count, directory: directory,
                      held: held)
        }

        private init<S: Sequence<Span>>(_ all: S, count: Int, directory: String?, held: Int) {
            if count > held, let directory { spans = SetAsideArray(spillingTo: directory) }
            var lastStop: Int64?
            for span in all {
                spans.append(span)
                guard span.end != Self.stillOn else { continue }
                if let lastStop, span.end < lastStop { endsInOrder = false }
                lastStop = span.end
            }
        }

        var count: Int { spans.count }
        /// Spans read back from the file rather than memory.
        var setAsideCount: Int { spans.setAsideCount }
        func start(_ i: Int) -> Int64 { spans[i].start }
        func end(_ i: Int) -> Int64 { spans[i].end }

        /// The first scan that started after `t` (nanoseconds): the search over the starts that a sorted array
        /// of them would make, each read as it is reached.
        func firstStarted(after t: Int64) -> Int { spans.partitioningIndex { $0.start > t } }

        /// The last scan before `lo` that stopped at least `minimumScanAfterDisconnect` after `disconnect` and by
        /// `latest` (nanoseconds). With the ends in order the search back stops at the first scan that stopped
        /// too early: a capture of direct reconnections between scans would otherwise pass every scan before each.
        func lastStopped(before lo: Int, after disconnect: Timestamp, by latest: Int64) -> Int? {
            let endedAt = disconnect.nanoseconds
            var k = lo
            while k > 0 {
                k -= 1
                let stop = end(k)
                guard stop != Self.stillOn else { continue }
                if stop > endedAt && Timestamp(nanoseconds: stop) - disconnect >= minimumScanAfterDisconnect {
                    if stop <= latest { return k }
                } else if endsInOrder {
                    return nil
                }
            }
            return nil
        }
    }

    /// A scan on at the disconnect counts when it ran on this long after it…
    static let minimumScanAfterDisconnect: Duration = .milliseconds(500)
    /// …and stopped no later than this after the reconnection came up (stopped to connect).
    static let stoppedForReconnect: Int64 = 2_000_000_000
}
