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
struct AuditHTMLTimeline {
    /// Phase kinds, each its colour in the page's style (`.k-…`).
    enum Kind: String {
        case scanFiltered = "scan", scanUnfiltered = "scan-dup", advertising, attemptCancelled = "attempt-cancelled"
        case attemptFailed = "attempt-failed", connecting, link, mtu, security, discovery, activity, idle
        case parameters, error, disconnect, other
    }

    struct Phase {
        var start: Timestamp
        var end: Timestamp
        var kind: Kind
        var title: String
        /// Set in a lane of packed connections, where the lane is no one connection.
        var connection: Int?
    }

    struct Lane {
        var label: String
        var kind: String
        var connection: Int?
        var phases: [Phase]
        var findings: [Int]
        var cost: RadioCost
    }

    var first: Timestamp
    var last: Timestamp
    var lanes: [Lane] = []
    var findings: [Finding]
    var capture: Int

    init?(model: CaptureModel, report: EnergyReport, findings: [Finding], capture: Int) {
        guard let first = model.firstTimestamp, let last = model.lastTimestamp else { return nil }
        self.first = first
        self.last = last
        self.findings = findings
        self.capture = capture
        // Findings by connection; one on no connection goes on the lane of its rule's category: advertising,
        // connection attempts, or else scanning.
        var byConnection: [Int: [Int]] = [:]
        var byLane: [String: [Int]] = [:]
        let categories = Dictionary(RuleRegistry.descriptions.map { ($0.id, $0.category) }, uniquingKeysWith: { a, _ in a })
        let hasAdvertising = !model.ownAdvertising.isEmpty, hasAttempts = !model.failedConnections.isEmpty
        for (i, f) in findings.enumerated() {
            if let c = f.connection { byConnection[c.id, default: []].append(i); continue }
            switch categories[f.id] {
            case .advertising? where hasAdvertising: byLane["advertising", default: []].append(i)
            case .connection? where hasAttempts: byLane["attempts", default: []].append(i)
            default: byLane["scanning", default: []].append(i)
            }
        }
        lanes.append(Lane(label: "scanning", kind: "scanning", phases: model.scans.map { s in
            Phase(start: s.start.timestamp, end: s.end?.timestamp ?? last, kind: s.filterDuplicates ? .scanFiltered : .scanUnfiltered,
                  title: "scan \(s.isActive ? "active" : "passive"), interval \(Format.ms(s.intervalMilliseconds)) ms window \(Format.ms(s.windowMilliseconds)) ms, "
                      + "duplicates \(s.filterDuplicates ? "filtered" : "not filtered"), \(Plural.of(s.reports, "report")) from \(Plural.of(s.uniqueDevices, "device"))")
        }, findings: byLane["scanning"] ?? [], cost: report.scans.reduce(.zero) { $0 + $1.phone }))
        if hasAdvertising {
            lanes.append(Lane(label: "advertising", kind: "advertising", phases: model.ownAdvertising.map { a in
                Phase(start: a.start.timestamp, end: a.end?.timestamp ?? last, kind: .advertising,
                      title: "advertising set \(a.setHandle)\(a.isExtended ? " (extended)" : "")"
                          + (a.connectionsWhileAdvertising.isEmpty ? "" : ", \(Plural.of(a.connectionsWhileAdvertising.count, "connection")) came up"))
            }, findings: byLane["advertising"] ?? [], cost: report.advertising.reduce(.zero) { $0 + $1.phone }))
        }
        if hasAttempts {
            // From the create command (when the capture shows it) to the event that ended the attempt.
            lanes.append(Lane(label: "connection attempts", kind: "attempts", phases: model.failedConnections.map { f in
                Phase(start: (f.requested ?? f.at).timestamp, end: f.at.timestamp, kind: f.cancelledByHost ? .attemptCancelled : .attemptFailed,
                      title: "connection attempt " + FailedConnectionText.describe(f))
            }, findings: byLane["attempts"] ?? [], cost: .zero))
        }
        // A lane per connection, or past `connectionLanes` connections packed into as few lanes as never overlap.
        let packed = model.connections.count > Self.connectionLanes
        var laneEnds: [Timestamp] = []
        var eventPhases = 0
        for (c, link) in zip(model.connections, report.links) {
            var phases = Self.phases(c, model: model, end: link.end)
            let events = phases.count - phases.prefix { $0.kind == .connecting || $0.kind == .link }.count
            if eventPhases + events > Self.eventPhaseBudget {
                // The budget spent: the link alone, so a long capture's page stays a few MB.
                phases.removeAll { $0.kind != .connecting && $0.kind != .link }
                if let i = phases.firstIndex(where: { $0.kind == .link }) {
                    phases[i].title += " (its \(Plural.of(events, "event")) not drawn: the page draws \(Self.eventPhaseBudget) at most; btlens timeline lists them)"
                }
            } else {
                eventPhases += events
            }
            guard packed else {
                let label = "#\(c.id) \(c.shortLinkName)" + (c.peerAddress.map { " \($0.description.suffix(8))" } ?? "")
                lanes.append(Lane(label: label, kind: "connection", connection: c.id, phases: phases,
                                  findings: byConnection[c.id] ?? [], cost: link.phone))
                continue
            }
            let start = phases.first?.start ?? c.start.timestamp
            let slot = laneEnds.firstIndex { $0 <= start } ?? laneEnds.count
            if slot == laneEnds.count {
                laneEnds.append(link.end)
                lanes.append(Lane(label: slot == 0 ? "connections" : "connections \(slot + 1)", kind: "connections", phases: [],
                                  findings: [], cost: .zero))
            }
            laneEnds[slot] = link.end
            let lane = lanes.count - laneEnds.count + slot
            lanes[lane].phases += phases.map { var p = $0; p.connection = c.id; return p }
            lanes[lane].findings += byConnection[c.id] ?? []
            lanes[lane].cost = lanes[lane].cost + link.phone
        }
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

    func json(file: String) -> JSONValue {
        var marks: [JSONValue] = []
        for (l, lane) in lanes.enumerated() {
            for i in lane.findings {
                let f = findings[i]
                marks.append(.object([
                    ("key", .string(AuditHTML.key(capture: capture, finding: i))), ("lane", .int(l)),
                    ("s", seconds(f.start)), ("e", seconds(max(f.end, f.start))), ("sev", .string(f.severity.rawValue)),
                    ("id", .string(f.id)), ("conn", f.connection.map { .int($0.id) } ?? .null),
                    ("records", .array(f.records.map { .int($0.number) })),
                ]))
            }
        }
        return .object([
            ("file", .string(file)),
            ("t0", .number(DecimalText.fixed(Double(first.nanoseconds) / 1e9, fractionDigits: 6))),
            ("span", seconds(last)),
            ("lanes", .array(lanes.map { lane in
                .object([
                    ("label", .string(lane.label)), ("kind", .string(lane.kind)),
                    ("conn", lane.connection.map { .int($0) } ?? .null),
                    ("mc", .number(DecimalText.fixed(lane.cost.chargeMC, fractionDigits: 3))),
                    ("cost", .string(AuditHTMLEnergy.radioTitle(lane.cost))),
                    ("phases", .array(lane.phases.map { p in
                        .array([seconds(p.start), seconds(max(p.end, p.start)), .string(p.kind.rawValue), .string(p.title)]
                               + (p.connection.map { [JSONValue.int($0)] } ?? []))
                    })),
                ])
            })),
            ("findings", .array(marks)),
        ])
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
