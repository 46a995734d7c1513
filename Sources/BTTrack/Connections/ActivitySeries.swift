import BTWire
import BTCapture

/// Gaps between the operations of a sequence: their squares (as Doubles: they overflow 64 bits) and the
/// longest. Their sum needs no keeping: it is the span from the first operation to the last.
public struct IntervalStatistics: Sendable, Equatable {
    /// Operations seen (one more than the gaps).
    public internal(set) var count = 0
    var sumSquaredNanoseconds: Double = 0
    public internal(set) var longestNanoseconds: Int64 = 0

    public init() {}

    @inline(__always)
    mutating func add(gapNanoseconds gap: Int64) {
        sumSquaredNanoseconds += Double(gap) * Double(gap)
        if gap > longestNanoseconds { longestNanoseconds = gap }
    }

    /// Mean seconds between operations over `span` nanoseconds.
    public func meanInterval(span: Int64) -> Double? { count > 1 ? Double(span) / 1e9 / Double(count - 1) : nil }

    /// Coefficient of variation of the gaps: near 0 for a timer-driven (polling) pattern. Needs two gaps.
    public func variation(span: Int64) -> Double? {
        guard count > 2, span > 0 else { return nil }
        let n = Double(count - 1)
        let mean = Double(span) / n  // nanoseconds, as the squares are
        let variance = max(0, sumSquaredNanoseconds / n - mean * mean)
        return variance.squareRoot() / mean
    }

    public var longestGap: Duration { .nanoseconds(longestNanoseconds) }
}

/// The longest stretch of a series whose gaps each stay within `tolerance` of the one before: a timer that ran
/// for a while, even when the app paused it (or other reads came at other times) so that the whole series is not
/// regular. Kept as operations arrive, a few comparisons each.
public struct SteadyStretch: Sendable, Equatable {
    /// How much one gap may differ from the one before (a timer's jitter).
    public static let tolerance = 0.2
    /// The longest stretch: operations in it, its first and last operation's time.
    public internal(set) var count = 0
    public internal(set) var firstNanoseconds: Int64 = 0
    public internal(set) var lastNanoseconds: Int64 = 0
    // The stretch being followed.
    var currentCount = 0
    var currentFirst: Int64 = 0
    var previousGap: Int64 = 0

    public init() {}

    /// Mean seconds between the stretch's operations.
    public var meanInterval: Double? { count > 1 ? Double(lastNanoseconds &- firstNanoseconds) / 1e9 / Double(count - 1) : nil }

    /// The next operation, `gap` after the one before at `previousAt`.
    @inline(__always)
    mutating func add(gap: Int64, previousAt: Int64, at: Int64) {
        let limit = Double(previousGap) * Self.tolerance
        if currentCount >= 2 && abs(Double(gap &- previousGap)) <= limit {
            currentCount += 1
        } else {
            // A new stretch begins with this gap: the operation before it and this one.
            currentCount = 2
            currentFirst = previousAt
        }
        previousGap = gap
        if currentCount > count {
            count = currentCount
            firstNanoseconds = currentFirst
            lastNanoseconds = at
        }
    }
}

/// Every ATT operation of one kind on one attribute by one side over a whole connection, whatever other traffic
/// came between: what a timer in an app produces (a value polled every 10 s), which the timeline's runs cut
/// into pieces wherever the gaps are long or other operations interleave. Bearers of one link share a series:
/// they reach the same database, and polling a value over two bearers is still polling it.
public struct ActivitySeries: Sendable {
    public var kind: ActivityKind
    public var handle: UInt16
    /// Who sent the operations (`true`: our host).
    public var sent: Bool
    public var first: RecordRef
    public var last: RecordRef
    /// Value bytes: written or notified, or for reads returned.
    public internal(set) var bytes = 0
    public internal(set) var intervals = IntervalStatistics()
    /// The longest steady stretch of the series.
    public internal(set) var steady = SteadyStretch()
    /// Timeline runs the series was cut into.
    public internal(set) var runs = 0

    public static let citedRecords = ActivityRun.citedRecords
    /// A series is regular, for the timeline, from this many operations…
    public static let regularMinimumCount = 3
    /// …whose gaps vary at most this much (coefficient of variation): a timer with some scheduling jitter.
    public static let regularMaximumVariation = 0.35

    init(kind: ActivityKind, handle: UInt16, sent: Bool, at: RecordRef) {
        self.kind = kind
        self.handle = handle
        self.sent = sent
        first = at
        last = at
    }

    public var count: Int { intervals.count }
    var spanNanoseconds: Int64 { last.timestamp.nanoseconds &- first.timestamp.nanoseconds }
    public var meanInterval: Double? { intervals.meanInterval(span: spanNanoseconds) }
    public var intervalVariation: Double? { intervals.variation(span: spanNanoseconds) }
    public var longestGap: Duration { intervals.longestGap }
    public var duration: Duration { .nanoseconds(last.timestamp.nanoseconds &- first.timestamp.nanoseconds) }

    @inline(__always)
    mutating func add(at: RecordRef, bytes: Int) {
        if intervals.count > 0 {
            let gap = at.timestamp.nanoseconds &- last.timestamp.nanoseconds
            intervals.add(gapNanoseconds: gap)
            // Only reads are judged for steadiness (polling); other operations skip the work.
            if kind == .read { steady.add(gap: gap, previousAt: last.timestamp.nanoseconds, at: at.timestamp.nanoseconds) }
        }
        intervals.count += 1
        self.bytes &+= bytes
        last = at
    }

    /// At least `minimumCount` operations at a steady period (gaps varying at most `maximumVariation`).
    public func isRegular(minimumCount: Int = regularMinimumCount,
                          maximumVariation: Double = regularMaximumVariation) -> Bool {
        guard count >= max(3, minimumCount), let v = intervalVariation else { return false }
        return v <= maximumVariation
    }
}
