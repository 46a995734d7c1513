import BTWire
import BTRules

/// The terminal report: per capture, findings grouped per connection, colour on a tty, a summary line.
public enum AuditTextReport {
    static func paint(_ s: String, _ code: String, _ colored: Bool) -> String { colored ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }

    static func label(_ s: Severity, _ colored: Bool) -> String {
        switch s {
        case .error: paint("error  ", "1;31", colored)
        case .warning: paint("warning", "33", colored)
        case .info: paint("info   ", "36", colored)
        }
    }

    public static func render(_ run: AuditRun, colored: Bool, verbose: Bool = false) -> String {
        var text = ""
        write(run, colored: colored, verbose: verbose) { text += $0 }
        return text
    }

    /// `render`, written a line at a time.
    public static func write(_ run: AuditRun, colored: Bool, verbose: Bool = false, to write: @escaping (String) -> Void) {
        var out = ReportLines(write)
        // Findings of one rule mostly share their advice: each text is printed under the first finding with it.
        var advised = Set<String>()
        for capture in run.captures {
            if let error = capture.error {
                out.append(paint(capture.file, "1", colored) + ": " + paint("unreadable: \(error)", "31", colored))
                continue
            }
            out.append(paint(capture.file, "1", colored) + "  (\(capture.records) records, \(Plural.of(capture.connections, "connection")), \(Plural.of(capture.findings.count, "finding")))")
            for note in capture.notes { out.append("  " + paint("note: " + note, "2", colored)) }
            if let attribution = capture.attribution {
                for line in AttributionReport.lines(attribution, focus: capture.focus) { out.append("  " + line) }
            } else if let focus = capture.focus {
                for line in AttributionReport.focusLines(focus) { out.append("  " + paint("note: " + line, "2", colored)) }
            }
            // Repeats of one rule on one peer as one line each; then scan- and advertising-level findings, then
            // per connection, each list most severe and costliest first.
            let all = capture.findings
            let (repeats, rest) = AuditCost.groupedIndices(all)
            if !repeats.isEmpty {
                out.append("  repeated on one peer")
                for g in repeats.sorted(by: { AuditCost.severityRank($0.severity) < AuditCost.severityRank($1.severity) || ($0.severity == $1.severity && $0.charge > $1.charge) }) {
                    out.append("    \(label(g.severity, colored)) \(paint(g.id, "2", colored)) \(g.line)")
                    if verbose {
                        for f in g.findings { out.append("            \(f.message)") }
                    }
                }
            }
            // Grouped and ordered by the findings' keys; each finding is read back when its lines are written.
            var groups: [(title: String, first: Finding?, list: [Int])] = []
            let general = Array(rest.lazy.map(Int.init).filter { all.key(at: $0).connection == nil })
            if !general.isEmpty { groups.append(("scanning, advertising and connection attempts", nil, general)) }
            var order: [Int] = []
            var byConnection: [Int: [Int]] = [:]
            for i in rest.lazy.map(Int.init) {
                guard let c = all.key(at: i).connection else { continue }
                if byConnection[c] == nil { order.append(c) }
                byConnection[c, default: []].append(i)
            }
            for id in order {
                guard let list = byConnection[id], let first = list.first else { continue }
                let f = all[first]
                guard let c = f.connection else { continue }
                groups.append((AuditText.connection(c), f, list))
            }
            for (title, first, list) in groups {
                out.append("  " + title)
                for i in AuditCost.ordered(list, of: all) {
                    let f = i == list[0] ? first ?? all[i] : all[i]
                    out.append("    \(label(f.severity, colored)) \(paint(f.id, "2", colored)) \(f.rule): \(f.message)")
                    out.append("            " + (AuditCost.words(f.cost).map { $0 + "; " } ?? "") + "records \(AuditText.records(f.records))")
                    if let owner = f.owner { out.append("            owner: \(owner.name) (\(owner.evidence))") }
                    if verbose {
                        out.append("            " + (advised.insert(f.advice).inserted ? f.advice : "(advice: as for \(f.id) above)"))
                    }
                }
            }
            if capture.findings.isEmpty { out.append("  " + paint("no findings", "32", colored)) }
            out.append("")
        }
        let verdict: String
        switch run.status {
        case .passed: verdict = ""
        case .failed: verdict = " — failing (--fail-on \(run.failOn?.rawValue ?? "never"))"
        case .unreadable: verdict = " — failing (an input could not be read)"
        }
        out.append(paint(run.summary, run.failed ? "1;31" : "1", colored) + verdict)
        if let waste = run.wasteLine { out.append(waste[waste.startIndex].uppercased() + waste.dropFirst() + ".") }
        if !verbose && !run.findings.isEmpty { out.append("Run `btlens explain ID` for why a rule matters and what to do instead, or add -v.") }
    }
}
