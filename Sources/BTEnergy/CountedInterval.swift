import BTTrack

/// The time between two reads of one controller's activity counters (Android `0xFD59`) whose counts can be right
/// (`EnergyReport.Measured.consistent`): what a capture's total and a finding's saving take from the counters.
/// Counters that cannot be right (stale, or more radio time than the interval) measure nothing.
public struct CountedInterval: Sendable {
    /// Nanoseconds.
    public var start: Int64
    public var end: Int64
    public var txMilliseconds: UInt32
    public var rxMilliseconds: UInt32
    public var txSeconds: Double { Double(txMilliseconds) / 1000 }
    public var rxSeconds: Double { Double(rxMilliseconds) / 1000 }
    public var radioSeconds: Double { Double(UInt64(txMilliseconds) + UInt64(rxMilliseconds)) / 1000 }
    public var seconds: Double { Double(end - start) / 1e9 }

    /// The consistent intervals of `reports`, in order.
    public static func of(_ reports: [ControllerActivityReport]) -> [CountedInterval] {
        ControllerActivityReport.intervals(reports).compactMap { a, b in
            let start = a.at.timestamp.nanoseconds, end = b.at.timestamp.nanoseconds
            guard EnergyReport.Measured.consistent(tx: b.txMilliseconds, rx: b.rxMilliseconds, previous: a,
                                                   seconds: Double(end - start) / 1e9)
            else { return nil }
            return CountedInterval(start: start, end: end, txMilliseconds: b.txMilliseconds, rxMilliseconds: b.rxMilliseconds)
        }
    }
}
