/// A quantity spread evenly over intervals (charge over a scan, reports over a session), summed where intervals
/// overlap: as a rate that steps where an interval starts or ends, and its running total. What the Perfetto
/// export draws as counter tracks.
struct StepCounter {
    /// Rate changes: +rate at a start, −rate at an end; zero-length intervals add their total at once.
    private var changes: [(at: Int64, rate: Double, lump: Double)] = []

    var isEmpty: Bool { changes.isEmpty }

    mutating func add(start: Int64, end: Int64, total: Double) {
        guard total.isFinite else { return }
        if end > start {
            let rate = total / (Double(end - start) / 1e9)
            changes.append((start, rate, 0))
            changes.append((end, -rate, 0))
        } else {
            changes.append((start, 0, total))
        }
    }

    /// The rate (per second) and the running total at each time the rate changes, in time order.
    func steps() -> [(at: Int64, rate: Double, cumulative: Double)] {
        // Ordered wholly, not by time alone: the same intervals give the same sums to the last bit in whatever
        // order they were added (a link drawn as it is judged adds its phases before the capture's scans).
        let sorted = changes.sorted { ($0.at, $0.rate, $0.lump) < ($1.at, $1.rate, $1.lump) }
        var out: [(at: Int64, rate: Double, cumulative: Double)] = []
        var rate = 0.0, total = 0.0, last = sorted.first?.at ?? 0
        var i = 0
        while i < sorted.count {
            let at = sorted[i].at
            total += rate * (Double(at - last) / 1e9)
            last = at
            while i < sorted.count && sorted[i].at == at {
                rate += sorted[i].rate
                total += sorted[i].lump
                i += 1
            }
            // Summing and removing rates leaves rounding dust where none is on.
            if abs(rate) < 1e-9 { rate = 0 }
            out.append((at, rate, total))
        }
        return out
    }
}
