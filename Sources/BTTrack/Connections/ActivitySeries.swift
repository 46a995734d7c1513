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
        if intervals.count > 0 { intervals.add(gapNanoseconds: at.timestamp.nanoseconds &- last.timestamp.nanoseconds) }
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
