import BTWire
import BTCapture
import BTTrack
import BTRules

/// How reports say which app each scan and link was (`AppAttribution`) and what `--app` focused on
/// (`AppFocus`): lines for the text report, values for JSON. Shown only when a bug report named the apps, so
/// captures without one print what they always did.
public enum AttributionReport {
    static func seconds(_ ms: Int64) -> String { DecimalText.fixed(Double(ms) / 1000, fractionDigits: 1) + " s" }

    /// The header line: where the apps come from and how times were matched.
    public static func source(_ a: AppAttribution) -> String {
        var text = "bug report"
        if let layout = a.report.layout { text += ", \(layout.versions) layout" }
        if let release = a.report.release { text += " (Android \(release))" }
        return text + "; " + a.clock.description
    }

    /// One line per app: the report's own figures, then what the capture matched within its span.
    public static func appLine(_ f: AppAttribution.AppFigures) -> String {
        var line = f.name + (f.uid.map { " (uid \($0))" } ?? "") + ": "
        if f.reportStarted > 0 || f.keptInSpan > 0 {
            line += "report \(f.reportStarted) started / \(f.reportStopped) stopped"
            if let total = f.reportTotalMs { line += ", " + seconds(total) }
            line += "; \(f.keptInSpan) kept in the capture's span (\(seconds(f.keptInSpanMs))"
            if f.keptInSpanResults > 0 { line += ", \(f.keptInSpanResults) results" }
            line += ") → \(f.matched) matched (\(seconds(f.matchedMs)), \(Plural.of(f.matchedReports, "report")) received)"
        } else {
            line += "no scans"
        }
        if f.connections > 0 { line += "; \(f.matchedLinks) of \(Plural.of(f.connections, "open connection")) matched" }
        return line
    }

    /// The text report's section for a capture.
    public static func lines(_ a: AppAttribution, focus: AppFocus?) -> [String] {
        var out = ["apps (" + source(a) + ")"]
        for f in a.apps { out.append("  " + appLine(f)) }
        let unknown = a.scans.filter { $0.owner.kind != .app }
        var byOwner: [String: Int] = [:]
        for s in unknown { byOwner[s.owner.name + ": " + s.owner.evidence, default: 0] += 1 }
        for (owner, n) in byOwner.sorted(by: { $0.key < $1.key }) { out.append("  \(Plural.of(n, "scan")) \(owner)") }
        for u in a.unmatched {
            let app = a.report.scanners[u.ref.app], scan = app.scans[u.ref.scan]
            out.append("  not in the capture: \(app.name)'s scan at \(scan.start) local (\(seconds(scan.durationMs))): \(u.reason)")
        }
        if a.outsideSpan > 0 { out.append("  \(Plural.of(a.outsideSpan, "scan")) the report kept lie outside the capture's span") }
        for b in a.report.batteryScans {
            out.append("  BatteryStats since charge: uid \(b.uidName)\(b.package.map { " " + $0 } ?? ""): \(seconds(b.realtimeMs)) Bluetooth scan (\(b.times) times)\(b.running ? ", running" : "")")
        }
        for c in a.report.playServicesClients {
            out.append("  Play services BLE client: \(c.clientName)" + (c.scanMode.map { ", scanMode \($0)" } ?? "") + (c.filters.map { ", \(Plural.of($0, "filter"))" } ?? ""))
        }
        for note in a.notes { out.append("  note: " + note) }
        if let focus { out += focusLines(focus) }
        return out
    }

    /// What `--app` judged, and the others once, priced.
    public static func focusLines(_ focus: AppFocus) -> [String] {
        if let fallback = focus.fallback { return ["--app \(focus.app): " + fallback] }
        var out = ["--app \(focus.app): only its scans and links are judged; the others, as context:"]
        for o in focus.others {
            var line = "  \(o.owner): \(Plural.of(o.scans, "scan"))"
            if o.scans > 0 { line += ", " + seconds(o.scanNanoseconds / 1_000_000) + " scanning" }
            if o.chargeMC > 0 { line += " (" + DecimalText.fixed(o.chargeMC / 3.6, fractionDigits: 3) + " mAh)" }
            if o.links > 0 { line += ", \(Plural.of(o.links, "link"))" }
            out.append(line)
        }
        if focus.others.isEmpty { out.append("  nobody else scanned or connected") }
        return out
    }

    /// `10:00:03.016` (UTC), as the timeline prints times.
    static func clock(_ t: Timestamp) -> String {
        let seconds = t.nanoseconds >= 0 ? t.nanoseconds / 1_000_000_000 : (t.nanoseconds - 999_999_999) / 1_000_000_000
        let ms = Int((t.nanoseconds - seconds * 1_000_000_000) / 1_000_000)
        let text = LocalTime.from(seconds: seconds).description
        return String(text.suffix(8)) + "." + (ms < 10 ? "00" : ms < 100 ? "0" : "") + "\(ms)"
    }

    /// The timeline's block: the apps section, then every scan and link with its owner, in time order.
    public static func timelineLines(_ a: AppAttribution, links: LinkSummaries, captureEnd: Timestamp?) -> [String] {
        let end = captureEnd ?? Timestamp(nanoseconds: Timestamp.limit)
        var out = lines(a, focus: nil)
        var rows: [(Timestamp, String)] = []
        for s in a.scans {
            let what = s.allPass.map { $0 ? "all-pass filter" : "filtered client" } ?? "scan session"
            let index = s.filterIndex.map { " (APCF \($0))" } ?? ""
            let length = DecimalText.fixed(Double(s.duration(captureEnd: end)) / 1e9, fractionDigits: 1)
            rows.append((s.start.timestamp, "\(clock(s.start.timestamp))  scan, \(what)\(index), \(length) s → \(s.owner.name): \(s.owner.evidence)"))
        }
        for (i, link) in links.enumerated() where i < a.linkOwners.count {
            let o = a.linkOwners[i]
            rows.append((link.start.timestamp, "\(clock(link.start.timestamp))  connection #\(link.id)\(link.peerAddress.map { " to \($0)" } ?? "") → \(o.name): \(o.evidence)"))
        }
        out.append("owners")
        for (_, row) in rows.sorted(by: { $0.0 < $1.0 }) { out.append("  " + row) }
        return out
    }

    public static func owner(_ o: Owner) -> JSONValue {
        .object([("name", .string(o.name)), ("kind", .string(o.kind.rawValue)), ("apps", .array(o.apps.map { .string($0) })),
                 ("evidence", .string(o.evidence))])
    }

    /// The capture's `attribution` object in JSON.
    public static func json(_ a: AppAttribution, model captureEnd: Timestamp?) -> JSONValue {
        let end = captureEnd ?? Timestamp(nanoseconds: Timestamp.limit)
        let clock: JSONValue = .object([("method", .string(a.clock.method)),
                                        ("offset_s", a.clock.offsetSeconds.map { .int(Int($0)) } ?? .null),
                                        ("description", .string(a.clock.description))])
        let apps: [JSONValue] = a.apps.map(json)
        let scans: [JSONValue] = a.scans.map { json($0, end: end) }
        let links: [JSONValue] = zip(a.linkIDs, a.linkOwners).map { id, o in .object([("id", .int(id)), ("owner", owner(o))]) }
        let unmatched: [JSONValue] = a.unmatched.map { json($0, a) }
        var fields: [(String, JSONValue)] = [("source", .string(source(a)))]
        fields.append(("layout", a.report.layout.map { .string($0.rawValue) } ?? .null))
        fields.append(("android_release", a.report.release.map { .string($0) } ?? .null))
        fields.append(("time_zone", a.report.timeZone.map { .string($0) } ?? .null))
        fields.append(("clock", clock))
        fields.append(("apps", .array(apps)))
        fields.append(("scans", .array(scans)))
        fields.append(("links", .array(links)))
        fields.append(("unmatched", .array(unmatched)))
        fields.append(("notes", .array(a.notes.map { .string($0) })))
        return .object(fields)
    }

    static func json(_ f: AppAttribution.AppFigures) -> JSONValue {
        var m: [(String, JSONValue)] = [("name", .string(f.name)), ("uid", f.uid.map { .int($0) } ?? .null), ("filtered", .bool(f.filtered))]
        m.append(("report_started", .int(f.reportStarted)))
        m.append(("report_stopped", .int(f.reportStopped)))
        m.append(("report_total_ms", f.reportTotalMs.map { .int(Int($0)) } ?? .null))
        m.append(("kept_in_span", .int(f.keptInSpan)))
        m.append(("kept_in_span_ms", .int(Int(f.keptInSpanMs))))
        m.append(("matched", .int(f.matched)))
        m.append(("matched_ms", .int(Int(f.matchedMs))))
        m.append(("matched_reports", .int(f.matchedReports)))
        m.append(("connections", .int(f.connections)))
        m.append(("matched_links", .int(f.matchedLinks)))
        return .object(m)
    }

    static func json(_ s: AppAttribution.Scan, end: Timestamp) -> JSONValue {
        var m: [(String, JSONValue)] = [("controller", .int(Int(s.controller))), ("start", .number(s.start.timestamp.decimalString()))]
        m.append(("end", s.end.map { .number($0.decimalString()) } ?? .null))
        m.append(("duration_s", .number(DecimalText.fixed(Double(s.duration(captureEnd: end)) / 1e9, fractionDigits: 3))))
        m.append(("filter_index", s.filterIndex.map { .int(Int($0)) } ?? .null))
        m.append(("all_pass", s.allPass.map { .bool($0) } ?? .null))
        m.append(("reports", .int(s.reports)))
        m.append(("owner", owner(s.owner)))
        return .object(m)
    }

    static func json(_ u: AppAttribution.Unmatched, _ a: AppAttribution) -> JSONValue {
        let app = a.report.scanners[u.ref.app]
        let scan = app.scans[u.ref.scan]
        var m: [(String, JSONValue)] = [("app", .string(app.name)), ("start_local", .string(scan.start.description))]
        m.append(("duration_ms", .int(Int(scan.durationMs))))
        m.append(("reason", .string(u.reason)))
        return .object(m)
    }

    public static func json(_ focus: AppFocus) -> JSONValue {
        .object([("name", .string(focus.app)), ("attributed", .bool(focus.attributed)),
                 ("fallback", focus.fallback.map { .string($0) } ?? .null),
                 ("others", .array(focus.others.map { o in
                     .object([("owner", .string(o.owner)), ("scans", .int(o.scans)),
                              ("scan_s", .number(DecimalText.fixed(Double(o.scanNanoseconds) / 1e9, fractionDigits: 3))),
                              ("charge_mc", .number(DecimalText.fixed(o.chargeMC, fractionDigits: 4))), ("links", .int(o.links))])
                 }))])
    }

    /// A scan finding's owner by its records: each record goes to the shortest scan on the controller that holds
    /// it (the app's, with `preferring`, when one does); the owner most records go to.
    static func byRecords(_ f: Finding, _ a: AppAttribution, captureEnd: Timestamp, preferring app: String?) -> Owner? {
        var votes: [(Owner, Int)] = []
        for r in f.records {
            let t = r.timestamp
            let holding = a.scans.filter { $0.controller == f.controller && $0.start.timestamp <= t && ($0.end ?? captureEnd) >= t }
            let pool = app.map { name in holding.filter { $0.owner.includes(name) } }.flatMap { $0.isEmpty ? nil : $0 } ?? holding
            guard let s = pool.min(by: { $0.duration(captureEnd: captureEnd) < $1.duration(captureEnd: captureEnd) }) else { continue }
            if let i = votes.firstIndex(where: { $0.0.name == s.owner.name }) { votes[i].1 += 1 } else { votes.append((s.owner, 1)) }
        }
        return votes.max { $0.1 < $1.1 }?.0
    }

    /// Gives each finding its owner: its link's, or the scan it overlaps most.
    /// `preferring`: the app `--app` audits, whose scans a scan finding overlapping them concerns.
    public static func assignOwners(_ findings: inout [Finding], _ a: AppAttribution, captureEnd: Timestamp?, preferring app: String? = nil) {
        for i in findings.indices { assignOwner(&findings[i], a, captureEnd: captureEnd, preferring: app) }
    }

    /// `assignOwners` for one finding (findings finished one at a time, `Auditor.audit(_:file:judged:spill:finishing:)`).
    public static func assignOwner(_ finding: inout Finding, _ a: AppAttribution, captureEnd: Timestamp?, preferring app: String? = nil) {
        let end = captureEnd ?? Timestamp(nanoseconds: Timestamp.limit)
        if let c = finding.connection {
            finding.owner = a.linkOwner(id: c.id)
        } else if let voted = byRecords(finding, a, captureEnd: end, preferring: app) {
            finding.owner = voted
        } else {
            finding.owner = a.scanOwner(controller: finding.controller, start: finding.start, end: finding.end,
                                        captureEnd: end, preferring: app)
        }
    }
}

extension String {
    /// Without the indentation of a nested line.
    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}
