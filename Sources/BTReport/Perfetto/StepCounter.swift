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

    /// Gives the rate (per second) and the running total at each time the rate changes, in time order. Sorts the
    /// changes in place and keeps no list of steps: a long capture's counters are millions of steps.
    mutating func steps(_ body: (_ at: Int64, _ rate: Double, _ cumulative: Double) throws -> Void) rethrows {
        // Ordered wholly, not by time alone: the same intervals give the same sums to the last bit in whatever
        // order they were added (a link drawn as it is judged adds its phases before the capture's scans).
        changes.sort { ($0.at, $0.rate, $0.lump) < ($1.at, $1.rate, $1.lump) }
        var rate = 0.0, total = 0.0, last = changes.first?.at ?? 0
        var i = 0
        while i < changes.count {
            let at = changes[i].at
            total += rate * (Double(at - last) / 1e9)
            last = at
            while i < changes.count && changes[i].at == at {
                rate += changes[i].rate
                total += changes[i].lump
                i += 1
            }
            // Summing and removing rates leaves rounding dust where none is on.
            if abs(rate) < 1e-9 { rate = 0 }
            try body(at, rate, total)
        }
    }
}
