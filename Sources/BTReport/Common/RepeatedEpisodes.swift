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
    static func groups<C: Collection, K: Hashable>(_ items: C, key: (C.Element) -> K?) -> EpisodeGroups {
        var slotOf: [Int32] = []
        var count: [Int32] = []
        var slot: [K: Int32] = [:]
        for item in items {
            guard let k = key(item) else { slotOf.append(-1); continue }
            if let s = slot[k] {
                slotOf.append(s)
                count[Int(s)] += 1
            } else {
                slot[k] = Int32(count.count)
                slotOf.append(Int32(count.count))
                count.append(1)
            }
        }
        // Only the groups that fold keep their items' places: the rest are each where it was.
        var members: [Int32: [Int]] = [:]
        for (i, s) in slotOf.enumerated() where s >= 0 && count[Int(s)] >= minimumRepeats { members[s, default: []].append(i) }
        return EpisodeGroups(slotOf: slotOf, members: members)
    }

    struct AdvertisingKey: Hashable {
        var controller: UInt16, set: UInt8, extended: Bool, type: String, low: Double?, high: Double?, connectable: Bool
    }

    public static func advertising<C: Collection<AdvertisingSession>>(_ sessions: C) -> EpisodeGroups {
        groups(sessions) { a in
            AdvertisingKey(controller: a.controller, set: a.setHandle, extended: a.isExtended, type: a.typeName,
                           low: a.intervalMinimumMilliseconds, high: a.intervalMaximumMilliseconds, connectable: a.isConnectable)
        }
    }

    struct ScanKey: Hashable {
        var controller: UInt16, active: Bool, known: Bool, interval: Double, window: Double, duplicates: Bool, extended: Bool
    }

    public static func scans(_ scans: ScanSessions) -> EpisodeGroups {
        groups(scans) { s -> ScanKey? in
            guard let end = s.endTimestamp, end.nanoseconds - s.start.timestamp.nanoseconds < shortScan else { return nil }
            return ScanKey(controller: s.controller, active: s.isActive, known: s.parametersKnown, interval: s.intervalMilliseconds,
                           window: s.windowMilliseconds, duplicates: s.filterDuplicates, extended: s.isExtended)
        }
    }

    /// The energy report's priced scans, folded as `scans(_:)` folds their sessions.
    public static func scans(_ scans: SetAsideArray<EnergyReport.Scan>) -> EpisodeGroups {
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

    public static func attempts(_ attempts: [FailedConnection]) -> EpisodeGroups {
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
        var rhythm = EpisodeRhythm()
        for (start, end) in zip(starts, ends) { rhythm.add(start: start, end: end) }
        return rhythm.text
    }
}

/// Items grouped as `RepeatedEpisodes` folds them, in order of each group's first item: a group's places (one
/// place for an item alone). Keeps 4 bytes per item and the places of the groups that fold, not an array per
/// item: a long capture's tens of thousands of scans are mostly alone or in a few groups.
public struct EpisodeGroups: Sequence {
    /// Per item, the group it is in (-1: alone, as is any item of a group too small to fold).
    private let slotOf: [Int32]
    /// The items of the groups that fold, by group.
    private let members: [Int32: [Int]]
    /// Every item alone (`--full`), when `slotOf` is empty.
    private let aloneCount: Int

    init(slotOf: [Int32], members: [Int32: [Int]]) {
        self.slotOf = slotOf
        self.members = members
        aloneCount = 0
    }

    private init(alone count: Int) {
        slotOf = []
        members = [:]
        aloneCount = count
    }

    /// `count` items, each alone.
    public static func alone(_ count: Int) -> EpisodeGroups { EpisodeGroups(alone: count) }

    public struct Iterator: IteratorProtocol {
        let groups: EpisodeGroups
        var position = 0

        public mutating func next() -> [Int]? {
            guard !groups.slotOf.isEmpty else {
                guard position < groups.aloneCount else { return nil }
                defer { position += 1 }
                return [position]
            }
            while position < groups.slotOf.count {
                let i = position
                position += 1
                guard let items = groups.members[groups.slotOf[i]] else { return [i] }
                if items[0] == i { return items }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(groups: self) }
}

/// Episodes added up one at a time, in order, for `RepeatedEpisodes.rhythm`: what it reads of them, not a list of
/// them (a group of tens of thousands of short scans is not copied to be described).
public struct EpisodeRhythm {
    public private(set) var count = 0
    /// Their lengths added in order.
    public private(set) var totalNanoseconds = 0.0
    public private(set) var firstStart: Int64 = 0
    private var lastStart: Int64 = 0, latestEnd: Int64 = .min

    public init() {}

    public mutating func add(start: Int64, end: Int64) {
        if count == 0 { firstStart = start }
        count += 1
        lastStart = start
        latestEnd = max(latestEnd, end)
        totalNanoseconds += Double(end - start)
    }

    /// ", 1.28 s each, every 30 s on average, 5m 2s in all"; empty for no episode.
    public var text: String {
        guard count > 0 else { return "" }
        var text = ", \(RepeatedEpisodes.length(Int64(saturating: totalNanoseconds / Double(count)))) each"
        if count > 1 { text += ", every \(RepeatedEpisodes.length((lastStart - firstStart) / Int64(count - 1))) on average" }
        return text + ", \(TimeFormat.human(.nanoseconds(latestEnd - firstStart))) in all"
    }
}
