import BTWire
import BTEnergy
import BTRules

/// `btlens diff BASE HEAD`: findings new, fixed and unchanged (by fingerprint), and the change in the phone's
/// radio charge, per activity, in connections and ATT transactions. Schema: Schemas/diff.schema.json.
public struct CaptureDiff: Sendable {
    public var base: DiffSide
    public var head: DiffSide
    public var new: [DiffSide.Item]
    public var fixed: [DiffSide.Item]
    public var unchanged: [DiffSide.Item]

    public init(base: DiffSide, head: DiffSide) {
        self.base = base
        self.head = head
        let baseKeys = Set(base.findings.map(\.fingerprint)), headKeys = Set(head.findings.map(\.fingerprint))
        new = head.findings.filter { !baseKeys.contains($0.fingerprint) }
        fixed = base.findings.filter { !headKeys.contains($0.fingerprint) }
        unchanged = head.findings.filter { baseKeys.contains($0.fingerprint) }
    }

    /// Percent change of the phone's radio charge; nil when a side has none, or the base is 0.
    public var changePercent: Double? {
        guard let b = base.chargeMC, let h = head.chargeMC, b > 0 else { return nil }
        return (h - b) / b * 100
    }

    /// Activities of either side, base's order first; those that cost nothing on both sides are left out.
    public var activities: [(name: String, base: RadioCost?, head: RadioCost?)] {
        var names = base.activities.map(\.name)
        for a in head.activities where !names.contains(a.name) { names.append(a.name) }
        return names.compactMap { n in
            let b = base.activities.first { $0.name == n }?.cost, h = head.activities.first { $0.name == n }?.cost
            return (b?.chargeMC ?? 0) == 0 && (h?.chargeMC ?? 0) == 0 ? nil : (n, b, h)
        }
    }

    /// Exit 1 when the charge rose more than `increase` % or a new finding reaches `failOn`.
    public func fails(increase: Double?, failOn: Severity?) -> Bool {
        if let increase, let change = changePercent, change > increase { return true }
        guard let failOn else { return false }
        return new.contains { AuditCost.severityRank($0.severity) <= AuditCost.severityRank(failOn) }
    }

    // MARK: Output

    static func pct(_ v: Double?) -> String {
        guard let v else { return "n/a" }
        return (v > 0 ? "+" : "") + DecimalText.fixed(v, fractionDigits: 1) + " %"
    }

    static func mc(_ v: Double?) -> String { v.map { DecimalText.fixed($0, fractionDigits: 2) + " mC" } ?? "n/a" }

    public func json() -> JSONValue {
        func side(_ c: RadioCost?) -> JSONValue { c.map(EnergyJSON.cost) ?? .null }
        func optionalInt(_ v: Int?) -> JSONValue { v.map { .int($0) } ?? .null }
        func optionalNumber(_ v: Double?, _ digits: Int = 4) -> JSONValue { v.map { EnergyJSON.round($0, digits) } ?? .null }
        return .object([
            ("base", .string(base.label)), ("head", .string(head.label)),
            ("findings", .object([("new", .array(new.map(\.json))), ("fixed", .array(fixed.map(\.json))),
                                  ("unchanged", .array(unchanged.map(\.json)))])),
            ("charge", .object([("base_mc", optionalNumber(base.chargeMC)), ("head_mc", optionalNumber(head.chargeMC)),
                                ("change_pct", optionalNumber(changePercent, 2))])),
            ("activities", .array(activities.map { a in .object([("name", .string(a.name)), ("base", side(a.base)), ("head", side(a.head))]) })),
            ("connections", .object([("base", optionalInt(base.connections)), ("head", optionalInt(head.connections))])),
            ("connection_s", .object([("base", optionalNumber(base.connectionSeconds, 3)), ("head", optionalNumber(head.connectionSeconds, 3))])),
            ("att_transactions", .object([("base", optionalInt(base.attTransactions)), ("head", optionalInt(head.attTransactions))])),
        ])
    }

    public func text() -> String {
        var out = ["btlens diff \(base.label) → \(head.label)"]
        out.append("  radio charge (phone): \(Self.mc(base.chargeMC)) → \(Self.mc(head.chargeMC)) (\(Self.pct(changePercent)))")
        for a in activities {
            let b = a.base?.chargeMC, h = a.head?.chargeMC
            let change = (b ?? 0) > 0 ? ((h ?? 0) - b!) / b! * 100 : nil
            out.append("    \(a.name): \(Self.mc(b)) → \(Self.mc(h))\(change.map { " (\(Self.pct($0)))" } ?? "")")
        }
        if let b = base.connections, let h = head.connections { out.append("  connections: \(b) → \(h)") }
        if let b = base.connectionSeconds, let h = head.connectionSeconds {
            out.append("  time connected: \(DecimalText.fixed(b, fractionDigits: 1)) s → \(DecimalText.fixed(h, fractionDigits: 1)) s")
        }
        if let b = base.attTransactions, let h = head.attTransactions { out.append("  ATT transactions: \(b) → \(h)") }
        for (title, list) in [("new", new), ("fixed", fixed)] {
            out.append("  \(title) findings: \(list.count)")
            for f in list { out.append("    \(f.severity.rawValue) \(f.id) \(f.rule): \(f.message)") }
        }
        out.append("  unchanged findings: \(unchanged.count)")
        return out.joined(separator: "\n")
    }

    /// A pull-request comment.
    public func markdown() -> String {
        let icon = (changePercent ?? 0) > 0 || !new.isEmpty ? "⚠️" : "✅"
        var out = ["## \(icon) btlens diff", ""]
        out.append("Radio charge (phone): **\(Self.mc(base.chargeMC)) → \(Self.mc(head.chargeMC))** (\(Self.pct(changePercent)))")
        out.append("")
        out.append("Findings: **\(new.count) new**, \(fixed.count) fixed, \(unchanged.count) unchanged.")
        if !activities.isEmpty {
            out.append("")
            out.append("| activity | base | head | change |")
            out.append("|---|---:|---:|---:|")
            for a in activities {
                let b = a.base?.chargeMC, h = a.head?.chargeMC
                let change = (b ?? 0) > 0 ? ((h ?? 0) - b!) / b! * 100 : nil
                out.append("| \(a.name.replacingPipes()) | \(Self.mc(b)) | \(Self.mc(h)) | \(Self.pct(change)) |")
            }
        }
        for (title, list) in [("New", new), ("Fixed", fixed)] where !list.isEmpty {
            out.append("")
            out.append("### \(title) findings")
            out.append("")
            for f in list { out.append("- **\(f.severity.rawValue)** `\(f.id)` \(f.rule): \(f.message.replacingPipes())") }
        }
        return out.joined(separator: "\n")
    }
}
