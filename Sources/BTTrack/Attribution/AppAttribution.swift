import BTWire
import BTCapture

/// Which app each scan and link of a capture was, from the Android bug report the capture came with
/// (`BugReportApps`): the report's per-app scans are matched to the controller's scan clients (APCF filters)
/// or, on a controller without them, its scan sessions, by start time (once the report's local clock is put
/// on the capture's, `ClockBasis`), filtered or not, and duration; its GATT clients' connections to the links
/// by peer address and time. What cannot be matched keeps the capture's own evidence (the all-pass filter, the
/// OS's links) or stays unattributed, with the reason.
public struct AppAttribution: Sendable {
    /// One scan of the controller: a scan client's lifetime (an APCF filter from add to delete), or a scan
    /// session on a controller that tracks no clients.
    public struct Scan: Sendable {
        public var controller: UInt16
        /// Index into `CaptureModel.scanClients`, or nil for a session.
        public var client: Int?
        /// Index into `CaptureModel.scans` for a session, or the first session the client covered.
        public var session: Int?
        public var start: RecordRef
        public var end: Timestamp?
        /// The all-pass filter (unfiltered scans), a filtered client, or unknown (a session).
        public var allPass: Bool?
        public var filterIndex: UInt8?
        /// Advertising reports the host received during it (the client's lifetime).
        public var reports: Int
        public var owner: Owner
        /// The report's scans matched to it (app, index into that app's scans).
        public var matched: [ReportScanRef] = []

        public func duration(captureEnd: Timestamp) -> Int64 {
            max(0, (end ?? captureEnd).nanoseconds.minusSaturating(start.timestamp.nanoseconds))
        }
    }

    /// One scan the report lists: the app's entry (`BugReportApps.scanners`) and the scan's index in it.
    public struct ReportScanRef: Sendable, Equatable {
        public var app: Int
        public var scan: Int
    }

    /// A report scan that matched nothing in the capture, and why.
    public struct Unmatched: Sendable {
        public var ref: ReportScanRef
        public var reason: String
    }

    /// One app's figures: what the report says, and what btlens matched, within the capture's span.
    public struct AppFigures: Sendable {
        public var name: String
        public var uid: Int?
        public var filtered: Bool
        public var reportStarted: Int
        public var reportStopped: Int
        public var reportTotalMs: Int64?
        public var reportResults: Int?
        /// The report's kept scans (last and ongoing) that lie within the capture's span.
        public var keptInSpan = 0
        public var keptInSpanMs: Int64 = 0
        public var keptInSpanResults = 0
        /// Those matched to the capture, and the capture's figures for them.
        public var matched = 0
        public var matchedMs: Int64 = 0
        public var matchedReports = 0
        /// Its GATT connections the report lists, and those matched to a link.
        public var connections = 0
        public var matchedLinks = 0
    }

    public var report: BugReportApps
    public var clock: ClockBasis
    public var scans: [Scan]
    /// Owners of `CaptureModel.links`, by index.
    public var linkOwners: [Owner]
    /// Link ids (`LinkSummary.id`) of `linkOwners`, for findings that name a link by id.
    public var linkIDs: [Int]
    public var apps: [AppFigures]
    public var unmatched: [Unmatched]
    /// Report scans left out as outside the capture's span.
    public var outsideSpan = 0
    /// What the reader must know about the attribution, once.
    public var notes: [String]

    /// The owner of the link with this id (`FindingConnection.id`).
    public func linkOwner(id: Int) -> Owner? {
        linkIDs.firstIndex(of: id).map { linkOwners[$0] }
    }

    /// The owner of the scan that fits `start…end` on `controller` best (the largest share of their union in
    /// common): a scan finding's. `preferring`: an app whose overlapping scans come first (`--app`).
    public func scanOwner(controller: UInt16, start: Timestamp, end: Timestamp, captureEnd: Timestamp, preferring app: String? = nil) -> Owner? {
        let from = start.nanoseconds, to = max(end.nanoseconds, start.nanoseconds + 1)
        func fit(_ s: Scan) -> Double {
            let a = s.start.timestamp.nanoseconds, b = max((s.end ?? captureEnd).nanoseconds, a + 1)
            let common = min(b, to) - max(a, from)
            guard common > 0 else { return 0 }
            return Double(common) / Double(max(b, to) - min(a, from))
        }
        let mine = scans.filter { $0.controller == controller }
        if let app, let best = mine.filter({ $0.owner.includes(app) }).max(by: { fit($0) < fit($1) }), fit(best) > 0 {
            return best.owner
        }
        guard let best = mine.max(by: { fit($0) < fit($1) }), fit(best) > 0 else { return nil }
        return best.owner
    }

    /// Every app the report names with a scan or a connection.
    public var appNames: [String] { apps.map(\.name) }

    /// Matching tolerances: the report prints whole seconds (the start lies within the second after), and the
    /// stack programs the controller within milliseconds of the app's call.
    public enum Tolerance {
        /// A controller start this far from the report's second still matches.
        public static let start: Int64 = 1_500_000_000
        /// A start the report only estimates (Android 7–9's scan in progress: the report's time less the
        /// duration so far) lies before it by up to the time dumpstate took to reach Bluetooth.
        public static let estimatedStart: Int64 = 120_000_000_000
        /// Durations agree within the larger of this and `durationShare` of the longer.
        public static let duration: Int64 = 1_500_000_000
        public static let durationShare = 0.05
        /// The report's times and the capture's are put together in quarter hours (every zone's offset is one).
        public static let offsetStep: Int64 = 900
        public static let maximumOffset: Int64 = 14 * 3600
        /// A pattern that overrules the zone needs this many matched starts.
        public static let patternOverClock = 2
        /// A link requested this soon after an app stopped its scan was that scan's aim (Android apps stop
        /// scanning, then `connectGatt`).
        public static let scanBeforeLink: Int64 = 2_000_000_000
        /// …or this soon after an app started a scan still on.
        public static let scanLeadingLink: Int64 = 30_000_000_000
        /// At most this many report scans and controller scans propose offsets.
        public static let proposals = 256
    }
}
