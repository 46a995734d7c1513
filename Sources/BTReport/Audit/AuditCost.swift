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
        /// Where the findings are in the list grouped.
        var indices: [Int]
        /// The list grouped.
        let source: Findings
        var severity: Severity
        var charge: Double
        var radioSeconds: Double
        var connections: String

        init(rule: String, id: String, peer: BDAddr, indices: [Int], of source: Findings) {
            self.rule = rule
            self.id = id
            self.peer = peer
            self.indices = indices
            self.source = source
            let keys = indices.map(source.key(at:))
            severity = keys.map(\.severity).min { severityRank($0) < severityRank($1) } ?? .info
            charge = keys.reduce(0) { $0 + $1.charge }
            radioSeconds = keys.reduce(0) { $0 + $1.radioSeconds }
            let ids = Array(Set(keys.compactMap(\.connection))).sorted()
            if let first = ids.first, let last = ids.last {
                connections = ids.count == 1 ? "connection #\(first)" : ids.count == last - first + 1 ? "connections #\(first)–#\(last)"
                    : "connections " + ids.map { "#\($0)" }.joined(separator: ", ")
            } else {
                connections = ""
            }
        }

        /// The members, read back as they are reached.
        var findings: LazyMapSequence<[Int], Finding> { indices.lazy.map { source[$0] } }
        var count: Int { indices.count }
        var line: String {
            "\(rule) ×\(count) on \(peer), \(connections), \(radio(radioSeconds)) radio time, \(mAh(charge))"
        }
    }

    struct GroupKey: Hashable {
        var id: String
        var peer: BDAddr
    }

    /// Splits findings into groups of repeats and the rest (as indices into `findings`, the order kept), from
    /// their keys.
    static func groupedIndices(_ findings: Findings) -> (groups: [Group], rest: [Int]) {
        var byKey: [GroupKey: [Int]] = [:]
        for i in findings.indices {
            guard let peer = findings.key(at: i).peer else { continue }
            byKey[GroupKey(id: findings.ruleID(at: i), peer: peer), default: []].append(i)
        }
        guard byKey.values.contains(where: { $0.count >= groupedFrom }) else { return ([], Array(findings.indices)) }
        var groups: [Group] = []
        var inGroup = [Bool](repeating: false, count: findings.count)
        var done = Set<GroupKey>()
        for i in findings.indices {
            guard let peer = findings.key(at: i).peer else { continue }
            let key = GroupKey(id: findings.ruleID(at: i), peer: peer)
            guard let list = byKey[key], list.count >= groupedFrom, done.insert(key).inserted else { continue }
            for j in list { inGroup[j] = true }
            groups.append(Group(rule: findings[i].rule, id: key.id, peer: peer, indices: list, of: findings))
        }
        return (groups, findings.indices.filter { !inGroup[$0] })
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
