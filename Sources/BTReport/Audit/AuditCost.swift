import BTWire
import BTTrack
import BTEnergy
import BTRules

/// Findings' costs in reports: order by cost within severity, the words for one cost, repeated findings of one
/// rule on one peer grouped, and the run's total.
enum AuditCost {
    static func severityRank(_ s: Severity) -> Int {
        switch s {
        case .error: 0
        case .warning: 1
        case .info: 2
        }
    }

    /// Most severe first, then the costliest; ties keep their time order.
    static func ordered(_ findings: [Finding]) -> [Finding] {
        let all = Findings(findings)
        return ordered(all.indices, of: all).map { findings[$0] }
    }

    /// `indices` of `findings` in `ordered`'s order, read from their keys (no finding is read back). Sorted as
    /// 4-byte places in the given order (a long capture's report has hundreds of thousands of findings).
    static func ordered<S: Sequence<Int>>(_ indices: S, of findings: Findings) -> LazyMapCollection<[Int32], Int> {
        let given = indices.map { Int32(clamping: $0) }
        var order = Array(0..<Int32(given.count))
        order.sort { a, b in
            let fa = findings.key(at: Int(given[Int(a)])), fb = findings.key(at: Int(given[Int(b)]))
            let ra = severityRank(fa.severity), rb = severityRank(fb.severity)
            if ra != rb { return ra < rb }
            let ca = fa.charge, cb = fb.charge
            if ca != cb { return ca > cb }
            return a < b
        }
        for k in order.indices { order[k] = given[Int(order[k])] }
        return order.lazy.map(Int.init)
    }

    static func mAh(_ mc: Double) -> String {
        let v = mc / RadioCost.millicoulombsPerMilliampHour
        if v >= 0.1 { return DecimalText.fixed(v, fractionDigits: 2) + " mAh" }
        if v >= 0.001 { return DecimalText.fixed(v, fractionDigits: 4) + " mAh" }
        return DecimalText.fixed(v * 1000, fractionDigits: 2) + " µAh"
    }

    static func radio(_ s: Double) -> String {
        s >= 10 ? "\(Int(s.rounded())) s" : s >= 0.1 ? DecimalText.fixed(s, fractionDigits: 1) + " s"
            : DecimalText.fixed(s * 1000, fractionDigits: 1) + " ms"
    }

    /// "saves about 0.0034 mAh (4.2 s radio)" — the phone side.
    static func words(_ c: FindingCost?) -> String? {
        guard let c, c.phone.chargeMC > 0 || c.phone.radioSeconds > 0 else { return nil }
        let detail = c.hostMC >= c.phone.chargeMC ? "host wake-ups"
            : "\(radio(c.phone.radioSeconds)) radio" + (c.measuredCap ? ", as the controller's counters measured it" : "")
                + (c.hostMC > 0 ? ", \(mAh(c.hostMC)) of it host wake-ups" : "")
        return "saves about \(mAh(c.phone.chargeMC)) (\(detail))"
    }

    /// Findings of one rule on one peer, when there are `groupedFrom` or more: text and Markdown show them as one
    /// line (`discover-all-services ×15 on EA:76:52:B8:3B:E4, connections #1–#11, …`); JSON keeps each.
    static let groupedFrom = 3

    /// Repeats of one rule on one peer: where they are in the findings grouped, with what the report's line says,
    /// worked out once (the members are read back one at a time).
    struct Group {
        var rule: String
        var id: String
        var peer: BDAddr
        /// Where the findings are in the list grouped, in its order: a part of one list shared by every group.
        var indices: ArraySlice<Int32>
        /// The list grouped.
        let source: Findings
        var severity: Severity
        var charge: Double
        var radioSeconds: Double
        var connections: String

        init(rule: String, id: String, peer: BDAddr, indices: ArraySlice<Int32>, of source: Findings) {
            self.rule = rule
            self.id = id
            self.peer = peer
            self.indices = indices
            self.source = source
            // From the members' keys, read one at a time (a soak test repeats one rule on one peer thousands of
            // times).
            var severity: Severity?
            var charge = 0.0, radioSeconds = 0.0
            var connectionIDs = Set<Int>()
            for i in indices {
                let key = source.key(at: Int(i))
                if severity.map({ AuditCost.severityRank(key.severity) < AuditCost.severityRank($0) }) ?? true {
                    severity = key.severity
                }
                charge += key.charge
                radioSeconds += key.radioSeconds
                if let c = key.connection { connectionIDs.insert(c) }
            }
            self.severity = severity ?? .info
            self.charge = charge
            self.radioSeconds = radioSeconds
            let ids = connectionIDs.sorted()
            if let first = ids.first, let last = ids.last {
                connections = ids.count == 1 ? "connection #\(first)" : ids.count == last - first + 1 ? "connections #\(first)–#\(last)"
                    : "connections " + ids.map { "#\($0)" }.joined(separator: ", ")
            } else {
                connections = ""
            }
        }

        /// The members, read back as they are reached.
        var findings: LazyMapSequence<ArraySlice<Int32>, Finding> { indices.lazy.map { source[Int($0)] } }
        var count: Int { indices.count }
        var line: String {
            "\(rule) ×\(count) on \(peer), \(connections), \(radio(radioSeconds)) radio time, \(mAh(charge))"
        }
    }

    struct GroupKey: Hashable {
        var id: String
        var peer: BDAddr
    }

    /// Splits findings into groups of repeats, in the order of their first members, and the rest (as places in
    /// `findings`, the order kept), from their keys. Four bytes a finding: the keys are counted first, then each
    /// finding's place is put in its group's part of one list, or in the rest.
    static func groupedIndices(_ findings: Findings) -> (groups: [Group], rest: [Int32]) {
        var slots: [GroupKey: Int32] = [:]
        var counts: [Int32] = []
        for i in findings.indices {
            guard let peer = findings.key(at: i).peer else { continue }
            let key = GroupKey(id: findings.ruleID(at: i), peer: peer)
            if let s = slots[key] {
                counts[Int(s)] += 1
            } else {
                slots[key] = Int32(counts.count)
                counts.append(1)
            }
        }
        guard counts.contains(where: { $0 >= groupedFrom }) else { return ([], Array(0..<Int32(findings.count))) }
        // Each grouped key's part of `members`, in the order of first members (the keys' slots).
        var starts = [Int32](repeating: -1, count: counts.count)
        var grouped: Int32 = 0
        for (s, n) in counts.enumerated() where n >= groupedFrom {
            starts[s] = grouped
            grouped += n
        }
        var members = [Int32](repeating: 0, count: Int(grouped))
        var filled = starts
        var rest: [Int32] = []
        rest.reserveCapacity(findings.count - Int(grouped))
        var firsts: [(slot: Int32, first: Int)] = []
        for i in findings.indices {
            let key = findings.key(at: i)
            guard let peer = key.peer, let s = slots[GroupKey(id: findings.ruleID(at: i), peer: peer)].map(Int.init),
                  starts[s] >= 0 else {
                rest.append(Int32(i))
                continue
            }
            if filled[s] == starts[s] { firsts.append((Int32(s), i)) }
            members[Int(filled[s])] = Int32(i)
            filled[s] += 1
        }
        let groups = firsts.map { slot, first in
            let from = Int(starts[Int(slot)])
            return Group(rule: findings[first].rule, id: findings.ruleID(at: first), peer: findings.key(at: first).peer!,
                         indices: members[from..<(from + Int(counts[Int(slot)]))], of: findings)
        }
        return (groups, rest)
    }
}

extension AuditRun {
    /// The phone-side charge the findings would save, summed (findings on the same activity may overlap), and
    /// its host part.
    public var wasteMC: Double { findings.chargeSum }
    public var hostWasteMC: Double { findings.hostChargeSum }

    /// "findings waste about 4.1 mAh per hour of use, 38 % of the phone's charge in the capture (radio and host
    /// wake-ups)", or nil without costs. The share is against the same total the savings count: the radio's
    /// charge (`energy`'s total) plus the host's wake-ups, since duplicate-scan's savings are the host's.
    public var wasteLine: String? {
        let seconds = captures.reduce(0) { $0 + $1.captureSeconds }
        let total = captures.reduce(0) { $0 + ($1.radioChargeMC ?? 0) + $1.hostChargeMC }
        let waste = wasteMC, host = hostWasteMC
        guard waste > 0, seconds > 0 else { return nil }
        let perHour = { (mc: Double) in mc / seconds * 3600 }
        var text = "findings waste about \(AuditCost.mAh(perHour(waste))) per hour of use"
        if total > 0 {
            // Findings on the same activity can overlap: the share says so rather than pass 100 %.
            let share = waste / total
            let counted = captures.contains { $0.countedSeconds != nil }
            let of = "the phone's charge in the capture (radio" + (counted ? ", as its controller counted it where it did," : "") + " and host wake-ups)"
            text += share > 1 ? ", more than \(of) as findings overlap" : ", \(Int((share * 100).rounded())) % of \(of)"
        }
        if host > 0 { text += " (\(AuditCost.mAh(perHour(host))) of it the host kept awake by HCI traffic)" }
        return text
    }
}
