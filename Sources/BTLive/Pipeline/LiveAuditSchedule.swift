#if canImport(Glibc)
import Glibc
#endif
import BTCapture

/// When the live pipeline runs the rules over a snapshot of the tracker: after `interval` of capture time or
/// `recordInterval` records — so findings show about a second after the traffic that decides them — but, while
/// history is being caught up, no more often than `minimumGap` of wall-clock time. A due audit runs at once
/// when the input goes quiet.
struct LiveAuditSchedule {
    let interval: Int64
    let recordInterval: Int
    let minimumGap: Int64
    var lastAuditTime: Int64?
    var recordsSince = 0
    var lastWallClock: Int64 = 0
    private(set) var isDue = false

    init(options: LiveOptions) {
        interval = Self.nanoseconds(options.auditInterval)
        recordInterval = max(1, options.auditRecordInterval)
        minimumGap = Self.nanoseconds(options.minimumAuditGap)
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        d.components.seconds &* 1_000_000_000 &+ d.components.attoseconds / 1_000_000_000
    }

    /// Counts a record at capture time `t`.
    @inline(__always)
    mutating func recorded(at t: Timestamp) {
        recordsSince += 1
        guard let last = lastAuditTime else {
            lastAuditTime = t.nanoseconds
            return
        }
        if recordsSince >= recordInterval || t.nanoseconds &- last >= interval { isDue = true }
    }

    /// True when an audit should run now; `idle`: the input has nothing more for the moment.
    mutating func shouldRun(idle: Bool) -> Bool {
        guard isDue else { return false }
        return idle || Self.monotonicNow() &- lastWallClock >= minimumGap
    }

    mutating func ran(at t: Timestamp?) {
        isDue = false
        recordsSince = 0
        if let t { lastAuditTime = t.nanoseconds }
        lastWallClock = Self.monotonicNow()
    }

    static func monotonicNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}
