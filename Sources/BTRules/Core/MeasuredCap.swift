import BTCapture
import BTTrack
import BTEnergy

/// A finding's saving never exceeds what the controller's own counters (Android `0xFD59`) measured over the time
/// it covers: where a capture holds them, the radio part of each saving whose span they cover is scaled down to
/// the measured radio time of that span, so that "saves 0.5 mAh" never claims more than Battery Historian shows.
struct MeasuredCap {
    struct Interval {
        var start: Int64
        var end: Int64
        var radioSeconds: Double
    }

    /// Consecutive reads of one controller, in time order.
    let intervals: [Interval]

    init(_ reports: [ControllerActivityReport]) {
        // Counters that cannot be right measure nothing: no cap there.
        intervals = CountedInterval.of(reports).map { Interval(start: $0.start, end: $0.end, radioSeconds: $0.radioSeconds) }
    }

    /// The measured radio time from `start` to `end` (each interval prorated by its overlap), or nil when the
    /// counters do not cover all of it.
    func measured(from start: Int64, to end: Int64) -> Double? {
        guard end > start, let first = intervals.first, let last = intervals.last,
              first.start <= start, last.end >= end else { return nil }
        var total = 0.0, covered: Int64 = 0
        for i in intervals where i.end > start && i.start < end {
            let overlap = min(i.end, end) - max(i.start, start)
            covered += overlap
            total += i.radioSeconds * Double(overlap) / Double(i.end - i.start)
        }
        // A gap between reads (another controller's, or a read the capture lost) leaves the span uncovered.
        return covered >= end - start ? total : nil
    }

    /// Caps each radio saving in `findings` at the measured radio time of its span, in place.
    func apply(to findings: inout [Finding]) {
        guard !intervals.isEmpty else { return }
        for i in findings.indices { apply(to: &findings[i]) }
    }

    /// Caps one finding's radio saving (findings finished one at a time, `Auditor.audit(_:file:judged:spill:finishing:)`).
    func apply(to finding: inout Finding) {
        guard !intervals.isEmpty, let cost = finding.cost, cost.phone.radioSeconds > 0,
              let measured = measured(from: finding.start.nanoseconds, to: finding.end.nanoseconds),
              cost.phone.radioSeconds > measured
        else { return }
        finding.cost = cost.radioCapped(at: measured)
    }
}
