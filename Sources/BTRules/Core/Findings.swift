import BTWire

/// Findings in report order, one capture's or a run's (each capture's one after the other): a collection
/// whose elements are read back one at a time (`StoredFindings`), and whose keys (severity, saving, rule, link,
/// peer) answer counts, sums and groupings without reading a finding.
public struct Findings: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    let lists: [StoredFindings]
    /// Where each list's first finding is; then the count.
    let starts: [Int]

    public init(_ stored: StoredFindings) {
        lists = [stored]
        starts = [0, stored.count]
    }

    public init(_ findings: [Finding]) { self.init(StoredFindings(findings)) }

    public init(arrayLiteral elements: Finding...) { self.init(elements) }

    /// `parts` one after the other; shares their lists.
    public init(concatenating parts: [Findings]) {
        lists = parts.flatMap(\.lists)
        var starts = [0]
        for l in lists { starts.append(starts[starts.count - 1] + l.count) }
        self.starts = starts
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts[starts.count - 1] }

    public subscript(i: Int) -> Finding {
        let (list, j) = locate(i)
        return lists[list][j]
    }

    /// Which list holds `i`, and where in it.
    @inline(__always)
    func locate(_ i: Int) -> (Int, Int) {
        if lists.count == 1 { return (0, i) }
        precondition(i >= 0 && i < endIndex, "finding index out of range")
        // The last list whose start is at or before i.
        let list = starts.partitioningIndex { $0 > i } - 1
        return (list, i - starts[list])
    }

    public func key(at i: Int) -> FindingKey {
        let (list, j) = locate(i)
        return lists[list].key(at: j)
    }

    public func ruleID(at i: Int) -> String {
        let (list, j) = locate(i)
        return lists[list].ruleID(at: j)
    }

    /// How many findings have `severity`.
    public func count(_ severity: Severity) -> Int {
        lists.reduce(0) { n, l in n + l.keys.reduce(0) { $0 + ($1.severity == severity ? 1 : 0) } }
    }

    /// Whether a finding is at least `severity`.
    public func contains(atLeast severity: Severity) -> Bool {
        lists.contains { $0.keys.contains { $0.severity >= severity } }
    }

    /// The phone-side savings summed in report order (as `reduce` over the findings would).
    public var chargeSum: Double { lists.reduce(0) { s, l in l.keys.reduce(s) { $0 + $1.charge } } }
    /// The host parts of the savings summed in report order.
    public var hostChargeSum: Double { lists.reduce(0) { s, l in l.hostCharges.reduce(s, +) } }

    /// Every finding at once, in memory: for the few uses that need them so (baselines, `diff`).
    public var array: [Finding] { Array(self) }

    /// Whether any finding is read from a spill file.
    public var isSpilled: Bool { lists.contains(where: \.isSpilled) }

    /// The first finding that could not be read back, if any.
    public var failure: FindingStoreError? { lists.lazy.compactMap(\.failure).first }
}
