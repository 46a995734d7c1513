import BTWire

/// Finished findings written to a spill as they come, with their keys; `sorted()` puts the keys in report order.
/// The keys of a spilled audit are sorted in runs of `runLength` set aside beside the findings and merged when
/// sorted, into keys that are themselves set aside (`SetAsideArray`): memory holds a run, not a key per finding.
struct FinishedFindings {
    let spill: Spill
    /// The keys, in sorted runs set aside beside the findings when the findings are in a file.
    private var keys: SortedRuns<FindingKey>
    private var rules = RuleInterning()
    /// Host parts that are not 0, by where the finding is in the spill.
    private var hostCharges: [Int64: Double] = [:]

    /// Keys sorted in memory at once (`FindingSpill.keyRunLength`).
    let runLength: Int

    /// Where the runs are set aside: the findings' directory (nil: the findings are in memory, and so are the keys).
    let directory: String?

    init(spill: Spill, directory: String?, runLength: Int = FindingSpill.defaultKeyRunLength) {
        self.spill = spill
        self.runLength = max(1, runLength)
        self.directory = spill.isFile ? directory : nil
        keys = SortedRuns(directory: self.directory, runLength: self.runLength)
    }

    /// Writes `f`, already encoded (`FindingCoding.encode`) as `encoded`, and keeps its key.
    mutating func append(_ f: Finding, encoded: UnsafeRawBufferPointer) {
        let offset = spill.append(encoded)
        let key = FindingKey(f, offset: offset, length: encoded.count, rule: rules.slot(f.id))
        // Rule ids are interned as they come: a run sorted before a rule first appeared ranks it the same, as ranks
        // only compare rules that both appear.
        let rules = self.rules
        keys.append(key) { Self.precedes(rules) }
        if let host = f.cost?.hostMC, host != 0 { hostCharges[offset] = host }
    }

    /// `Auditor.precedes`'s order: time, rule id, link, attribute (the file is the capture's, the same for all),
    /// then where written: only findings of one rule reach it, and one thread writes a rule's findings in the
    /// order made (the order `Array.sort` keeps among equals). A total order: no two keys have the same place in
    /// the spill.
    private static func precedes(_ rules: RuleInterning) -> (FindingKey, FindingKey) -> Bool {
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
        var ordered: SetAsideArray<FindingKey> = keys.isSetAside
            ? SetAsideArray(spillingTo: directory!, kept: runLength) : SetAsideArray()
        keys.drain(by: Self.precedes(rules)) { ordered.append($0) }
        let hosts = hostCharges.isEmpty ? [] : ordered.compactMap { hostCharges[$0.offset] }
        let stored = StoredFindings(storage: .spilled(spill), keys: ordered, ruleIDs: rules.ids, hostCharges: hosts)
        // Keys that could not be read back or set aside would leave findings out of the report: the run fails.
        if let failure = keys.failure ?? ordered.failure { stored.note(.spill(cause: failure)) }
        return stored
    }
}

extension FindingKey: PlainSetAsideValue {}
