import BTWire

/// A quantity spread evenly over intervals (charge over a scan, reports over a session), summed where intervals
/// overlap: as a rate that steps where an interval starts or ends, and its running total. What the Perfetto
/// export draws as counter tracks.
///
/// Every interval must be known before the first step can be given (a link judged late may have begun early), so
/// the changes are kept until `steps`. With a spill directory they are kept in sorted runs of `runLength` in a
/// temporary file and merged at the end (`SortedRuns`): memory is a run and a slice per run, not two changes per priced phase
/// of every link of the capture (2 × 19 MB on 10 GB of 311,000 links). The steps are the same to the last bit
/// either way: the changes come out in the same total order and are summed in it.
struct StepCounter {
    typealias Change = (at: Int64, rate: Double, lump: Double)

    /// Changes kept in memory at most before they are sorted and set aside (24 bytes each).
    static let defaultRunLength = 1 << 16

    /// Rate changes: +rate at a start, −rate at an end; zero-length intervals add their total at once.
    private var changes: SortedRuns<Change>

    /// `spillDirectory`: where sorted runs are set aside (nil: every change stays in memory).
    init(spillDirectory: String? = nil, runLength: Int = StepCounter.defaultRunLength) {
        changes = SortedRuns(directory: spillDirectory, runLength: runLength)
    }

    var isEmpty: Bool { changes.isEmpty }

    mutating func add(start: Int64, end: Int64, total: Double) {
        guard total.isFinite else { return }
        if end > start {
            let rate = total / (Double(end - start) / 1e9)
            changes.append((start, rate, 0)) { Self.ordered }
            changes.append((end, -rate, 0)) { Self.ordered }
        } else {
            changes.append((start, 0, total)) { Self.ordered }
        }
    }

    /// Ordered wholly, not by time alone: the same intervals give the same sums to the last bit in whatever order
    /// they were added (a link drawn as it is judged adds its phases before the capture's scans).
    static func ordered(_ a: Change, _ b: Change) -> Bool { (a.at, a.rate, a.lump) < (b.at, b.rate, b.lump) }

    /// Gives the rate (per second) and the running total at each time the rate changes, in time order. Keeps no
    /// list of steps: a long capture's counters are millions of steps. Throws when the runs set aside cannot be
    /// read back.
    mutating func steps(_ body: (_ at: Int64, _ rate: Double, _ cumulative: Double) throws -> Void) throws {
        var rate = 0.0, total = 0.0, last: Int64 = 0
        var current: Int64?
        try changes.drain(by: Self.ordered) { c in
            if c.at != current {
                if let at = current {
                    // Summing and removing rates leaves rounding dust where none is on.
                    if abs(rate) < 1e-9 { rate = 0 }
                    try body(at, rate, total)
                } else {
                    last = c.at
                }
                total += rate * (Double(c.at - last) / 1e9)
                last = c.at
                current = c.at
            }
            rate += c.rate
            total += c.lump
        }
        if let at = current {
            if abs(rate) < 1e-9 { rate = 0 }
            try body(at, rate, total)
        }
        if let failure = changes.failure { throw SpillError(path: changes.directory ?? "", cause: failure) }
    }
}
