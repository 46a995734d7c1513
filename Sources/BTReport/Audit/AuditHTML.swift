import BTWire
import BTCapture
import BTTrack
import BTRules
import BTEnergy

/// The interactive audit page, one self-contained file (no network, fonts, images or external scripts): per
/// capture a zoomable timeline (drawn by a small inline script from one JSON blob, `AuditHTMLTimeline`), the
/// findings grouped as text and Markdown group them, the energy panel (`AuditHTMLEnergy`) and each connection's
/// text timeline beside its GATT tree; the advice once per rule at the end. Everything but the timeline is plain
/// HTML, so the page prints and reads without the script.
public enum AuditHTML {
    static func escape(_ s: String) -> String { MarkupEscaping.escape(s) }

    /// What the page reads of one capture: its model and, when its links were judged as it was read, what was set
    /// aside of each judged link (`AuditHTMLLinks`).
    public struct Capture: @unchecked Sendable {
        public var model: CaptureModel
        public var judged: AuditHTMLLinks?

        public init(model: CaptureModel, judged: AuditHTMLLinks? = nil) {
            self.model = model
            self.judged = judged
        }
    }

    /// The whole page as one string: `write` gathered (tests and small runs).
    public static func render(_ run: AuditRun, models: [String: CaptureModel], energy: EnergyModel = EnergyModel()) -> String {
        var out = ""
        write(run, captures: models.mapValues { Capture(model: $0) }, energy: energy) { out += $0 }
        return out
    }

    /// The page, piece by piece as it is made (`btlens audit --format html`): never held whole. `energy` prices the
    /// energy panel; a capture's judged links must have been priced with it too (`AuditHTMLLinks(energy:)`).
    /// `sortRunLength`: values sorted in memory at once where the page sorts per link or finding (the timeline's
    /// findings, the GATT peers' links) in runs set aside in the model's scratch directory; nil, each sort's own.
    public static func write(_ run: AuditRun, captures: [String: Capture], energy: EnergyModel = EnergyModel(),
                             sortRunLength: Int? = nil, to write: @escaping (String) -> Void) {
        // The page's parts, one line between each.
        var started = false
        func part(_ text: String) {
            if started { write("\n") }
            started = true
            write(text)
        }
        part("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             + "<meta name=\"color-scheme\" content=\"light dark\"><title>btlens audit</title><style>\(AuditHTMLAssets.style)</style></head><body>")
        part("<header><h1>btlens audit</h1><p><strong>\(escape(run.summary))</strong>" + (run.failOn.map { " — fails on \($0.rawValue) and above" } ?? "") + "</p>")
        if let waste = run.wasteLine { part("<p class=\"waste\">\(escape(waste[waste.startIndex].uppercased() + waste.dropFirst())).</p>") }
        if run.status == .unreadable { part("<p class=\"error\"><strong>Incomplete: an input could not be read.</strong></p>") }
        part("</header><main>")
        // Each capture's timeline, made and written into the page's JSON at its end: its lanes (a few bytes a link
        // and a finding) are then not held while the panels are written.
        var timelines: [(file: String, timeline: (() -> AuditHTMLTimeline?)?)] = []
        for (index, capture) in run.captures.enumerated() {
            part("<section class=\"capture\" id=\"capture-\(index)\"><h2>\(escape(capture.file))</h2>")
            if let error = capture.error {
                part("<p class=\"error\">unreadable: \(escape(error))</p></section>")
                timelines.append((capture.file, nil))
                continue
            }
            for note in capture.notes { part("<p class=\"note\">\(escape(note))</p>") }
            if let attribution = capture.attribution {
                // Which app each scan and link was: the text report's section, as a list.
                let lines = AttributionReport.lines(attribution, focus: capture.focus)
                part("<details class=\"note\"><summary>\(escape(lines[0]))</summary><ul>"
                     + lines.dropFirst().map { "<li>\(escape($0.trimmingLeadingSpaces))</li>" }.joined() + "</ul></details>")
            }
            let page = captures[capture.file].map(PageLinks.init)
            let report = page.map { EnergyReport(model: $0.model, energy: energy, rows: $0.judged?.rows) }
            if let page, let report, AuditHTMLTimeline.isDrawn(page.model) {
                let findings = capture.findings
                timelines.append((capture.file, {
                    AuditHTMLTimeline(page: page, report: report, findings: findings, capture: index,
                                      markRunLength: sortRunLength ?? AuditHTMLTimeline.markRunLength)
                }))
                part(AuditHTMLTimeline.controls(capture: index))
            } else {
                timelines.append((capture.file, nil))
            }
            part("")
            findingsTable(capture, index: index, write)
            if let report { part(AuditHTMLEnergy.panel(report)) }
            if let page {
                part("")
                connectionPanels(page, capture: index, sortRunLength: sortRunLength ?? GATTLinkSpill.runLength, write)
            }
            part("</section>")
        }
        part(adviceSection(run))
        part("</main><div id=\"tip\" role=\"tooltip\" hidden></div>")
        part("<footer class=\"advice\">Generated by btlens \(escape(run.version)).</footer>")
        part("<script type=\"application/json\" id=\"btlens-data\">")
        // "<" only occurs inside JSON strings, where \u003c reads the same: the blob can never close its element.
        let writer = JSONStreamWriter(indent: nil) { text in
            write(text.utf8.contains(UInt8(ascii: "<")) ? text.replacingOccurrences(of: "<", with: "\\u003c") : text)
        }
        writer.object { members in
            members.elements("captures") { blobs in
                for (file, timeline) in timelines {
                    blobs.next()
                    if var timeline = timeline?() {
                        timeline.write(file: file, to: writer, level: blobs.level + 1)
                    } else {
                        writer.value(.object([("file", .string(file))]), level: blobs.level + 1)
                    }
                }
            }
        }
        write("</script>")
        part("<script>\(AuditHTMLAssets.script)</script></body></html>")
    }

    /// A capture's links in id order, as the page reads them: the model's, and those judged before the capture
    /// ended read back from their records (`AuditHTMLLinks`). Memory keeps a few bytes per link the model holds
    /// whole, none per judged link.
    struct PageLinks {
        let model: CaptureModel
        let judged: AuditHTMLLinks?
        /// By id: the place of a judged link's record in id order (`first`), or of a link in `model.connections`.
        private var order = MergedOrder()

        init(_ capture: Capture) {
            model = capture.model
            judged = capture.judged
            let connections = model.connections
            let records = judged?.records
            records?.sortByID()
            let ids = records?.ids ?? []
            var i = 0, k = 0
            while i < connections.count || k < ids.count {
                let recordID = k < ids.count ? Int(ids[k]) : .max
                if i < connections.count && connections[i].id < recordID {
                    order.appendSecond(i)
                    i += 1
                } else {
                    // A judged link the model kept slim is read from its record.
                    if i < connections.count && connections[i].id == recordID { i += 1 }
                    order.appendFirst()
                    k += 1
                }
            }
        }

        var count: Int { order.count }

        /// The model's link at `position`, when it is held whole (not judged early).
        func whole(_ position: Int) -> Connection? {
            if case .second(let i) = order[position] { return model.connections[i] }
            return nil
        }

        /// The place of the judged link's record at `position`, when it was judged early.
        private func record(_ position: Int) -> Int? {
            if case .first(let k) = order[position] { return k }
            return nil
        }

        /// The place of the link `id` (a binary search: the links are in id order); nil when it is not on the page.
        func position(of id: Int) -> Int? {
            let k = (0..<count).partitioningIndex { self.id($0) >= id }
            return k < count && self.id(k) == id ? k : nil
        }

        func id(_ position: Int) -> Int {
            switch order[position] {
            case .second(let i): return model.connections[i].id
            case .first(let k): return Int(judged?.records.ids[k] ?? 0)
            }
        }

        /// What the lanes' packing reads of the link at `position`, whose lane ends at `end`.
        func lanePart(_ position: Int, end: Timestamp) -> (link: LinkSummary, firstStart: Timestamp, events: Int) {
            if let c = whole(position) {
                let phases = AuditHTMLTimeline.phases(c, model: model, end: end)
                return (LinkSummary(c), phases.first?.start ?? c.start.timestamp, AuditHTMLTimeline.eventCount(phases))
            }
            let h = judged!.header(at: record(position)!)
            return (h.link, h.firstStart, h.events)
        }

        /// The timeline phases of the link at `position`, and how many are events.
        func phases(_ position: Int, end: Timestamp) -> (phases: [AuditHTMLTimeline.Phase], events: Int) {
            if let c = whole(position) {
                let phases = AuditHTMLTimeline.phases(c, model: model, end: end)
                return (phases, AuditHTMLTimeline.eventCount(phases))
            }
            let link = judged!.link(at: record(position)!)
            return (link.phases, link.events)
        }

        /// The summary of the link at `position`.
        func summary(_ position: Int) -> LinkSummary {
            if let c = whole(position) { return LinkSummary(c) }
            return judged!.header(at: record(position)!).link
        }

        /// What the text timeline prints of the link at `position`; nil for a judged link whose text was not kept
        /// (the panels' budget was spent before it).
        func printed(_ position: Int) -> TimelineLinkLines.Link? {
            if let c = whole(position) { return TimelineLinkLines.Link(c, model: model) }
            return judged?.lines.link(id: id(position))
        }

        /// The capture's GATT peers, in the order `GATTReport.peers` gives them, each made when `body` gets it.
        func forEachGATTPeer(sortRunLength: Int, _ body: (GATTReport.Peer) -> Void) {
            guard let judged else { return GATTReport.peers(model).forEach(body) }
            judged.gatt.forEachPeer(others: model.connections.filter { !$0.isJudged }, sortingIn: model.scratchDirectory,
                                    runLength: sortRunLength, body)
        }
    }

    /// Key of a finding across the page: its row's id, its mark's `data-f`.
    static func key(capture: Int, finding: Int) -> String { "f\(capture)-\(finding)" }

    static func place(_ f: Finding) -> String { f.connection.map { "#\($0.id) <code>\(escape($0.shortLinkName))</code>" } ?? "—" }

    static func cost(_ f: Finding) -> String { escape(f.cost.map { AuditCost.mAh($0.phone.chargeMC) } ?? "—") }

    /// Sort keys a row group carries: severity rank, phone charge, first time (report order).
    static func sortKeys(_ severity: Severity, charge: Double, order: Int) -> String {
        "data-sev=\"\(AuditCost.severityRank(severity))\" data-cost=\"\(DecimalText.fixed(charge, fractionDigits: 6))\" data-order=\"\(order)\""
    }

    static func findingRow(_ f: Finding, key: String, member: Bool) -> String {
        "<tr class=\"\(member ? "member" : "finding-row")\" id=\"\(key)\" data-f=\"\(key)\" tabindex=\"0\"\(member ? " hidden" : "")>"
            + "<td class=\"sev \(f.severity.rawValue)\">\(f.severity.rawValue)</td><td><a href=\"#advice-\(f.id)\"><code>\(f.id)</code></a> \(escape(f.rule))</td>"
            + "<td>\(place(f))</td><td>\(escape(f.message))\(f.owner.map { "<br><small>owner: \(escape($0.name)) (\(escape($0.evidence)))</small>" } ?? "")</td><td class=\"cost\">\(cost(f))</td>"
            + "<td class=\"records\">\(escape(AuditText.records(f.records, limit: 4)))</td></tr>"
    }

    /// Repeats of one rule on one peer as one expandable row (`AuditCost.grouped`, as text and Markdown), the
    /// rest a row each; most severe and costliest first, re-sortable by the script. Written a row group at a time.
    static func findingsTable(_ capture: AuditedCapture, index: Int, _ write: (String) -> Void) {
        guard !capture.findings.isEmpty else { return write("<p>No findings.</p>") }
        let (groups, rest) = AuditCost.groupedIndices(capture.findings)
        var out = "<table class=\"findings\" data-capture=\"\(index)\"><thead><tr>"
            + "<th><button class=\"sort\" data-sort=\"sev\" title=\"sort by severity\">severity</button></th><th>rule</th><th>where</th><th>finding</th>"
            + "<th><button class=\"sort\" data-sort=\"cost\" title=\"sort by the charge it would save\">saves</button></th><th>records</th></tr></thead>"
        var order = 0
        for g in groups {
            write(out)
            out = ""
            out += "<tbody class=\"group\" \(sortKeys(g.severity, charge: g.charge, order: order))><tr class=\"group-row\">"
                + "<td class=\"sev \(g.severity.rawValue)\"><button class=\"expand\" aria-expanded=\"false\" aria-label=\"show each finding\" title=\"show each finding\">▸</button> \(g.severity.rawValue)</td>"
                + "<td><a href=\"#advice-\(g.id)\"><code>\(g.id)</code></a> \(escape(g.rule))</td><td>\(escape(g.connections))</td>"
                + "<td>\(escape(g.line)) <span class=\"count\">×\(g.findings.count)</span></td><td class=\"cost\">\(escape(AuditCost.mAh(g.charge)))</td><td></td></tr>"
            write(out)
            for i in g.indices.lazy.map(Int.init) { write(findingRow(capture.findings[i], key: key(capture: index, finding: i), member: true)) }
            out = "</tbody>"
            order += 1
        }
        for i in AuditCost.ordered(rest.lazy.map(Int.init), of: capture.findings) {
            write(out)
            let f = capture.findings[i]
            out = "<tbody class=\"single\" \(sortKeys(f.severity, charge: f.cost?.phone.chargeMC ?? 0, order: order))>"
                + findingRow(f, key: key(capture: index, finding: i), member: false) + "</tbody>"
            order += 1
        }
        write(out + "</table>")
    }

    /// Timeline lines the connection panels of one capture hold at most; connections past it point to
    /// `btlens timeline`, so a long capture's page stays a few MB.
    static let panelLineBudget = 5_000

    /// Timeline lines a panel's link counts at least (`panelLineBudget`): its lines in the page but the capture's
    /// span, the controller's debug log and its quality reports, which may come after it was judged.
    static func fewestPanelLines(_ link: TimelineLinkLines.Link) -> Int {
        4 + (link.heading.opening == nil ? 0 : 1) + link.lines.count + (link.droppedEvents > 0 ? 1 : 0)
    }

    /// Each connection's lines as `btlens timeline` prints them (its renderer, filtered to the link), each line
    /// carrying its record for the script to light up, beside the peer's GATT tree as `btlens gatt` prints it
    /// (once per peer, in a template the script copies into the panel it opens). Written a peer and a connection
    /// at a time.
    static func connectionPanels(_ page: PageLinks, capture: Int, sortRunLength: Int = GATTLinkSpill.runLength, _ write: (String) -> Void) {
        // Each link's place on the page (in id order) beside its peer's number, sorted by place in runs set aside
        // in the model's scratch directory: the panels, written in place order, read them back in that order.
        var peers = SortedRuns<UInt64>(directory: page.model.scratchDirectory, runLength: sortRunLength)
        var i = 0
        page.forEachGATTPeer(sortRunLength: sortRunLength) { p in
            defer { i += 1 }
            for c in p.links {
                if let k = page.position(of: c.id) { peers.append(UInt64(k) << 32 | UInt64(i)) { (<) } }
            }
            write("<template id=\"gatt-\(capture)-\(i)\"><pre class=\"gatt\">\(escape(GATTReport.peerLines(p).joined(separator: "\n")))</pre></template>")
        }
        var lines = 0
        var position = 0
        func panel(_ position: Int, peer: Int?) {
            let c = page.summary(position)
            var body = ""
            if lines < panelLineBudget {
                // Kept for every link the budget may reach (`AuditHTMLLinks`).
                guard let link = page.printed(position) else { preconditionFailure("connection #\(c.id)'s text timeline was not kept") }
                let text = TimelineReport.connectionText(link, model: page.model)
                // The event lines end with the text `linesWithPhases` gives, in its order: pair them to cite records.
                let events = link.lines
                var next = events.startIndex
                for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
                    var record: Int?
                    if next < events.endIndex, line.hasSuffix("  " + events[next].text) {
                        record = events[next].at.number
                        next += 1
                    }
                    body += (record.map { "<span data-r=\"\($0)\">" } ?? "<span>") + escape(String(line)) + "</span>\n"
                    lines += 1
                }
            } else {
                body = escape("This page holds the timelines of the first connections only: run `btlens timeline --connection \(c.id)` for this one.")
            }
            let gatt = peer.map { "data-gatt=\"gatt-\(capture)-\($0)\"" } ?? ""
            write("<section class=\"conn\" id=\"conn-\(capture)-\(c.id)\" \(gatt) tabindex=\"-1\" aria-label=\"connection #\(c.id)\" hidden><h3>Connection #\(c.id) \(escape(c.linkName))"
                  + (c.peerAddress.map { " — \(escape($0.description))" } ?? "") + " <button class=\"close\" title=\"close\" aria-label=\"close the timeline of connection #\(c.id)\">×</button></h3>"
                  + "<div class=\"conn-body\"><pre class=\"conn-timeline\">\(body)</pre><div class=\"gatt-slot\">"
                  + (peer == nil ? "<pre class=\"gatt\">no GATT traffic on this link</pre>" : "") + "</div></div></section>")
        }
        // The panels up to `place`, that one with `peer`.
        func panels(through place: Int, peer: Int?) {
            while position < place { panel(position, peer: nil); position += 1 }
            if place < page.count { panel(position, peer: peer); position += 1 }
        }
        // A place listed twice takes its last peer, as the peers come in order.
        var pending: (position: Int, peer: Int)?
        peers.drain(by: <) { pair in
            let place = Int(pair >> 32), peer = Int(pair & 0xFFFF_FFFF)
            if let p = pending, p.position != place { panels(through: p.position, peer: p.peer) }
            pending = (place, peer)
        }
        if let p = pending { panels(through: p.position, peer: p.peer) }
        panels(through: page.count, peer: nil)
    }

    /// What to do instead, once per rule the run found: the rule's title, the findings' advice (each distinct
    /// text once) or, when they carry none, the rule's advice for each platform.
    static func adviceSection(_ run: AuditRun) -> String {
        guard !run.findings.isEmpty else { return "" }
        var order: [String] = []
        var advice: [String: [String]] = [:]
        for f in run.findings {
            if advice[f.id] == nil { order.append(f.id) }
            if !(advice[f.id]?.contains(f.advice) ?? false) { advice[f.id, default: []].append(f.advice) }
        }
        var out = "<section class=\"advice-list\"><h2>What to do instead</h2><dl>"
        for id in order {
            let d = RuleRegistry.rule(id)?.description
            out += "<dt id=\"advice-\(id)\"><code>\(id)</code> \(escape(d?.name ?? ""))" + (d.map { " — \(escape($0.title))" } ?? "") + "</dt><dd>"
            // Findings' advice is the rule's platform advice, narrowed to the capture's platform when it shows:
            // the rule's own only when findings carry none.
            let texts = (advice[id] ?? []).filter { !$0.isEmpty }
            for a in texts { out += "<p>\(escape(a))</p>" }
            if let d, texts.isEmpty {
                out += "<p class=\"platform\">CoreBluetooth: \(escape(d.coreBluetooth))<br>Android: \(escape(d.android))</p>"
            }
            out += "</dd>"
        }
        return out + "</dl></section>"
    }
}
