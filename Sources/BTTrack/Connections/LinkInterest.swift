import BTWire
import BTCapture

/// Which judged links the capture-wide rules may still read, so that `btlens audit` keeps the summaries of those
/// alone (`LinkRetirement.Keeping.summary`) and, of every other link let go, 16 bytes (`LetGoLink`): a soak test of
/// ever new peers then costs the same memory at 10 GB as at 1 GB.
///
/// The rules say what they read in the model's terms (times around the app's scans, a peer's links together); the
/// tracker decides, for each link it lets go, whether one of them could: a summary is kept when the link
/// - is among what the audit's notes name (payloads cut short, traffic hidden, requests missed, the OS's link),
///   ran in the peripheral role (advertising left on after a central connected), or failed to be established;
/// - is the first of the app's LE links to start after a scan boundary (a scan session starting or ending, a scan
///   filter added or removed — every end of an app's scan is one), or was up across one: the first link a scan
///   outlived, or the link that was up when a scan started;
/// - was asked for while a scan ended (`scanEndAroundRequest`): a scan stopped for the connection and resumed;
/// - is to a peer that had another link (reconnections, churn), or is the latest link to a peer still remembered
///   (`GenerationalMap`): a later link to it may be a reconnection.
/// Every other link let go leaves its `LetGoLink`, which is what counting links during a scan reads.
public struct LinkInterest: Sendable {
    /// A connection asked for while a scan ended — the scan ending from `before` before the request to `after`
    /// after it (nanoseconds) — is why the scan stopped.
    public var scanEndAroundRequest: (before: Int64, after: Int64)
    /// A peer's links this close together are read together (connection churn): a peer is remembered at least
    /// this long after its latest link started (nanoseconds).
    public var peerWindow: Int64
    /// Every one of the app's links is read (churn counted from a single connection).
    public var everyAppLink: Bool

    public init(scanEndAroundRequest: (before: Int64, after: Int64), peerWindow: Int64, everyAppLink: Bool) {
        self.scanEndAroundRequest = scanEndAroundRequest
        self.peerWindow = peerWindow
        self.everyAppLink = everyAppLink
    }
}

/// What stays of a judged link let go without its summary (`LinkInterest`): enough to count it among the links
/// that came up during a scan and to number it among the others.
public struct LetGoLink: Sendable {
    public var start: Timestamp
    public var id: Int32
    public var controller: UInt16
    /// An LE link the capture saw start, the app's: what a scan rule counts.
    public var isAppLE: Bool

    /// In `CaptureModel.letGoLinks`' order: by controller, start and id.
    static func sortForModel(_ links: inout [LetGoLink]) {
        links.sort { ($0.controller, $0.start, $0.id) < ($1.controller, $1.start, $1.id) }
    }

    init(_ s: LinkSummary) {
        start = s.start.timestamp
        id = Int32(clamping: s.id)
        controller = s.controller
        isAppLE = s.transport == .le && !s.implicitStart && s.ownership.isApp
    }
}

/// The times at which the app's scans may start or end, per controller, in order: every scan session's start and
/// end (or the end its duration sets), and every change of the scan filters. A superset of the app's scans'
/// bounds (`AppScans`), sent from the reading thread (`ScanTracker.boundaries`) as they happen.
struct ScanBoundaries {
    private var byController: [UInt16: [Int64]] = [:]
    /// Every controller's, in order.
    private var all: [Int64] = []

    mutating func insert(controller: UInt16, _ t: Int64) {
        Self.insert(t, into: &byController[controller, default: []])
        Self.insert(t, into: &all)
    }

    /// Keeps `times` sorted; a time is mostly the latest, so the search starts from the end.
    private static func insert(_ t: Int64, into times: inout [Int64]) {
        if let last = times.last, last == t { return }
        if times.last.map({ $0 < t }) ?? true { times.append(t); return }
        let i = times.partitioningIndex { $0 >= t }
        if i < times.count, times[i] == t { return }
        times.insert(t, at: i)
    }

    /// Boundaries remembered (every controller's).
    var count: Int { all.count }

    /// Forgets the boundaries before `cutoff` but the latest of each controller; returns, by controller, the
    /// boundary kept of those before `cutoff` (none for a controller with none before it).
    mutating func forget(before cutoff: Int64) -> [UInt16: Int64] {
        var anchors: [UInt16: Int64] = [:]
        for (controller, times) in byController {
            let i = times.partitioningIndex { $0 >= cutoff }
            guard i > 1 else { if i == 1 { anchors[controller] = times[0] }; continue }
            anchors[controller] = times[i - 1]
            byController[controller]!.removeFirst(i - 1)
        }
        // Every controller's together are only asked about times from `cutoff` on (`any(controller: nil, in:)`).
        all.removeFirst(all.partitioningIndex { $0 >= cutoff })
        return anchors
    }

    /// The latest boundary at or before `t` on `controller` (nil: none).
    func latest(controller: UInt16, atOrBefore t: Int64) -> Int64? {
        guard let times = byController[controller] else { return nil }
        let after = times.partitioningIndex { $0 > t }
        return after > 0 ? times[after - 1] : nil
    }

    /// Whether a boundary of `controller` (any controller when nil) lies in `range`.
    func any(controller: UInt16?, in range: ClosedRange<Int64>) -> Bool {
        let times: [Int64]
        if let controller { guard let own = byController[controller] else { return false }; times = own } else { times = all }
        let i = times.partitioningIndex { $0 >= range.lowerBound }
        return i < times.count && times[i] <= range.upperBound
    }
}
