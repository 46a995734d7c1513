import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTRules

/// `btlens timeline`: per connection, in time order, its phases and events; scans and own advertising as lanes.
public enum TimelineReport {
    // MARK: JSON

    public static func json(file: String, model: CaptureModel, connectionFilter: Int? = nil) -> JSONValue {
        let connections = model.connections.filter { connectionFilter == nil || $0.id == connectionFilter }
        return .object([
            ("file", .string(file)),
            ("first_timestamp", model.firstTimestamp.map { .number($0.decimalString()) } ?? .null),
            ("last_timestamp", model.lastTimestamp.map { .number($0.decimalString()) } ?? .null),
            ("controller_debug_log_packets", .int(model.controllerDebugLogPackets)),
            ("connections", .array(connections.map { connectionJSON($0, model: model) })),
            ("failed_connections", .array(model.failedConnections.map(failedConnectionJSON))),
            ("scans", .array(model.scans.map(ScanSessionJSON.object))),
            ("advertising", .array(model.ownAdvertising.map(advertisingJSON))),
        ])
    }

    /// The same report written piece by piece at nesting `level`, a connection at a time (`timeline --json`): the
    /// links judged before the capture ended come from `judged`, set aside when they were judged; `extra` members
    /// follow the others (the bug report's attribution).
    public static func writeJSON(file: String, model: CaptureModel, connectionFilter: Int? = nil, judged: TimelineLinkJSON?,
                                 extra: [(String, JSONValue)] = [], to writer: JSONStreamWriter, level: Int = 0) {
        writer.object(level: level) { members in
            members.member("file", .string(file))
            members.member("first_timestamp", model.firstTimestamp.map { .number($0.decimalString()) } ?? .null)
            members.member("last_timestamp", model.lastTimestamp.map { .number($0.decimalString()) } ?? .null)
            members.member("controller_debug_log_packets", .int(model.controllerDebugLogPackets))
            members.elements("connections") { array in
                inIDOrder(model.connections, setAside: judged?.ids ?? [], id: connectionFilter) { record, c in
                    array.next()
                    if let record, let judged {
                        judged.write(at: record, reports: model.qualityReports, level: array.level + 1, to: writer)
                    } else if let c {
                        writer.object(level: array.level + 1) { link in
                            connectionMembers(c, captureEnd: model.lastTimestamp, qualityReports: QualityReport.about(c, in: model.qualityReports),
                                              seriesAndEvents: true, to: &link)
                        }
                    }
                }
            }
            members.array("failed_connections", model.failedConnections, failedConnectionJSON)
            // Member by member: a scan left on through a long capture lists hundreds of thousands of connections.
            members.objects("scans", model.scans) { s, scan in ScanSessionJSON.write(s, timestampDigits: 6, to: &scan) }
            members.array("advertising", model.ownAdvertising, advertisingJSON)
            for (key, value) in extra { members.member(key, value) }
        }
    }

    static func failedConnectionJSON(_ f: FailedConnection) -> JSONValue {
        .object([("time", .number(f.at.timestamp.decimalString())), ("record", .int(f.at.number)),
                 ("requested", f.requested.map { .number($0.timestamp.decimalString()) } ?? .null),
                 ("controller", .int(Int(f.at.controller))), ("status", .string(Hex.u8(f.status.rawValue))),
                 ("status_name", .string(f.status.description)),
                 ("peer_address", f.peerAddress.map { .string($0.description) } ?? .null),
                 ("accept_list", .bool(f.toAcceptList)), ("cancelled", .bool(f.cancelledByHost)),
                 ("transport", .string(f.transport.rawValue))])
    }

    static func advertisingJSON(_ a: AdvertisingSession) -> JSONValue {
        .object([("controller", .int(Int(a.controller))), ("set", .int(Int(a.setHandle))),
                 ("start", .number(a.start.timestamp.decimalString())),
                 ("end", a.end.map { .number($0.timestamp.decimalString()) } ?? .null),
                 ("extended", .bool(a.isExtended)),
                 ("connections_while_advertising", .int(a.connectionsWhileAdvertising.count))])
    }

    /// - Parameter seriesAndEvents: false leaves out `series` and `events` (the facts export counts them).
    public static func connectionJSON(_ c: Connection, model: CaptureModel, seriesAndEvents: Bool = true) -> JSONValue {
        connectionJSON(c, captureEnd: model.lastTimestamp, qualityReports: QualityReport.about(c, in: model.qualityReports),
                       seriesAndEvents: seriesAndEvents)
    }

    /// `reports`: the quality reports about the link (`QualityReport.about`).
    static func connectionJSON(_ c: Connection, captureEnd: Timestamp?, qualityReports reports: [QualityReport],
                               seriesAndEvents: Bool) -> JSONValue {
        var members = JSONMembers()
        connectionMembers(c, captureEnd: captureEnd, qualityReports: reports, seriesAndEvents: seriesAndEvents, to: &members)
        return members.value
    }

    /// The members of a link's object in order, each made when `sink` takes it: streamed, a link's events are
    /// written one at a time (a long link's 20,000 are never one tree).
    static func connectionMembers<Sink: JSONMemberSink>(_ c: Connection, captureEnd: Timestamp?, qualityReports reports: [QualityReport],
                                                        seriesAndEvents: Bool, to m: inout Sink) {
        let duration = c.duration(captureEnd: captureEnd)
        let t = c.transactions
        func optional<T>(_ v: T?, _ f: (T) -> JSONValue) -> JSONValue { v.map(f) ?? .null }
        m.member("id", .int(c.id))
        m.member("handle", .string(Hex.u16(c.handle)))
        m.member("controller", .int(Int(c.controller)))
        m.member("transport", .string(c.transport.rawValue))
        m.member("peer_address", optional(c.peerAddress) { .string($0.description) })
        m.member("peer_address_type", optional(c.peerAddressType) { .string($0.description) })
        m.member("role", .string(c.role.rawValue))
        m.member("start", .number(c.start.timestamp.decimalString()))
        m.member("connect_requested", optional(c.connectRequested) { .number($0.timestamp.decimalString()) })
        m.member("end", optional(c.end) { .number($0.timestamp.decimalString()) })
        m.member("duration_s", optional(duration) { seconds(Int64(saturating: $0.seconds * 1e9)) })
        m.member("disconnect_reason", optional(c.disconnectReason) { .string(Hex.u8($0.rawValue)) })
        m.member("disconnect_reason_name", optional(c.disconnectReason) { .string($0.description) })
        m.member("disconnect_requested_by_host", .bool(c.disconnectRequestedLocally))
        m.member("implicit_start", .bool(c.implicitStart))
        m.member("open", .bool(c.isOpen))
        m.member("start_record", .int(c.start.number))
        m.member("scanning_at_connect", .bool(c.scanningAtConnect))
        m.member("parameters", optional(c.parameters, TimelineEventDescription.parametersJSON))
        m.member("acl_packets", .object([("sent", .int(c.aclPacketsSent)), ("received", .int(c.aclPacketsReceived))]))
        m.member("mtu", .int(c.mtu))
        m.member("eatt_bearers", .int(c.enhancedATT.opened))
        m.member("eatt_mtu", optional(c.enhancedATT.mtu) { .int($0) })
        m.member("encrypted", .bool(c.encrypted))
        m.member("air", AirLinkDescription.json(c))
        m.member("gatt_inherited_from", optional(c.gatt.inheritedFrom) { .int($0) })
        m.member("gatt_origin", c.gatt.isEmpty ? .null : .string(c.gatt.origin.rawValue))
        var att: [(String, JSONValue)] = []
        att.append(("pdus", .int(c.attOpcodeCounts.total)))
        att.append(("transactions", .int(t.completed + t.errors)))
        att.append(("errors", .int(t.errors)))
        att.append(("timeouts", .int(t.timeouts)))
        att.append(("unanswered_at_end", .int(t.unansweredAtEnd)))
        att.append(("mean_latency_ms", optional(t.meanLatency) { .number(Format.ms(TimelineEventDescription.ms($0))) }))
        att.append(("max_latency_ms", .number(Format.ms(TimelineEventDescription.ms(t.maximumLatency)))))
        m.member("att", .object(att))
        if seriesAndEvents {
            let cited = c.recordsOfEverySeries()
            m.array("series", c.series.indices) { seriesJSON(at: $0, records: cited[$0], in: c) }
            m.array("events", c.events) { eventJSON($0, in: c) }
        }
        m.member("dropped_events", .int(c.droppedEvents))
        // Only on links with some: older readers' output stays as it was.
        if !reports.isEmpty { m.member("quality_reports", qualityReportsJSON(reports) { QualityReportText.line($0, in: c) }) }
    }

    /// A link's quality reports, `summary` giving each one's line.
    static func qualityReportsJSON(_ reports: [QualityReport], summary: (QualityReport) -> String) -> JSONValue {
        .array(reports.map { r in
            .object([("time", .number(r.at.timestamp.decimalString())), ("record", .int(r.at.number)),
                     ("report_id", .string(Hex.u8(r.report.id.rawValue))), ("report", .string(r.report.id.description)),
                     ("summary", .string(summary(r))), ("heavy_retransmissions", .bool(r.showsHeavyRetransmissions))])
        })
    }

    static func eventJSON(_ event: TimelineEvent, in c: Connection) -> JSONValue {
        let d = TimelineEventDescription.describe(event, in: c)
        let offset = event.at.timestamp.nanoseconds - c.start.timestamp.nanoseconds
        var members: [(String, JSONValue)] = [
            ("time", .number(event.at.timestamp.decimalString())), ("offset_s", seconds(offset)),
            ("record", .int(event.at.number)), ("byte_offset", .int(Int(event.at.offset))),
            ("type", .string(d.type)), ("summary", .string(d.text)),
        ]
        members += d.fields
        return .object(members)
    }

    /// Exact decimal seconds (µs precision) from nanoseconds.
    static func seconds(_ ns: Int64) -> JSONValue { .number(Timestamp(nanoseconds: ns).decimalString()) }

    // MARK: Text

    /// - Parameters:
    ///   - full: every scan, advertising session and failed attempt on its own (otherwise repeats fold into one entry).
    ///   - findingsHeadline: the audit's findings in a line (`findingsHeadline(_:)`), shown in the overview that
    ///     opens a report longer than a screen.
    /// `judged` holds the lines of links judged and slimmed before the capture ended.
    public static func text(file: String, model: CaptureModel, connectionFilter: Int? = nil, colored: Bool = false,
                            full: Bool = false, findingsHeadline: String? = nil, judged: TimelineLinkLines? = nil) -> String {
        var lines: [String] = []
        write(file: file, model: model, connectionFilter: connectionFilter, colored: colored, full: full,
              findingsHeadline: findingsHeadline, judged: judged) { lines.append($0) }
        return lines.joined(separator: "\n")
    }

    /// `text`, a line at a time as it is made (`btlens timeline` prints them so): a long capture's report is never
    /// held whole.
    public static func write(file: String, model: CaptureModel, connectionFilter: Int? = nil, colored: Bool = false,
                             full: Bool = false, findingsHeadline: String? = nil, judged: TimelineLinkLines? = nil,
                             line: @escaping (String) -> Void) {
        let links = LinksInOrder(model: model, judged: judged)
        let out = OpeningLines(opening: connectionFilter == nil ? { overview(model, links: links, findingsHeadline: findingsHeadline) } : nil,
                               line: line)
        let origin = model.firstTimestamp
        /// `13:11:46.169 +26.461`, the relative part padded to a column when `aligned` (at the start of a line).
        func clock(_ t: Timestamp, aligned: Bool = true) -> String { Self.clock(t, origin: origin, aligned: aligned) }
        func bold(_ s: String) -> String { colored ? "\u{1B}[1m" + s + "\u{1B}[0m" : s }

        headLines(file: bold(file), model: model, out.append)
        if connectionFilter == nil {
            let appSessions = Set(model.appScanSessions)
            let clientControllers = Set(model.scanClients.map(\.controller))
            // Repeats (the same short scan, advertising set or failed attempt again and again) as one entry each
            // unless `full`.
            let scanGroups = full ? .alone(model.scans.count) : RepeatedEpisodes.scans(model.scans)
            for group in scanGroups {
                let index = group[0]
                let s = model.scans[index]
                let parameters: String
                if !s.parametersShown {
                    parameters = "parameters unknown"
                } else if s.phys.count > 1 {
                    parameters = s.phys.map { "\($0.phyName) interval \(Format.ms($0.intervalMilliseconds)) ms window \(Format.ms($0.windowMilliseconds)) ms" }.joined(separator: ", ")
                        + " (duty \(Int(saturating: (s.dutyCycle * 100).rounded())) %)"
                } else {
                    parameters = "interval \(Format.ms(s.intervalMilliseconds)) ms window \(Format.ms(s.windowMilliseconds)) ms (duty \(Int(saturating: (s.dutyCycle * 100).rounded())) %)"
                }
                // Whose scan it was, where Android's scan clients show it.
                let owner = !clientControllers.contains(s.controller) ? ""
                    : appSessions.contains(index) ? ", the app's scan"
                    : model.scanClients.contains(where: { $0.controller == s.controller && $0.added.number <= s.start.number }) ? ", filtered clients' scan (the OS's, or filters the capture cannot tie to the app)"
                    : ", whose scan unknown"
                let head = bold("Scan") + "  hci\(s.controller)  \(s.isActive ? "active" : "passive") \(parameters), duplicates \(s.filterDuplicates ? "filtered" : "NOT filtered")\(owner)"
                out.append("")
                if group.count > 1 {
                    // Read one at a time: a group of tens of thousands of short scans is not copied.
                    var rhythm = EpisodeRhythm(), reports = 0, connected = 0
                    for i in group {
                        let scan = model.scans[i]
                        reports += scan.reports
                        connected += scan.connectionsWhileScanningCount
                        rhythm.add(start: scan.start.timestamp.nanoseconds, end: (scan.endTimestamp ?? scan.start.timestamp).nanoseconds)
                    }
                    out.append(head + "  ×\(group.count)")
                    out.append("  \(clock(s.start.timestamp))  \(group.count) short scans" + rhythm.text
                               + ", \(Plural.of(reports, "report")) in all" + (connected == 0 ? "" : ", \(Plural.of(connected, "connection")) came up while scanning"))
                    continue
                }
                let end = s.end.map { clock($0.timestamp, aligned: false) } ?? "still on at the end"
                let span = (s.end?.timestamp ?? model.lastTimestamp).map { TimeFormat.human($0 - s.start.timestamp) } ?? ""
                out.append(head)
                out.append("  \(clock(s.start.timestamp))  start → \(end) (\(span)), \(Plural.of(s.reports, "report")) from \(Plural.of(s.uniqueDevices, "device"))" + (s.connectionsWhileScanningCount == 0 ? "" : ", \(Plural.of(s.connectionsWhileScanningCount, "connection")) came up while scanning"))
            }
            let advertisingGroups = full ? .alone(model.ownAdvertising.count) : RepeatedEpisodes.advertising(model.ownAdvertising)
            for group in advertisingGroups {
                let a = model.ownAdvertising[group[0]]
                out.append("")
                if group.count > 1 {
                    let end = model.lastTimestamp ?? a.start.timestamp
                    var rhythm = EpisodeRhythm(), connected = 0
                    for i in group {
                        let session = model.ownAdvertising[i]
                        connected += session.connectionsWhileAdvertising.count
                        rhythm.add(start: session.start.timestamp.nanoseconds, end: (session.end?.timestamp ?? end).nanoseconds)
                    }
                    out.append(bold("Advertising") + "  hci\(a.controller) set \(a.setHandle)\(a.isExtended ? " (extended)" : "")  ×\(group.count)")
                    out.append("  \(clock(a.start.timestamp))  \(group.count) advertising sessions of set \(a.setHandle)" + rhythm.text
                               + (connected == 0 ? "" : ", \(Plural.of(connected, "connection")) came up while advertising"))
                    continue
                }
                let end = a.end.map { clock($0.timestamp, aligned: false) } ?? "still on at the end"
                let span = (a.end?.timestamp ?? model.lastTimestamp).map { " (" + TimeFormat.human($0 - a.start.timestamp) + ")" } ?? ""
                out.append(bold("Advertising") + "  hci\(a.controller) set \(a.setHandle)\(a.isExtended ? " (extended)" : "")")
                out.append("  \(clock(a.start.timestamp))  start → \(end)\(span)" + (a.connectionsWhileAdvertising.isEmpty ? "" : ", \(Plural.of(a.connectionsWhileAdvertising.count, "connection")) came up while advertising"))
            }
            let attemptGroups = full ? .alone(model.failedConnections.count) : RepeatedEpisodes.attempts(model.failedConnections)
            for group in attemptGroups {
                let f = model.failedConnections[group[0]]
                out.append("")
                if group.count > 1 {
                    let attempts = group.map { model.failedConnections[$0] }
                    let last = attempts[attempts.count - 1]
                    out.append(bold(f.cancelledByHost ? "Connection attempts" : "Failed connections") + "  \(clock(f.at.timestamp))  "
                               + "\(group.count) × " + FailedConnectionText.describe(f, repeated: true)
                               + RepeatedEpisodes.rhythm(starts: attempts.map { ($0.requested ?? $0.at).timestamp.nanoseconds },
                                                        ends: attempts.map(\.at.timestamp.nanoseconds))
                               + "  [records \(f.at.number)…\(last.at.number)]")
                    continue
                }
                out.append(bold(f.cancelledByHost ? "Connection attempt" : "Failed connection") + "  \(clock(f.at.timestamp))  "
                           + FailedConnectionText.describe(f) + "  [record \(f.at.number)]")
            }
        }
        // Links alike (the same lines but for ids and peers) as the first of them and one entry, unless `full`.
        let alike = full || connectionFilter != nil ? nil : AlikeLinks(links, model: model)
        var position = 0  // the entry's place in the order `AlikeLinks` read them
        links.forEach(id: connectionFilter) { entry in
            let group = alike?.group(at: position, id: entry.summary.id)
            position += 1
            if case .folded = group { return }
            let link = entry.printed(model: model)
            linkLines(link, model: model, full: full, bold: bold, out.append)
            guard case .leads(let members) = group else { return }
            let ids = members.named.map { "#\($0)" }.joined(separator: ", ")
                + (members.count > TimelineFolding.namedConnections ? " and \(members.count - TimelineFolding.namedConnections) more" : "")
            let peers = members.peers
            let named = peers.prefix(TimelineFolding.namedPeers).map(\.description).joined(separator: ", ")
                + (members.peerCount > TimelineFolding.namedPeers ? ", …" : "")
            out.append("")
            out.append(bold("Connections like #\(link.link.id)") + "  ×\(members.count) more: \(ids)")
            let samePeer = members.peerCount == 1 && peers[0] == link.link.peerAddress
            let peerCount = members.peersPastCount ? "over " + Plural.of(members.peerCount, "peer") : Plural.of(members.peerCount, "peer")
            out.append("  \(clock(Timestamp(nanoseconds: members.rhythm.firstStart)))  the same events as #\(link.link.id)"
                       + (peers.isEmpty ? "" : samePeer ? " with the same peer" : " with " + peerCount + " (\(named))")
                       + members.rhythm.text
                       + "  [--connection N or --full lists each]")
        }
        if model.linkCount == 0 && model.scans.isEmpty && model.ownAdvertising.isEmpty {
            out.append("")
            out.append("no connections, scans or advertising in this capture")
        }
        out.finish()
    }

    /// `13:11:46.169 +26.461`, the relative part (from `origin`) padded to a column when `aligned`.
    static func clock(_ t: Timestamp, origin: Timestamp?, aligned: Bool = true) -> String {
        let utc = TimeFormat.utc(t, digits: 3)
        let rel = origin.map { "+" + TimeFormat.seconds(t - $0, digits: 3) } ?? ""
        return String(utc.dropFirst(11)) + " " + (aligned ? pad(rel, 10) : rel)
    }

    /// The report's first lines: the file, the capture's span and the controller's debug log.
    static func headLines(file: String, model: CaptureModel, _ line: (String) -> Void) {
        line(file)
        if let first = model.firstTimestamp, let last = model.lastTimestamp {
            line("  \(TimeFormat.utc(first, digits: 3)) → \(TimeFormat.utc(last, digits: 3)) UTC (\(TimeFormat.human(last - first)))")
        }
        if model.controllerDebugLogPackets > 0 {
            line("  \(Plural.of(model.controllerDebugLogPackets, "ACL packet")) on handle \(Hex.u16(ACLPacket.qualcommDebugLogHandle)) "
                 + "are the controller's debug log (Qualcomm), not a connection")
        }
    }

    /// One link's entry: a blank line, its heading, its lines (folded unless `full`) and its summary.
    static func linkLines(_ link: TimelineLinkLines.Link, model: CaptureModel, full: Bool, bold: (String) -> String = { $0 },
                          _ line: (String) -> Void) {
        let origin = model.firstTimestamp
        line("")
        line(bold(link.heading.head))
        if let opening = link.heading.opening { line(opening) }
        let lines = withQualityReports(link, model: model)
        for (at, text) in full ? lines : TimelineFolding.fold(lines) { line("  \(clock(at.timestamp, origin: origin))  \(text)") }
        if link.droppedEvents > 0 { line("  … \(link.droppedEvents) more events not kept") }
        line("  " + link.summary)
    }

    /// `text(file: "", model:, connectionFilter: link's id, full: true)` of one link, made from what the report
    /// prints of it (whole, or set aside when it was judged): the HTML report's connection panels.
    static func connectionText(_ link: TimelineLinkLines.Link, model: CaptureModel) -> String {
        var lines: [String] = []
        headLines(file: "", model: model) { lines.append($0) }
        linkLines(link, model: model, full: true) { lines.append($0) }
        return lines.joined(separator: "\n")
    }

    /// A connection's heading in the text timeline, and the line under it when the capture joined the link midway.
    public struct Heading: Sendable {
        var head: String
        var opening: String?
    }

    /// Every link of the report in id order: the model's connections and the judged links the model let go
    /// (`LinkRetirement.Keeping.summary`), of which only their record in `TimelineLinkLines` is left.
    struct LinksInOrder {
        let model: CaptureModel
        let judged: TimelineLinkLines?

        enum Entry {
            /// A link the model holds whole, printed from it.
            case whole(Connection)
            /// A link judged before the capture ended (let go, or kept slim): printed from its record, written then.
            case judged(TimelineLinkLines.Link)

            var summary: LinkSummary {
                switch self {
                case .whole(let c): LinkSummary(c)
                case .judged(let link): link.link
                }
            }

            func printed(model: CaptureModel) -> TimelineLinkLines.Link {
                switch self {
                case .whole(let c): TimelineLinkLines.Link(c, model: model)
                case .judged(let link): link
                }
            }
        }

        /// `id`: that link alone; `limit`: the first links only.
        func forEach(id: Int? = nil, limit: Int = .max, _ body: (Entry) -> Void) {
            inIDOrder(model.connections, setAside: judged?.ids ?? [], id: id, limit: limit) { record, c in
                if let record, let judged { body(.judged(judged.link(at: record))) } else if let c { body(.whole(c)) }
            }
        }
    }

    /// The model's links and those set aside when they were judged (`ids`: their records' ids, in id order), in id
    /// order: `body` gets a link's record (its place in `ids`) when it was set aside, else the model's link.
    /// `id`: that link alone; `limit`: the first links only.
    static func inIDOrder(_ connections: [Connection], setAside ids: PackedIDs, id: Int? = nil, limit: Int = .max,
                          _ body: (_ record: Int?, _ whole: Connection?) -> Void) {
        var i = 0, k = 0, n = 0
        while n < limit && (i < connections.count || k < ids.count) {
            let recordID = k < ids.count ? Int(ids[k]) : .max
            if i < connections.count && connections[i].id <= recordID {
                let c = connections[i]
                i += 1
                let record = c.id == recordID ? k : nil
                if record != nil { k += 1 }
                guard id == nil || c.id == id else { continue }
                body(record, c)
            } else {
                k += 1
                guard id == nil || recordID == id else { continue }
                body(k - 1, nil)
            }
            n += 1
        }
    }

    /// Links whose lines are alike (`TimelineFolding.likeness`), `RepeatedEpisodes.minimumRepeats` or more: the first
    /// of each group is printed, the others fold into one entry after it. Found in a first pass over the links that
    /// keeps a hash of each link's likeness, not its lines: per likeness its first link and what the entry says of
    /// the others (not the links themselves: a long capture's links are nearly all alike something, and 100,000
    /// summaries are 12.8 MB), and per link which likeness it has. The hashes are remembered for two generations
    /// (`TimelineFolding.likenessesRemembered`).
    struct AlikeLinks {
        /// What the folded entry says of a group's links after its first.
        struct Members {
            var count: Int { rhythm.count }
            /// The first ones' ids (`TimelineFolding.namedConnections`).
            var named: [Int32] = []
            /// Their peers in order of appearance, the first `TimelineFolding.namedPeers`.
            var peers: [BDAddr] = []
            /// Their peers counted, up to `TimelineFolding.countedPeers` (`peersPastCount` past it).
            var peerCount: Int { counted.count }
            var peersPastCount = false
            var counted: Set<BDAddr> = []
            var rhythm = EpisodeRhythm()

            mutating func add(_ link: LinkSummary, end: Int64) {
                rhythm.add(start: link.start.timestamp.nanoseconds, end: end)
                if named.count < TimelineFolding.namedConnections { named.append(Int32(clamping: link.id)) }
                guard let p = link.peerAddress, !counted.contains(p) else { return }
                guard counted.count < TimelineFolding.countedPeers else { peersPastCount = true; return }
                counted.insert(p)
                if peers.count < TimelineFolding.namedPeers { peers.append(p) }
            }
        }

        enum Group {
            case alone
            case folded
            case leads(Members)
        }

        /// Per likeness, in order of appearance: its first link's id.
        private var leaders: [Int32] = []
        /// Per likeness: where its other links are described in `members`, -1 while it has none.
        private var membersIndex: [Int32] = []
        private var members: [Members] = []
        /// Per link, in the order read: its likeness (an index into `leaders`), -1 for a link alike no other.
        private var likenessOfLink: [Int32] = []

        init(_ links: LinksInOrder, model: CaptureModel) {
            var likeness = GenerationalMap<Int, Int32>(generation: TimelineFolding.likenessesRemembered)
            let captureEnd = model.lastTimestamp
            links.forEach { entry in
                // A long link is alike no other: its lines are not made twice.
                if case .whole(let c) = entry, c.events.count > TimelineFolding.alikeEvents { likenessOfLink.append(-1); return }
                let link = entry.printed(model: model)
                guard link.lines.count <= TimelineFolding.alikeEvents else { likenessOfLink.append(-1); return }
                let key = TimelineFolding.likeness(link).hashValue
                guard let found = likeness.find(key) else {
                    likeness.set(key, Int32(leaders.count), found: nil)
                    likenessOfLink.append(Int32(leaders.count))
                    leaders.append(Int32(clamping: link.link.id))
                    membersIndex.append(-1)
                    return
                }
                let l = found.value
                // Seen again: recent, so a group going on is not forgotten.
                if !found.inCurrent { likeness.set(key, l, found: found) }
                likenessOfLink.append(l)
                if membersIndex[Int(l)] < 0 {
                    membersIndex[Int(l)] = Int32(members.count)
                    members.append(Members())
                }
                let end = (link.link.end?.timestamp ?? captureEnd ?? link.link.start.timestamp).nanoseconds
                members[Int(membersIndex[Int(l)])].add(link.link, end: end)
            }
        }

        /// The group of the link read `position`th (of id `id`): folded into its first's entry, leading one, or
        /// alone (a likeness shared by fewer than `RepeatedEpisodes.minimumRepeats` links).
        func group(at position: Int, id: Int) -> Group {
            guard position < likenessOfLink.count else { return .alone }
            let l = Int(likenessOfLink[position])
            guard l >= 0, membersIndex[l] >= 0 else { return .alone }
            let m = members[Int(membersIndex[l])]
            guard m.count + 1 >= RepeatedEpisodes.minimumRepeats else { return .alone }
            return Int(leaders[l]) == id ? .leads(m) : .folded
        }
    }

    /// Whether the text timeline has connection `id`: in the model, or judged early and let go (`judged`).
    public static func hasConnection(_ id: Int, model: CaptureModel, judged: TimelineLinkLines?) -> Bool {
        model.connections.contains { $0.id == id } || (judged?.contains(id: id) ?? false)
    }

    /// `hasConnection` for the JSON timeline, whose judged links are set aside as objects.
    public static func hasConnection(_ id: Int, model: CaptureModel, judged: TimelineLinkJSON?) -> Bool {
        model.connections.contains { $0.id == id } || (judged?.contains(id: id) ?? false)
    }

    /// Lines passed on as they come, but for a long report's opening: a report longer than `screenLines` opens,
    /// after its `headerLines`, with what matters (`overview`: its connections, the scans and what the audit
    /// found). Lines are held until the report is known to be long (or ends short), then flow straight through.
    final class OpeningLines {
        let opening: (() -> [String])?
        let line: (String) -> Void
        var held: [String] = []
        var flowing = false

        init(opening: (() -> [String])?, line: @escaping (String) -> Void) {
            self.opening = opening
            self.line = line
            flowing = opening == nil  // nothing to open with: no line need wait
        }

        func append(_ text: String) {
            if flowing { return line(text) }
            held.append(text)
            guard let opening, held.count > TimelineReport.screenLines else { return }
            held.insert(contentsOf: opening(), at: min(TimelineReport.headerLines, held.count))
            release()
        }

        func finish() { release() }

        private func release() {
            held.forEach(line)
            held = []
            flowing = true
        }
    }

    /// `link`'s lines with a line per Bluetooth Quality Report about the link, in record order.
    static func withQualityReports(_ link: TimelineLinkLines.Link, model: CaptureModel) -> [(at: RecordRef, text: String)] {
        let lines = link.lines
        let reports = QualityReport.about(link.link, in: model.qualityReports)
        guard !reports.isEmpty else { return lines }
        let phases = link.phases, parameters = link.parameters
        var out: [(at: RecordRef, text: String)] = []
        var next = reports.startIndex
        for line in lines {
            while next < reports.endIndex && reports[next].at.number < line.at.number {
                out.append((reports[next].at, QualityReportText.line(reports[next], phases: phases, parameters: parameters)))
                next += 1
            }
            out.append(line)
        }
        out += reports[next...].map { ($0.at, QualityReportText.line($0, phases: phases, parameters: parameters)) }
        return out
    }

    /// A report longer than this many lines opens with `overview`.
    public static let screenLines = 40
    /// Connections the overview names one by one.
    static let overviewConnections = 5

    /// "  Overview: 2 connections (#1 D4:3A:… 2.4 s, …); 29 scans, 4m 30s in all; 200 advertising sessions; 50 connection
    /// attempts that did not come up", then the findings' headline.
    static func overview(_ model: CaptureModel, links all: LinksInOrder, findingsHeadline: String?) -> [String] {
        var parts: [String] = []
        var links: [String] = []
        all.forEach(limit: overviewConnections) { entry in
            let l = entry.summary
            let end = l.end?.timestamp ?? model.lastTimestamp
            links.append("#\(l.id)" + (l.peerAddress.map { " \($0)" } ?? "") + (end.map { " " + TimeFormat.human($0 - l.start.timestamp) } ?? ""))
        }
        var connections = Plural.of(model.linkCount, "connection")
        if !links.isEmpty {
            connections += " (" + links.joined(separator: ", ") + (model.linkCount > links.count ? ", …" : "") + ")"
        }
        parts.append(connections)
        if !model.scans.isEmpty {
            let nanoseconds = model.scans.reduce(0.0) { t, s in
                t + Double(max(0, ((s.endTimestamp ?? model.lastTimestamp ?? s.start.timestamp).nanoseconds - s.start.timestamp.nanoseconds)))
            }
            parts.append(Plural.of(model.scans.count, "scan") + ", \(TimeFormat.human(.nanoseconds(Int64(saturating: nanoseconds)))) in all, "
                         + Plural.of(model.scans.reduce(0) { $0 + $1.reports }, "report"))
        }
        if !model.ownAdvertising.isEmpty { parts.append(Plural.of(model.ownAdvertising.count, "advertising session")) }
        if !model.failedConnections.isEmpty {
            parts.append(Plural.of(model.failedConnections.count, "connection attempt") + " that did not come up")
        }
        var lines = ["  Overview: " + parts.joined(separator: "; ")]
        if let findingsHeadline { lines.append("  Findings: " + findingsHeadline) }
        return lines
    }

    /// "2 warnings, 1 info: BTL013 advertising-while-connected ×2, BTL009 connection-churn (btlens audit says what each
    /// costs and what to do)": the rules that found something, most severe and most frequent first.
    public static func findingsHeadline<C: Collection<Finding>>(_ findings: C) -> String {
        guard !findings.isEmpty else { return "none" }
        var counts: [(id: String, rule: String, severity: Severity, count: Int)] = []
        for f in findings {
            if let i = counts.firstIndex(where: { $0.id == f.id }) {
                counts[i].count += 1
                if f.severity > counts[i].severity { counts[i].severity = f.severity }
            } else {
                counts.append((f.id, f.rule, f.severity, 1))
            }
        }
        counts.sort { $0.severity != $1.severity ? $0.severity > $1.severity : $0.count != $1.count ? $0.count > $1.count : $0.id < $1.id }
        let severities = Severity.allCases.sorted(by: >).compactMap { s -> String? in
            // Counted, not filtered: a copy of tens of thousands of findings was this report's peak.
            let n = findings.reduce(0) { $0 + ($1.severity == s ? 1 : 0) }
            return n == 0 ? nil : s == .info ? "\(n) info" : Plural.of(n, s.rawValue)
        }
        return severities.joined(separator: ", ") + ": "
            + counts.map { "\($0.id) \($0.rule)" + ($0.count > 1 ? " ×\($0.count)" : "") }.joined(separator: ", ")
            + " (btlens audit says what each costs and what to do)"
    }

    /// The lines before the lanes: the file and its time span.
    static let headerLines = 2

    /// `eventLines`, with an air link's line per phase after the events of the record it starts at.
    static func linesWithPhases(_ c: Connection) -> [(at: RecordRef, text: String)] {
        let phases = AirLinkDescription.phaseLines(c)
        guard !phases.isEmpty else { return eventLines(c) }
        var out: [(at: RecordRef, text: String)] = []
        var next = phases.startIndex
        for line in eventLines(c) {
            while next < phases.endIndex && phases[next].at.number < line.at.number {
                out.append(phases[next])
                next += 1
            }
            out.append(line)
        }
        out += phases[next...]
        return out
    }

    /// A connection's events as the text reads them: one line each, a run of contents discovery as one.
    public static func eventLines(_ c: Connection) -> [(at: RecordRef, text: String)] {
        var lines: [(at: RecordRef, text: String)] = []
        var i = c.events.startIndex
        while i < c.events.endIndex {
            let event = c.events[i]
            if let (text, next) = contentsDiscovery(c, from: i) {
                lines.append((event.at, text))
                i = next
            } else if case .activity(let r) = event.kind, let series = regularSeries(of: c.runs[r], in: c) {
                // A regular series cut into several runs reads as one line where it starts.
                if series.first == c.runs[r].first { lines.append((event.at, seriesText(series, in: c))) }
                i += 1
            } else {
                lines.append((event.at, TimelineEventDescription.describe(event, in: c).text))
                i += 1
            }
        }
        return lines
    }

    /// The series of `run` when it is regular and the timeline cut it into several runs (long gaps, other
    /// traffic between): then it is shown once, by `seriesText`.
    static func regularSeries(of run: ActivityRun, in c: Connection) -> ActivitySeries? {
        guard run.series >= 0, Int(run.series) < c.series.count else { return nil }
        let series = c.series[Int(run.series)]
        return series.runs > 1 && series.isRegular() ? series : nil
    }

    /// `180 reads Temperature (2a6e) [0x002b] every 10.0 s over 29m 50s (interleaved with reads of Humidity
    /// (2a6f))`.
    public static func seriesText(_ s: ActivitySeries, in c: Connection) -> String {
        var text = "\(Plural.of(s.count, s.kind.singular, plural: s.kind.plural)) \(TimelineEventDescription.handleName(s.handle, c))"
        if let mean = s.meanInterval { text += " every " + TimeFormat.human(.nanoseconds(Int64(saturating: mean * 1e9))) }
        text += " over " + TimeFormat.human(s.duration)
        let others = c.series.filter { o in
            o.handle != s.handle && o.count >= ActivitySeries.regularMinimumCount && o.sent == s.sent
                && o.first.timestamp < s.last.timestamp && s.first.timestamp < o.last.timestamp
        }
        if !others.isEmpty {
            var parts: [String] = []
            for kind in ActivityKind.allCases {
                let names = others.filter { $0.kind == kind }.map { c.gatt.name(of: $0.handle) ?? "handle \(Hex.u16($0.handle))" }
                guard !names.isEmpty else { continue }
                parts.append("\(kind.plural) of " + (names.count > 3 ? names.prefix(3).joined(separator: ", ") + " and \(names.count - 3) more"
                                                                          : names.joined(separator: ", ")))
            }
            text += " (interleaved with " + parts.joined(separator: "; ") + ")"
        }
        if let value = c.usage[s.handle]?.lastValue, s.kind == .notification || s.kind == .indication || s.kind == .read {
            text += ", last " + CharacteristicValue.describe(value, uuid: c.gatt.characteristic(valueHandle: s.handle)?.uuid)
        }
        return text
    }

    static func seriesJSON(at index: Int, records: [RecordRef], in c: Connection) -> JSONValue {
        let s = c.series[index]
        return .object([
            ("operation", .string(s.kind.rawValue)), ("handle", .string(Hex.u16(s.handle))),
            ("name", c.gatt.name(of: s.handle).map { .string($0) } ?? .null), ("by_host", .bool(s.sent)),
            ("count", .int(s.count)), ("bytes", .int(s.bytes)),
            ("first", .number(s.first.timestamp.decimalString())), ("last", .number(s.last.timestamp.decimalString())),
            ("mean_interval_s", s.meanInterval.map { seconds(Int64(saturating: $0 * 1e9)) } ?? .null),
            ("interval_cv", s.intervalVariation.map { .number(DecimalText.fixed($0, fractionDigits: 3)) } ?? .null),
            ("longest_gap_s", seconds(s.intervals.longestNanoseconds)),
            ("runs", .int(s.runs)), ("regular", .bool(s.isRegular())),
            ("records", .array(records.map { .int($0.number) })),
        ])
    }

    /// Discovery of the services' contents (included services, characteristics, descriptors), one procedure per
    /// service or characteristic — what Android's discoverServices() and CoreBluetooth's discovery without
    /// UUIDs do — is read as one line when this many procedures follow each other; `--json` keeps each.
    static let contentsDiscoveryLine = 6

    /// The line for a run of contents discovery starting at event `i`, and the index after it; nil when no
    /// such run of at least `contentsDiscoveryLine` procedures starts there.
    static func contentsDiscovery(_ c: Connection, from i: Int) -> (String, Int)? {
        func procedure(_ e: TimelineEvent) -> DiscoveryProcedure? {
            guard case .discovery(let d) = e.kind else { return nil }
            let p = c.discoveries[d]
            return p.kind == .includedServices || p.kind == .characteristics || p.kind == .descriptors ? p : nil
        }
        guard let first = procedure(c.events[i]) else { return nil }
        var run: [DiscoveryProcedure] = []
        var j = i
        while j < c.events.endIndex, let p = procedure(c.events[j]), p.byHost == first.byHost {
            run.append(p)
            j += 1
        }
        guard run.count >= contentsDiscoveryLine else { return nil }
        let kinds: [(DiscoveryProcedure.Kind, String)] = [(.includedServices, "included services"),
                                                          (.characteristics, "characteristics"), (.descriptors, "descriptors")]
        let parts = kinds.compactMap { kind, name -> String? in
            let of = run.filter { $0.kind == kind }
            guard !of.isEmpty else { return nil }
            return "\(name) ×\(of.count) (\(of.reduce(0) { $0 + $1.found }) found)"
        }
        let low = run.map(\.startHandle).min() ?? first.startHandle, high = run.map(\.endHandle).max() ?? first.endHandle
        let end = run.map(\.last).max() ?? first.last
        let incomplete = run.filter { !$0.completed }.count
        let text = "discovery: contents \(Hex.u16(low))-\(Hex.u16(high)) in \(run.count) procedures — "
            + parts.joined(separator: ", ")
            + "; \(Plural.of(run.reduce(0) { $0 + $1.requests }, "request")), \(TimeFormat.human(end.timestamp - first.first.timestamp))"
            + (incomplete > 0 ? " (\(incomplete) incomplete)" : "")
        return (text, j)
    }

    static func summaryLine(_ c: Connection, model: CaptureModel) -> String {
        var parts: [String] = []
        if let d = c.duration(captureEnd: model.lastTimestamp) {
            // A link that began before the capture lasted longer than the capture shows.
            let verb = c.implicitStart ? "seen for" : c.isOpen ? "open for" : "lasted"
            parts.append("\(verb) \(TimeFormat.human(d))")
        }
        if c.isOpen { parts.append("still open at the end of the capture") }
        if let requested = c.connectRequested {
            parts.append("connecting took \(TimeFormat.human(c.start.timestamp - requested.timestamp))")
        }
        if let first = c.firstATT { parts.append("first ATT after \(TimeFormat.human(first.timestamp - c.start.timestamp))") }
        let discovery = c.discoveries
        if let f = discovery.first, let l = discovery.map(\.last).max() {
            parts.append("discovery \(TimeFormat.human(l.timestamp - f.first.timestamp))")
        }
        let t = c.transactions
        let pdus = c.attCounts.values.reduce(0, +)
        if pdus > 0 {
            var att = "ATT \(Plural.of(pdus, "PDU")), \(Plural.of(t.completed + t.errors, "transaction"))"
            if let mean = t.meanLatency { att += " (mean \(Format.ms(TimelineEventDescription.ms(mean))) ms)" }
            if t.errors > 0 { att += ", \(Plural.of(t.errors, "error"))" }
            if t.timeouts > 0 { att += ", \(Plural.of(t.timeouts, "timeout"))" }
            parts.append(att)
        }
        if pdus == 0 && c.aclPacketsSent + c.aclPacketsReceived > 0 {
            // No ATT (a BR/EDR link's RFCOMM or audio, say): what crossed the link at all.
            parts.append("ACL \(Plural.of(c.aclPacketsSent, "packet")) sent, \(c.aclPacketsReceived) received")
        }
        if c.mtu != 23 { parts.append("MTU \(c.mtu)") }
        if c.enhancedATT.opened > 0 {
            parts.append(Plural.of(c.enhancedATT.opened, "EATT bearer")
                         + (c.enhancedATT.mtu.map { " (MTU \($0))" } ?? ""))
        }
        if let from = c.gatt.inheritedFrom {
            parts.append(c.gatt.origin == .learnedLater ? "GATT learned from connection #\(from) (discovered later)"
                                                        : "GATT cached from connection #\(from)")
        }
        return parts.joined(separator: "; ")
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}

extension TimelineReport.Heading {
    /// The heading of `c`, as the report prints it.
    init(_ c: Connection) {
        var head = "Connection #\(c.id)  handle \(Hex.u16(c.handle))  hci\(c.controller)  \(c.transport.rawValue)"
        if c.role != .unknown { head += "  \(c.role.rawValue)" }
        if let peer = c.peerAddress { head += "  peer \(peer)" + (c.peerAddressType.map { " (\($0))" } ?? "") }
        if let air = c.air { head = AirLinkDescription.head(c, air) }
        self.head = head
        opening = !c.implicitStart ? nil
            : c.air == nil ? "  (the capture starts mid-connection: first packet at record \(c.start.number))"
            : "  (no CONNECT_IND in the capture: followed by its access address from record \(c.start.number))"
    }
}
