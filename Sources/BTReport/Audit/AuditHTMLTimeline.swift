import BTWire
import BTCapture
import BTTrack
import BTDecode
import BTRules
import BTEnergy

/// What the HTML report's timeline draws for one capture, as the page's JSON: lanes (scanning, advertising,
/// connection attempts, one per connection) of phases `[start, end, kind, title]` in seconds from the capture's
/// first record, each lane's radio charge (the phone's, `EnergyReport`), and the findings pinned on their lane.
/// Per-packet traffic is already summarised by the tracker (activity runs, discovery procedures, idle gaps), so
/// a phase is one of those: a long capture stays a few thousand phases.
///
/// Written as it is made (`write`): a lane's phases are made when the lane is written, a link's read back from
/// its record when it was judged early (`AuditHTMLLinks`); memory keeps a byte per link for the lanes, and the
/// findings pinned on them wait sorted in a file.
struct AuditHTMLTimeline {
    /// Phase kinds, each its colour in the page's style (`.k-…`).
    enum Kind: String, CaseIterable {
        case scanFiltered = "scan", scanUnfiltered = "scan-dup", advertising, attemptCancelled = "attempt-cancelled"
        case attemptFailed = "attempt-failed", connecting, link, mtu, security, discovery, activity, idle
        case parameters, error, disconnect, other

        /// Its place among the kinds, as a judged link's record holds it.
        var code: UInt8 { UInt8(Self.allCases.firstIndex(of: self) ?? Self.allCases.count - 1) }
        init(code: UInt8) { self = Int(code) < Self.allCases.count ? Self.allCases[Int(code)] : .other }
    }

    struct Phase {
        var start: Timestamp
        var end: Timestamp
        var kind: Kind
        var title: String
        /// Set in a lane of packed connections, where the lane is no one connection.
        var connection: Int?
    }

    /// Where a lane's phases come from, made as it is written.
    enum Source {
        case scans, advertising, attempts
        /// The link at this place among the page's links.
        case link(Int)
        /// The links packed into the `n`th lane of packed connections (`placement`).
        case packed(Int)
    }

    struct Lane {
        var label: String
        var kind: String
        var connection: Int?
        var source: Source
        var cost: RadioCost
    }

    /// A finding pinned on a lane: the lane, the link's place among the page's links (0 on a lane of no link),
    /// the finding's place. The page lists them in this order.
    struct Mark: Comparable {
        var lane: UInt32
        var position: UInt32
        var finding: UInt32

        static func < (a: Mark, b: Mark) -> Bool { (a.lane, a.position, a.finding) < (b.lane, b.position, b.finding) }
    }

    var first: Timestamp
    var last: Timestamp
    var lanes: [Lane] = []
    var findings: Findings
    var capture: Int
    let page: AuditHTML.PageLinks
    let report: EnergyReport
    /// Per link (by its place): its lane among the packed ones (`Placement.packedMask`; `Placement.far` when in
    /// `farLanes`) and whether the budget left its events out (`Placement.alone`, `eventPhaseBudget`). A byte a
    /// link: a long capture has hundreds of thousands.
    var placement: [UInt8]
    /// The packed lanes of links placed past `Placement.far`, by the link's place (captures whose links overlap
    /// by the hundred: a lost disconnection leaves a link up to the capture's end).
    var farLanes: [Int: Int] = [:]
    /// The findings pinned on lanes, sorted in runs set aside in the model's scratch directory (12 bytes a finding).
    var marks: SortedRuns<Mark>

    enum Placement {
        static let alone: UInt8 = 0x80
        static let packedMask: UInt8 = 0x7F
        static let far: UInt8 = 0x7F
    }

    /// Marks sorted in memory at once, unless told otherwise.
    static let markRunLength = 1 << 13

    /// Whether a capture has a timeline: one with a record.
    static func isDrawn(_ model: CaptureModel) -> Bool { model.firstTimestamp != nil && model.lastTimestamp != nil }

    init?(page: AuditHTML.PageLinks, report: EnergyReport, findings: Findings, capture: Int, markRunLength: Int = Self.markRunLength) {
        let model = page.model
        guard let first = model.firstTimestamp, let last = model.lastTimestamp else { return nil }
        self.first = first
        self.last = last
        self.findings = findings
        self.capture = capture
        self.page = page
        self.report = report
        placement = Array(repeating: 0, count: page.count)
        marks = SortedRuns(directory: model.scratchDirectory, runLength: markRunLength)
        let categories = Dictionary(RuleRegistry.descriptions.map { ($0.id, $0.category) }, uniquingKeysWith: { a, _ in a })
        let hasAdvertising = !model.ownAdvertising.isEmpty, hasAttempts = !model.failedConnections.isEmpty
        lanes.append(Lane(label: "scanning", kind: "scanning", source: .scans,
                          cost: report.scans.reduce(.zero) { $0 + $1.phone }))
        let advertisingLane = hasAdvertising ? lanes.count : nil
        if hasAdvertising {
            lanes.append(Lane(label: "advertising", kind: "advertising", source: .advertising,
                              cost: report.advertising.reduce(.zero) { $0 + $1.phone }))
        }
        let attemptsLane = hasAttempts ? lanes.count : nil
        if hasAttempts {
            lanes.append(Lane(label: "connection attempts", kind: "attempts", source: .attempts, cost: .zero))
        }
        // A lane per connection, or past `connectionLanes` connections packed into as few lanes as never overlap.
        let connectionLanes = lanes.count
        let packed = page.count > Self.connectionLanes
        var laneEnds: [Timestamp] = []
        var eventPhases = 0
        for (position, link) in zip(0..<page.count, report.links) {
            let entry = page.lanePart(position, end: link.end)
            precondition(entry.link.id == link.connection.id, "the energy report's links are the page's, in id order")
            if eventPhases + entry.events > Self.eventPhaseBudget {
                // The budget spent: the link alone, so a long capture's page stays a few MB.
                placement[position] |= Placement.alone
            } else {
                eventPhases += entry.events
            }
            let c = entry.link
            guard packed else {
                let label = "#\(c.id) \(c.shortLinkName)" + (c.peerAddress.map { " \($0.description.suffix(8))" } ?? "")
                lanes.append(Lane(label: label, kind: "connection", connection: c.id, source: .link(position), cost: link.phone))
                continue
            }
            let start = entry.firstStart
            let slot = laneEnds.firstIndex { $0 <= start } ?? laneEnds.count
            if slot == laneEnds.count {
                laneEnds.append(link.end)
                lanes.append(Lane(label: slot == 0 ? "connections" : "connections \(slot + 1)", kind: "connections",
                                  source: .packed(slot), cost: .zero))
            }
            laneEnds[slot] = link.end
            if slot < Int(Placement.far) {
                placement[position] |= UInt8(slot)
            } else {
                placement[position] |= Placement.far
                farLanes[position] = slot
            }
            let lane = connectionLanes + slot
            lanes[lane].cost = lanes[lane].cost + link.phone
        }
        // Each finding on its link's lane (one on a link not on the page is not drawn); one on no connection on the
        // lane of its rule's category: advertising, connection attempts, or else scanning.
        for i in findings.indices {
            let f = findings[i]
            var mark = Mark(lane: 0, position: 0, finding: UInt32(i))
            if let c = f.connection {
                guard let position = page.position(of: c.id) else { continue }
                mark.lane = UInt32(connectionLanes + (packed ? packedLane(position) : position))
                mark.position = UInt32(position)
            } else {
                switch categories[f.id] {
                case .advertising? where advertisingLane != nil: mark.lane = UInt32(advertisingLane!)
                case .connection? where attemptsLane != nil: mark.lane = UInt32(attemptsLane!)
                default: mark.lane = 0
                }
            }
            marks.append(mark) { (<) }
        }
    }

    /// The packed lane of the link at `position`.
    func packedLane(_ position: Int) -> Int {
        let slot = placement[position] & Placement.packedMask
        return slot == Placement.far ? farLanes[position]! : Int(slot)
    }

    /// A link's phases as its lane draws them: the link alone when the budget left its events out.
    func linkPhases(_ position: Int) -> [Phase] {
        var (phases, events) = page.phases(position, end: report.links[position].end)
        guard placement[position] & Placement.alone != 0 else { return phases }
        phases.removeAll { $0.kind != .connecting && $0.kind != .link }
        if let i = phases.firstIndex(where: { $0.kind == .link }) {
            phases[i].title += " (its \(Plural.of(events, "event")) not drawn: the page draws \(Self.eventPhaseBudget) at most; btlens timeline lists them)"
        }
        return phases
    }

    /// The phases of a lane, each handed to `body` as it is made.
    func forEachPhase(of lane: Lane, _ body: (Phase) -> Void) {
        let model = page.model
        switch lane.source {
        case .scans:
            for s in model.scans {
                body(Phase(start: s.start.timestamp, end: s.end?.timestamp ?? last, kind: s.filterDuplicates ? .scanFiltered : .scanUnfiltered,
                           title: "scan \(s.isActive ? "active" : "passive"), interval \(Format.ms(s.intervalMilliseconds)) ms window \(Format.ms(s.windowMilliseconds)) ms, "
                               + "duplicates \(s.filterDuplicates ? "filtered" : "not filtered"), \(Plural.of(s.reports, "report")) from \(Plural.of(s.uniqueDevices, "device"))"))
            }
        case .advertising:
            for a in model.ownAdvertising {
                body(Phase(start: a.start.timestamp, end: a.end?.timestamp ?? last, kind: .advertising,
                           title: "advertising set \(a.setHandle)\(a.isExtended ? " (extended)" : "")"
                               + (a.connectionsWhileAdvertising.isEmpty ? "" : ", \(Plural.of(a.connectionsWhileAdvertising.count, "connection")) came up")))
            }
        case .attempts:
            // From the create command (when the capture shows it) to the event that ended the attempt.
            for f in model.failedConnections {
                body(Phase(start: (f.requested ?? f.at).timestamp, end: f.at.timestamp, kind: f.cancelledByHost ? .attemptCancelled : .attemptFailed,
                           title: "connection attempt " + FailedConnectionText.describe(f)))
            }
        case .link(let position):
            linkPhases(position).forEach(body)
        case .packed(let slot):
            for position in placement.indices where packedLane(position) == slot {
                let id = page.id(position)
                for var p in linkPhases(position) {
                    p.connection = id
                    body(p)
                }
            }
        }
    }

    /// Phases other than connecting and the link itself: a link's events (`eventPhaseBudget`).
    static func eventCount(_ phases: [Phase]) -> Int {
        phases.count - phases.prefix { $0.kind == .connecting || $0.kind == .link }.count
    }

    /// Connections drawn a lane each up to this many; more are packed (`init`).
    static let connectionLanes = 40
    /// Connection events drawn per capture at most; connections past it show their link alone.
    static let eventPhaseBudget = 10_000

    /// A connection's phases: connecting (from our create command), the link, then one per timeline event but
    /// the connection itself, over the span it covers (a discovery procedure, an activity run, an idle gap) or
    /// at its instant, titled as `btlens timeline` words it.
    static func phases(_ c: Connection, model: CaptureModel, end: Timestamp) -> [Phase] {
        var out: [Phase] = []
        if let requested = c.connectRequested, requested.timestamp < c.start.timestamp {
            out.append(Phase(start: requested.timestamp, end: c.start.timestamp, kind: .connecting,
                             title: "connecting for \(TimeFormat.human(c.start.timestamp - requested.timestamp))"))
        }
        out.append(Phase(start: c.start.timestamp, end: end, kind: .link,
                         title: "connection #\(c.id) \(c.linkName)" + (c.peerAddress.map { " to \($0)" } ?? "") + ": "
                             + TimelineReport.summaryLine(c, model: model)))
        for event in c.events {
            let kind: Kind
            var until = event.at.timestamp
            switch event.kind {
            case .connected: continue
            case .mtuExchange, .enhancedATTBearers, .enhancedATTReconfigured: kind = .mtu
            case .pairing, .encryptionChanged: kind = .security
            case .discovery(let d):
                kind = .discovery
                until = c.discoveries[d].last.timestamp
            case .activity(let r):
                kind = .activity
                until = c.runs[r].last.timestamp
            case .subscription, .executeWrite: kind = .activity
            case .idle(let to):
                kind = .idle
                until = to.timestamp
            case .parametersRequested, .parameterRequestAnswered, .parametersChanged, .phyChanged, .dataLengthChanged,
                 .linkLayerControl, .l2capChannel: kind = .parameters
            case .attError, .attTimeout: kind = .error
            case .disconnected, .closedByReset, .linkLost: kind = .disconnect
            }
            out.append(Phase(start: event.at.timestamp, end: max(until, event.at.timestamp), kind: kind,
                             title: TimelineEventDescription.describe(event, in: c).text))
        }
        return out
    }

    /// Seconds from the capture's first record, to the microsecond.
    func seconds(_ t: Timestamp) -> JSONValue { .number(DecimalText.fixed(Double(t.nanoseconds - first.nanoseconds) / 1e9, fractionDigits: 6)) }

    /// The capture's object in the page's JSON (`{"file", "t0", "span", "lanes", "findings"}`) at nesting `level`,
    /// written a lane and a phase at a time.
    mutating func write(file: String, to writer: JSONStreamWriter, level: Int) {
        // The marks are read once, handed over (the closures below read the rest of `self`).
        var pinned = SortedRuns<Mark>(directory: nil, runLength: 1)
        swap(&pinned, &marks)
        writer.object(level: level) { members in
            members.member("file", .string(file))
            members.member("t0", .number(DecimalText.fixed(Double(first.nanoseconds) / 1e9, fractionDigits: 6)))
            members.member("span", seconds(last))
            members.objects("lanes", lanes) { lane, members in
                members.member("label", .string(lane.label))
                members.member("kind", .string(lane.kind))
                members.member("conn", lane.connection.map { .int($0) } ?? .null)
                members.member("mc", .number(DecimalText.fixed(lane.cost.chargeMC, fractionDigits: 3)))
                members.member("cost", .string(AuditHTMLEnergy.radioTitle(lane.cost)))
                members.elements("phases") { phases in
                    forEachPhase(of: lane) { p in
                        phases.next()
                        writer.value(.array([seconds(p.start), seconds(max(p.end, p.start)), .string(p.kind.rawValue), .string(p.title)]
                                            + (p.connection.map { [JSONValue.int($0)] } ?? [])), level: phases.level + 1)
                    }
                }
            }
            members.elements("findings") { elements in
                pinned.drain(by: <) { mark in
                    let i = Int(mark.finding)
                    let f = findings[i]
                    elements.next()
                    writer.value(.object([
                        ("key", .string(AuditHTML.key(capture: capture, finding: i))), ("lane", .int(Int(mark.lane))),
                        ("s", seconds(f.start)), ("e", seconds(max(f.end, f.start))), ("sev", .string(f.severity.rawValue)),
                        ("id", .string(f.id)), ("conn", f.connection.map { .int($0.id) } ?? .null),
                        ("records", .array(f.records.map { .int($0.number) })),
                    ]), level: elements.level + 1)
                }
            }
        }
    }

    /// What each colour means.
    static let legend: String = {
        let names: [(Kind, String)] = [(.scanFiltered, "scan"), (.scanUnfiltered, "scan, duplicates not filtered"), (.advertising, "advertising"),
                                        (.attemptCancelled, "attempt cancelled"), (.attemptFailed, "attempt failed"), (.connecting, "connecting"),
                                        (.link, "link"), (.mtu, "MTU / EATT"), (.security, "pairing, encryption"), (.discovery, "discovery"),
                                        (.activity, "ATT activity"), (.idle, "idle"), (.parameters, "parameters, PHY, LL"), (.error, "ATT error"),
                                        (.disconnect, "disconnect")]
        return "<div class=\"legend\">" + names.map { "<span><i style=\"background:var(--\($0.0.rawValue))\"></i>\($0.1)</span>" }.joined()
            + "<span><i style=\"background:var(--warning);border-radius:50%\"></i>finding</span></div>"
    }()

    /// The timeline's place on the page and its controls; the script draws into `tl-N`.
    static func controls(capture: Int) -> String {
        "<div class=\"tl-wrap\"><div class=\"tl-controls\" data-capture=\"\(capture)\">"
            + "<button class=\"zoom-in\" title=\"zoom in (+)\" aria-label=\"zoom in\">+</button><button class=\"zoom-out\" title=\"zoom out (−)\" aria-label=\"zoom out\">−</button>"
            + "<button class=\"pan-left\" title=\"earlier (←)\" aria-label=\"pan earlier\">←</button><button class=\"pan-right\" title=\"later (→)\" aria-label=\"pan later\">→</button>"
            + "<button class=\"zoom-reset\" title=\"whole capture (0)\">whole capture</button>"
            + "<label>from <input type=\"range\" class=\"range-start\" min=\"0\" max=\"1000\" value=\"0\" aria-label=\"visible range start\"></label>"
            + "<label>to <input type=\"range\" class=\"range-end\" min=\"0\" max=\"1000\" value=\"1000\" aria-label=\"visible range end\"></label>"
            + "<span class=\"range-text\"></span></div>" + legend
            + "<div class=\"tl\" id=\"tl-\(capture)\" tabindex=\"0\" role=\"group\" aria-label=\"timeline: + and − zoom, ← and → pan, 0 shows the whole capture\" "
            + "aria-describedby=\"tl-hint-\(capture)\" aria-keyshortcuts=\"+ - ArrowLeft ArrowRight 0 Home\"></div>"
            + "<p class=\"hint\" id=\"tl-hint-\(capture)\">Wheel or +/− zooms, drag or ←/→ pans, 0 shows the whole capture (keys once the timeline has the focus). "
            + "Click a finding to see its span and row, a connection to open its timeline; in the findings table Enter selects the focused row.</p></div>"
    }
}
