import BTWire

/// Finished findings written to a spill as they come, with their keys; `sorted()` puts the keys in report order.
/// The keys of a spilled audit are sorted in runs of `runLength` set aside beside the findings and merged when
/// sorted, into keys that are themselves set aside (`SetAsideArray`): memory holds a run, not a key per finding.
struct FinishedFindings {
    let spill: Spill
    /// The keys not yet in a run.
    private var keys: [FindingKey] = []
    /// Sorted runs of keys set aside (each `runLength` long but the last), when the findings are in a file.
    private var runs: Spill?
    private var runCount = 0
    private var rules = RuleInterning()
    /// Host parts that are not 0, by where the finding is in the spill.
    private var hostCharges: [Int64: Double] = [:]
    private var bytes: [UInt8] = []

    /// Keys sorted in memory at once (`FindingSpill.keyRunLength`).
    let runLength: Int

    /// Where the runs are set aside: the findings' directory (nil: the findings are in memory, and so are the keys).
    let directory: String?

    init(spill: Spill, directory: String?, runLength: Int = FindingSpill.defaultKeyRunLength) {
        self.spill = spill
        self.runLength = max(1, runLength)
        self.directory = spill.isFile ? directory : nil
    }

    mutating func append(_ f: Finding) {
        bytes.removeAll(keepingCapacity: true)
        FindingCoding.encode(f, into: &bytes)
        let offset = bytes.withUnsafeBytes { spill.append($0) }
        keys.append(FindingKey(f, offset: offset, length: bytes.count, rule: rules.slot(f.id)))
        if let host = f.cost?.hostMC, host != 0 { hostCharges[offset] = host }
        if keys.count >= runLength, let directory { setRunAside(directory) }
    }

    /// Sorts the keys held and appends them to `runs` as a run.
    private mutating func setRunAside(_ directory: String) {
        if runs == nil { runs = Spill.fileOrMemory(in: directory).spill }
        let precedes = self.precedes
        keys.sort(by: precedes)
        keys.withUnsafeBytes { _ = runs!.append($0) }
        runCount += 1
        keys.removeAll(keepingCapacity: true)
    }

    /// `Auditor.precedes`'s order: time, rule id, link, attribute (the file is the capture's, the same for all),
    /// then the order finished (the order `Array.sort` keeps among equals). A total order: no two keys have the
    /// same place in the spill.
    private var precedes: (FindingKey, FindingKey) -> Bool {
        // Rule ids by their text's order.
        let byText = rules.ids.indices.sorted { rules.ids[$0] < rules.ids[$1] }
        var rank = [Int](repeating: 0, count: rules.ids.count)
        for (r, slot) in byText.enumerated() { rank[slot] = r }
        return { a, b in
            if a.start != b.start { return a.start < b.start }
            if a.rule != b.rule {
                let ra = rank[Int(a.rule)], rb = rank[Int(b.rule)]
                if ra != rb { return ra < rb }
            }
            let ca = a.connectionID == FindingKey.noConnection ? 0 : a.connectionID
            let cb = b.connectionID == FindingKey.noConnection ? 0 : b.connectionID
            if ca != cb { return ca < cb }
            if a.attribute != b.attribute { return a.attribute < b.attribute }
            return a.offset < b.offset
        }
    }

    /// The findings in report order (`precedes`), the keys handed over.
    mutating func sorted() -> StoredFindings {
        let precedes = self.precedes
        var ordered: SetAsideArray<FindingKey>
        if let runs, let directory {
            // Rule ids are interned as they come: a run sorted before a rule first appeared ranks it the same, as
            // ranks only compare rules that both appear.
            if !keys.isEmpty { setRunAside(directory) }
            ordered = SetAsideArray(spillingTo: directory, kept: runLength)
            // The last run may be short: its length is what is left of the file.
            let stride = Int64(MemoryLayout<FindingKey>.stride)
            let last = Int(runs.size / stride) - (runCount - 1) * runLength
            var readers = (0..<runCount).map { r in
                RunReader(runs: runs, run: r, runLength: runLength, count: r == runCount - 1 ? last : runLength)
            }
            while true {
                var best: Int?
                for r in readers.indices {
                    guard let head = readers[r].head else { continue }
                    if let b = best, !precedes(head, readers[b].head!) { continue }
                    best = r
                }
                guard let b = best else { break }
                ordered.append(readers[b].head!)
                readers[b].advance()
            }
        } else {
            keys.sort(by: precedes)
            ordered = SetAsideArray(keys)
        }
        keys = []
        let hosts = hostCharges.isEmpty ? [] : ordered.compactMap { hostCharges[$0.offset] }
        let stored = StoredFindings(storage: .spilled(spill), keys: ordered, ruleIDs: rules.ids, hostCharges: hosts)
        // Keys that could not be read back or set aside would leave findings out of the report: the run fails.
        if let failure = runs?.failure ?? ordered.failure { stored.note(.spill(cause: failure)) }
        return stored
    }

    /// Reads one sorted run in slices.
    struct RunReader {
        let runs: Spill
        let start: Int64
        let count: Int
        var read = 0
        var slice: [FindingKey] = []
        var next = 0

        init(runs: Spill, run: Int, runLength: Int, count: Int) {
            self.runs = runs
            self.count = count
            start = Int64(run) * Int64(runLength) * Int64(MemoryLayout<FindingKey>.stride)
            fill()
        }

        static let sliceLength = 512

        var head: FindingKey? { next < slice.count ? slice[next] : nil }

        mutating func advance() {
            next += 1
            if next == slice.count { fill() }
        }

        private mutating func fill() {
            let n = min(Self.sliceLength, count - read)
            guard n > 0 else {
                slice = []
                next = 0
                return
            }
            slice = runs.read(plain: FindingKey.self, count: n, at: start + Int64(read) * Int64(MemoryLayout<FindingKey>.stride))
            read += n
            next = 0
        }
    }
}

extension FindingKey: PlainSetAsideValue {}
