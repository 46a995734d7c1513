import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// What long captures repeat: advertising sessions of one set with the same parameters, short scans with the same
/// parameters, connection attempts to one target that end the same way. Text reports show each such group as one
/// entry (`timeline` and `energy`; `--full` and JSON keep every item), so a five-hour capture stays readable.
public enum RepeatedEpisodes {
    /// Items alike fold into one entry from this many on.
    public static let minimumRepeats = 3
    /// A scan shorter than this that recurs is one of "repeated short scans"; longer scans are listed each.
    public static let shortScan: Int64 = 60_000_000_000

    /// Indices of `items` grouped by `key`, each group in time order, groups in order of their first item; items
    /// whose key is nil, and groups smaller than `minimumRepeats`, stay alone.
    static func groups<C: Collection, K: Hashable>(_ items: C, key: (C.Element) -> K?) -> [[Int]] {
        var order: [[Int]] = []
        var slot: [K: Int] = [:]
        for (i, item) in items.enumerated() {
            guard let k = key(item) else {
                order.append([i])
                continue
            }
            if let s = slot[k] { order[s].append(i) } else {
                slot[k] = order.count
                order.append([i])
            }
        }
        // A group too small to fold is its items, each where it was.
        var out: [[Int]] = []
        for g in order {
            if g.count >= minimumRepeats { out.append(g) } else { out += g.map { [$0] } }
        }
        return out.sorted { $0[0] < $1[0] }
    }

    struct AdvertisingKey: Hashable {
        var controller: UInt16, set: UInt8, extended: Bool, type: String, low: Double?, high: Double?, connectable: Bool
    }

    public static func advertising<C: Collection<AdvertisingSession>>(_ sessions: C) -> [[Int]] {
        groups(sessions) { a in
            AdvertisingKey(controller: a.controller, set: a.setHandle, extended: a.isExtended, type: a.typeName,
                           low: a.intervalMinimumMilliseconds, high: a.intervalMaximumMilliseconds, connectable: a.isConnectable)
        }
    }

    struct ScanKey: Hashable {
        var controller: UInt16, active: Bool, known: Bool, interval: Double, window: Double, duplicates: Bool, extended: Bool
    }

    public static func scans(_ scans: ScanSessions) -> [[Int]] {
        groups(scans) { s -> ScanKey? in
            guard let end = s.endTimestamp, end.nanoseconds - s.start.timestamp.nanoseconds < shortScan else { return nil }
            return ScanKey(controller: s.controller, active: s.isActive, known: s.parametersKnown, interval: s.intervalMilliseconds,
                           window: s.windowMilliseconds, duplicates: s.filterDuplicates, extended: s.isExtended)
        }
    }

    /// The energy report's priced scans, folded as `scans(_:)` folds their sessions.
    public static func scans(_ scans: SetAsideArray<EnergyReport.Scan>) -> [[Int]] {
        groups(scans) { s -> ScanKey? in
            let summary = s.session
            guard !summary.isOpen, s.end.nanoseconds - s.start.nanoseconds < shortScan else { return nil }
            return ScanKey(controller: summary.controller, active: summary.isActive, known: summary.parametersKnown,
                           interval: summary.intervalMilliseconds, window: summary.windowMilliseconds,
                           duplicates: summary.filterDuplicates, extended: summary.isExtended)
        }
    }

    struct AttemptKey: Hashable {
        var controller: UInt16, peer: BDAddr?, acceptList: Bool, status: UInt8, cancelled: Bool
    }

    public static func attempts(_ attempts: [FailedConnection]) -> [[Int]] {
        groups(attempts) { f in
            AttemptKey(controller: f.at.controller, peer: f.peerAddress, acceptList: f.toAcceptList, status: f.status.rawValue,
                       cancelled: f.cancelledByHost)
        }
    }

    /// "1.28 s": an episode's typical length, finer than `TimeFormat.human` below ten seconds.
    public static func length(_ nanoseconds: Int64) -> String {
        let s = Double(nanoseconds) / 1e9
        if s < 1 { return "\(Int((s * 1000).rounded())) ms" }
        if s < 10 { return DecimalText.fixed(s, fractionDigits: 2) + " s" }
        return TimeFormat.human(.nanoseconds(nanoseconds))
    }

    /// ", 1.28 s each, every 27.6 s on average, 5h 2m": the mean length, the mean time from one start to the next,
    /// and the span from the first start to the last end. Sums are taken in Double: a damaged capture's absurd
    /// timestamps must not overflow them.
    public static func rhythm(starts: [Int64], ends: [Int64]) -> String {
        guard let first = starts.first, let last = starts.last, let lastEnd = ends.max() else { return "" }
        let total = zip(starts, ends).reduce(0.0) { $0 + Double($1.1 - $1.0) }
        var text = ", \(length(Int64(saturating: total / Double(max(1, starts.count))))) each"
        if starts.count > 1 { text += ", every \(length((last - first) / Int64(starts.count - 1))) on average" }
        return text + ", \(TimeFormat.human(.nanoseconds(lastEnd - first))) in all"
    }
}
