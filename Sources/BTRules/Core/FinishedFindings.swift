import BTWire

/// Finished findings written to a spill as they come, with their keys; `sorted()` puts the keys in report order.
struct FinishedFindings {
    let spill: Spill
    private var keys: [FindingKey] = []
    private var rules = RuleInterning()
    /// Host parts that are not 0, by where the finding is in the spill.
    private var hostCharges: [Int64: Double] = [:]
    private var bytes: [UInt8] = []

    init(spill: Spill) { self.spill = spill }

    mutating func append(_ f: Finding) {
        bytes.removeAll(keepingCapacity: true)
        FindingCoding.encode(f, into: &bytes)
        let offset = bytes.withUnsafeBytes { spill.append($0) }
        keys.append(FindingKey(f, offset: offset, length: bytes.count, rule: rules.slot(f.id)))
        if let host = f.cost?.hostMC, host != 0 { hostCharges[offset] = host }
    }

    /// The findings in `Auditor.precedes`'s order: time, rule id, link, attribute (the file is the capture's, the
    /// same for all), then the order finished (the order `Array.sort` keeps among equals). The keys are sorted in
    /// place and handed over.
    mutating func sorted() -> StoredFindings {
        // Rule ids by their text's order.
        let byText = rules.ids.indices.sorted { rules.ids[$0] < rules.ids[$1] }
        var rank = [Int](repeating: 0, count: rules.ids.count)
        for (r, slot) in byText.enumerated() { rank[slot] = r }
        keys.sort { a, b in
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
        let hosts = hostCharges.isEmpty ? [] : keys.compactMap { hostCharges[$0.offset] }
        defer { keys = [] }
        return StoredFindings(storage: .spilled(spill), keys: keys, ruleIDs: rules.ids, hostCharges: hosts)
    }
}
