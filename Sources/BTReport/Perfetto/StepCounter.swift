import BTWire

/// A quantity spread evenly over intervals (charge over a scan, reports over a session), summed where intervals
/// overlap: as a rate that steps where an interval starts or ends, and its running total. What the Perfetto
/// export draws as counter tracks.
///
/// Every interval must be known before the first step can be given (a link judged late may have begun early), so
/// the changes are kept until `steps`. With a spill directory they are kept in sorted runs of `runLength` in a
/// temporary file and merged at the end: memory is one run and a block per run, not two changes per priced phase
/// of every link of the capture (2 × 19 MB on 10 GB of 311,000 links). The steps are the same to the last bit
/// either way: the changes come out in the same total order and are summed in it.
struct StepCounter {
    typealias Change = (at: Int64, rate: Double, lump: Double)

    /// Changes kept in memory at most before they are sorted and set aside (24 bytes each).
    static let defaultRunLength = 1 << 16
    /// Changes read back at once from each run while merging.
    static let mergeBlock = 4_096

    /// Rate changes: +rate at a start, −rate at an end; zero-length intervals add their total at once. The run
    /// being filled.
    private var changes: [Change] = []
    private let spillDirectory: String?
    private let runLength: Int
    /// The sorted runs set aside: where each begins in `spill`, and its length.
    private var runs: [(offset: Int64, count: Int)] = []
    private var spill: Spill?

    /// `spillDirectory`: where sorted runs are set aside (nil: every change stays in memory).
    init(spillDirectory: String? = nil, runLength: Int = StepCounter.defaultRunLength) {
        self.spillDirectory = spillDirectory
        self.runLength = max(1, runLength)
    }

    var isEmpty: Bool { changes.isEmpty && runs.isEmpty }

    mutating func add(start: Int64, end: Int64, total: Double) {
        guard total.isFinite else { return }
        if end > start {
            let rate = total / (Double(end - start) / 1e9)
            append((start, rate, 0))
            append((end, -rate, 0))
        } else {
            append((start, 0, total))
        }
    }

    private mutating func append(_ change: Change) {
        changes.append(change)
        if spillDirectory != nil && changes.count >= runLength { setRunAside() }
    }

    /// Ordered wholly, not by time alone: the same intervals give the same sums to the last bit in whatever order
    /// they were added (a link drawn as it is judged adds its phases before the capture's scans).
    @inline(__always)
    static func ordered(_ a: Change, _ b: Change) -> Bool { (a.at, a.rate, a.lump) < (b.at, b.rate, b.lump) }

    private mutating func setRunAside() {
        changes.sort(by: Self.ordered)
        if spill == nil { spill = Spill.fileOrMemory(in: spillDirectory).spill }
        runs.append((spill!.append(plain: changes), changes.count))
        changes.removeAll(keepingCapacity: true)
    }

    /// Gives the rate (per second) and the running total at each time the rate changes, in time order. Keeps no
    /// list of steps: a long capture's counters are millions of steps. Throws when the runs set aside cannot be
    /// read back.
    mutating func steps(_ body: (_ at: Int64, _ rate: Double, _ cumulative: Double) throws -> Void) throws {
        if runs.isEmpty {
            changes.sort(by: Self.ordered)
            try changes.withUnsafeBufferPointer { sorted in
                var i = 0
                try Self.sum(next: {
                    guard i < sorted.count else { return nil }
                    defer { i += 1 }
                    return sorted[i]
                }, body)
            }
            return
        }
        if !changes.isEmpty { setRunAside() }
        guard let spill else { return }
        var merge = RunMerge(spill: spill, runs: runs)
        try Self.sum(next: { merge.next() }, body)
        if let failure = spill.failure { throw SpillError(path: spillDirectory ?? "", cause: failure) }
    }

    /// Sums the changes `next` gives in order: the rate and running total after each distinct time.
    private static func sum(next: () -> Change?, _ body: (_ at: Int64, _ rate: Double, _ cumulative: Double) throws -> Void) throws {
        var pending = next()
        var rate = 0.0, total = 0.0, last = pending?.at ?? 0
        while let first = pending {
            let at = first.at
            total += rate * (Double(at - last) / 1e9)
            last = at
            while let c = pending, c.at == at {
                rate += c.rate
                total += c.lump
                pending = next()
            }
            // Summing and removing rates leaves rounding dust where none is on.
            if abs(rate) < 1e-9 { rate = 0 }
            try body(at, rate, total)
        }
    }

    /// The sorted runs read back a block at a time and merged into one order.
    private struct RunMerge {
        let spill: Spill
        /// Per run: the block read, the place in it, where the next block begins and how many changes remain.
        var blocks: [(changes: [Change], index: Int, offset: Int64, remaining: Int)]

        init(spill: Spill, runs: [(offset: Int64, count: Int)]) {
            self.spill = spill
            blocks = runs.map { ([], 0, $0.offset, $0.count) }
            for r in blocks.indices { refill(r) }
        }

        mutating func refill(_ r: Int) {
            let n = min(StepCounter.mergeBlock, blocks[r].remaining)
            blocks[r].changes = n > 0 ? spill.read(plain: Change.self, count: n, at: blocks[r].offset) : []
            // A run that cannot be read back ends here (`spill.failure` says why).
            if blocks[r].changes.count < n { blocks[r].remaining = 0 } else { blocks[r].remaining -= n }
            blocks[r].offset += Int64(n * MemoryLayout<Change>.stride)
            blocks[r].index = 0
        }

        /// The least change at the head of a run, taken from it.
        mutating func next() -> Change? {
            var best: Int?
            for r in blocks.indices where blocks[r].index < blocks[r].changes.count {
                if let b = best, !StepCounter.ordered(blocks[r].changes[blocks[r].index], blocks[b].changes[blocks[b].index]) { continue }
                best = r
            }
            guard let b = best else { return nil }
            let change = blocks[b].changes[blocks[b].index]
            blocks[b].index += 1
            if blocks[b].index == blocks[b].changes.count && blocks[b].remaining > 0 { refill(b) }
            return change
        }
    }
}
