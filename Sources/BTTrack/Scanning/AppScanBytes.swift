import BTWire
import BTCapture

/// The app's scans in start order, as the model holds them (set aside as they are built by the batch commands:
/// `TrackerOptions.scanSessionSpillDirectory`).
public typealias AppScanList = SetAsideArray<AppScan>

/// An app scan as bytes in a `Spill` (`AppScanList`): its plain fields, then the session indexes it covered and
/// those programmed for it when they are lists rather than ranges, then its pieces' starts.
struct AppScanBytes {
    var controller: UInt16
    var attribution: AppScan.Attribution
    var flags: Flags
    var client: ScanClient?
    var start: RecordRef
    var end: RecordRef?
    var endTimestamp: Timestamp?
    var dutyCycle: Double
    var reports: Int
    var pricedSession: Int
    var received: AppScan.Received
    var sessions: Indexes
    var programmed: Indexes
    var pieceCount: Int32

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let isActive = Flags(rawValue: 1 << 0)
        static let parametersKnown = Flags(rawValue: 1 << 1)
        static let filterDuplicates = Flags(rawValue: 1 << 2)
    }

    /// A `SessionIndexes`: its range, or how many indexes its list holds (written after the head).
    struct Indexes {
        var lower: Int32
        var upper: Int32
        var listCount: Int32
        var isList: Bool

        init(_ indexes: SessionIndexes) {
            if let range = indexes.range {
                (lower, upper, listCount, isList) = (range.lower, range.upper, 0, false)
            } else {
                (lower, upper, listCount, isList) = (0, 0, Int32(indexes.count), true)
            }
        }
    }

    init(_ s: AppScan) {
        controller = s.controller
        attribution = s.attribution
        var flags: Flags = []
        if s.isActive { flags.insert(.isActive) }
        if s.parametersKnown { flags.insert(.parametersKnown) }
        if s.filterDuplicates { flags.insert(.filterDuplicates) }
        self.flags = flags
        client = s.client
        start = s.start
        end = s.end
        endTimestamp = s.endTimestamp
        dutyCycle = s.dutyCycle
        reports = s.reports
        pricedSession = s.pricedSession
        received = s.received
        sessions = Indexes(s.sessions)
        programmed = Indexes(s.programmed)
        pieceCount = Int32(s.pieceStarts.count)
    }
}

extension AppScan: SetAsideValue {
    public static func append(_ s: AppScan, to spill: Spill) -> Int64 {
        let at = spill.append(plain: AppScanBytes(s))
        for indexes in [s.sessions, s.programmed] where indexes.range == nil {
            spill.append(plain: indexes.map(Int32.init))
        }
        spill.append(plain: Array(s.pieceStarts))
        return at
    }

    public static func read(from spill: Spill, at offset: Int64) -> AppScan {
        var cursor = spill.cursor(at: offset)
        let head = cursor.next(AppScanBytes.self)
        func indexes(_ i: AppScanBytes.Indexes) -> SessionIndexes {
            guard i.isList else { return SessionIndexes(lower: i.lower, upper: i.upper) }
            return SessionIndexes(cursor.next(Int32.self, count: Int(i.listCount)).map(Int.init))
        }
        let sessions = indexes(head.sessions), programmed = indexes(head.programmed)
        let pieces = cursor.next(RecordRef.self, count: Int(head.pieceCount))
        var scan = AppScan(controller: head.controller, attribution: head.attribution, client: head.client, start: head.start,
                           end: head.end, endTimestamp: head.endTimestamp, sessions: sessions, programmed: programmed,
                           isActive: head.flags.contains(.isActive), dutyCycle: head.dutyCycle,
                           parametersKnown: head.flags.contains(.parametersKnown),
                           filterDuplicates: head.flags.contains(.filterDuplicates), reports: head.reports,
                           pricedSession: head.pricedSession)
        scan.received = head.received
        scan.pieceStarts = PieceStarts(pieces)
        return scan
    }
}
