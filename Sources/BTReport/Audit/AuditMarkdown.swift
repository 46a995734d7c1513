import BTWire
import BTRules

/// A summary fit for a pull-request comment.
public enum AuditMarkdown {
    static func cell(_ s: String) -> String { s.replacingPipes() }

    public static func render(_ run: AuditRun) -> String {
        var text = ""
        write(run) { text += $0 }
        return text
    }

    /// `render`, written a line at a time.
    public static func write(_ run: AuditRun, to write: @escaping (String) -> Void) {
        var out = ReportLines(write)
        let icon = run.failed ? "❌" : (run.findings.isEmpty ? "✅" : "⚠️")
        out.append("## \(icon) btlens audit")
        out.append("")
        out.append("**\(run.summary)**" + (run.failOn.map { " — fails on \($0.rawValue) and above" } ?? ""))
        if let waste = run.wasteLine {
            out.append("")
            out.append(waste[waste.startIndex].uppercased() + waste.dropFirst() + ".")
        }
        if run.status == .unreadable {
            out.append("")
            out.append("**Incomplete: an input could not be read.**")
        }
        out.append("")
        out.append("| capture | errors | warnings | info |")
        out.append("|---|---:|---:|---:|")
        for c in run.captures {
            let count = { (s: Severity) in c.findings.count(s) }
            let name = c.error.map { "\(c.file) (unreadable: \($0))" } ?? c.file
            out.append("| `\(cell(name))` | \(count(.error)) | \(count(.warning)) | \(count(.info)) |")
        }
        for c in run.captures where !c.notes.isEmpty {
            out.append("")
            for note in c.notes { out.append("> `\(cell(c.file))`: \(note)") }
        }
        // Which app each scan and link was, when a bug report named them (nothing otherwise).
        for c in run.captures {
            let lines = c.attribution.map { AttributionReport.lines($0, focus: c.focus) } ?? c.focus.map(AttributionReport.focusLines) ?? []
            guard !lines.isEmpty else { continue }
            out.append("")
            out.append("> `\(cell(c.file))`: " + lines[0])
            for line in lines.dropFirst() { out.append(">  - " + line.trimmingLeadingSpaces) }
        }
        if !run.findings.isEmpty {
            out.append("")
            out.append("| severity | rule | capture | where | finding | saves |")
            out.append("|---|---|---|---|---|---:|")
            for c in run.captures {
                // Repeats of one rule on one peer as one row; the rest most severe and costliest first.
                let (repeats, rest) = AuditCost.groupedIndices(c.findings)
                for g in repeats {
                    out.append("| \(g.severity.rawValue) | `\(g.id)` \(g.rule) | `\(cell(c.file))` | \(g.connections) | \(cell(g.line)) | \(AuditCost.mAh(g.charge)) |")
                }
                for i in AuditCost.ordered(rest.lazy.map(Int.init), of: c.findings) {
                    let f = c.findings[i]
                    let place = f.connection.map { "#\($0.id) `\($0.shortLinkName)`" } ?? "—"
                    out.append("| \(f.severity.rawValue) | `\(f.id)` \(f.rule) | `\(cell(f.file))` | \(place) | \(cell(f.message + (f.owner.map { " (owner: \($0.name))" } ?? ""))) | \(f.cost.map { AuditCost.mAh($0.phone.chargeMC) } ?? "—") |")
                }
            }
            out.append("")
            out.append("<details><summary>What to do instead</summary>")
            out.append("")
            var seen = Set<String>()
            for i in run.findings.indices where seen.insert(run.findings.ruleID(at: i)).inserted {
                guard let d = RuleRegistry.rule(run.findings.ruleID(at: i))?.description else { continue }
                out.append("- **\(d.id) \(d.name)** — \(d.title). CoreBluetooth: \(d.coreBluetooth) Android: \(d.android)")
            }
            out.append("")
            out.append("</details>")
        }
    }
}

extension String {
    func replacingPipes() -> String {
        var out = ""
        for ch in self { out += ch == "|" ? "\\|" : ch == "\n" ? " " : String(ch) }
        return out
    }
}
