import ArgumentParser
import BTCapture
import BTDecode
import BTTrack
import BTReport
import BTRules

/// Runs the tracking pipeline over each capture of a command's paths, with progress and the one-line error form.
enum Tracking {
    /// Tracks every capture the paths hold and hands each model to `body`; true when one could not be read
    /// (reported), so the command exits 3 after printing the others.
    /// `retirement` gives each capture's `LinkRetirement`, when finished links are to be judged and slimmed.
    /// Progress goes on a line of its own named `label` (the command), or into `within`, a file of the caller's.
    /// `keepsModels`: each model lives until the process exits (`keptUntilExit`); `diff` lets the first side's go
    /// before it reads the second.
    static func each(_ paths: [String], label: String, within outer: Progress.Reading? = nil,
                     anonymizing: AnonymizeOptions = AnonymizeOptions(),
                     retirement: () -> LinkRetirement? = { nil }, scanDevicesListed: Int = .max,
                     connectionsWhileScanningListed: Int = .max, buildsAppScans: Bool = true, keepsModels: Bool = true,
                     resolved: (_ inputs: Int, _ failed: Bool) -> Void = { _, _ in },
                     _ body: (CaptureInput, CaptureModel) throws -> Void) throws -> Bool {
        var (inputs, failed) = InputFiles.resolve(paths)
        resolved(inputs.count, failed)
        let progress = outer == nil ? Progress(label: label, inputs: inputs) : nil
        defer { progress?.finish() }
        for (index, input) in inputs.enumerated() {
            let reading = progress?.start(index)
            defer { reading?.finish() }
            guard let capture = InputFiles.open(input) else {
                failed = true
                continue
            }
            var options = TrackerOptions.withoutAdvertisers
            options.retirement = retirement()
            options.scanDevicesListed = scanDevicesListed
            options.connectionsWhileScanningListed = connectionsWhileScanningListed
            options.buildsAppScans = buildsAppScans
            options.setScanSessionsAside()
            // The caller's file is this capture's bytes only when it is a plain file.
            let update = (reading ?? (input.isPlainFile ? outer : nil)).map { r in { (offset: Int64) in r.update(offset) } }
            var collector = TrackingCollector(options: options, progress: update)
            let model = try capture.accept(&collector, anonymizer: anonymizing.makeAnonymizer())
            guard InputFiles.finish(input, capture) else {
                failed = true
                continue
            }
            if let failure = model.setAsideFailure {
                Diagnostics.error(file: input.path, "cannot set the capture's scans and links aside in \(TemporaryFiles.directory): \(failure)")
                failed = true
                continue
            }
            if keepsModels { keptUntilExit.append(model) }
            try body(input, model)
        }
        return failed
    }

    /// The models of a timeline/gatt run live until the process exits: releasing tens of thousands of
    /// connections object by object costs several percent of the run and frees nothing anyone needs.
    nonisolated(unsafe) private static var keptUntilExit: [CaptureModel] = []
}

struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Per-connection timelines: connect, MTU, pairing, discovery, subscriptions, traffic, parameter changes, idle gaps, disconnect.",
        discussion: """
            Each connection is listed in time order with absolute (UTC) and relative times. Dense ATT traffic is \
            summarised in runs (e.g. "60 notifications Heart Rate Measurement at 1 Hz"); discovery procedures are \
            shown with what they asked for and found (six or more per-service procedures in a row as one \
            "discovery: contents" line; --json keeps each); Enhanced ATT bearers with their MTU; other L2CAP \
            channels (SDP, RFCOMM, AVDTP, LE credit-based) opened or refused; a summary line per \
            connection says how long it lasted and how long connecting took from the create command. Scan sessions, \
            own advertising and failed connection attempts (with how long each ran) are their own lanes; repeats \
            (short scans with the same parameters, advertising sessions of one set with the same parameters, failed \
            attempts to one target that end the same way, three or more of a kind) read as one line with how long each \
            lasted and how often it came back; within a connection, lines that are the same once their times and \
            counts are taken out read as their first and one line "N × every ~P over D: …" (an exchange's lines \
            share it; lines that differ stay), and connections whose lines are alike (other peers) as the first and \
            one "Connections like #N" entry — --full lists each. A report longer than a screen opens with an \
            overview: the connections, the scans and the audit's findings in a line. A capture that starts mid-connection gets a connection from its first packet \
            (implicit_start); connections still up at the end are open. On a long capture, finished connections' \
            lines (with --json, their objects) wait in a temporary file in TMPDIR (or /tmp) until they are printed.

            Air captures (nRF Sniffer, Sniffle, WHAD, Ubertooth): each link is seen from its central, opened at its             CONNECT_IND (or by its access address when the capture missed it), with its LL control procedures,             updates at their instants, LL_TERMINATE_IND or an inferred loss, and a line per phase of what only the             air shows ("air: interval 30 ms: events 1,240 (97 % empty), 31 retransmissions, 2 CRC errors");             --json adds "air" per connection.

            --json prints {"file", "first_timestamp", "last_timestamp", "controller_debug_log_packets", \
            "connections": [...], "failed_connections", \
            "scans": [...], "advertising": [...]}; each connection has handle ("0x0040"), controller, peer_address, \
            peer_address_type, role, start, connect_requested (our create command, or null), end (null when \
            open), disconnect_reason ("0x13" or null), implicit_start, acl_packets, mtu, eatt_bearers, eatt_mtu and events; \
            each failed connection attempt has requested (its create command, or null), status, peer_address, accept_list and cancelled (withdrawn by the host: Create Connection Cancel). The JSON Schema is Sources/BTReport/Schemas/timeline.schema.json.

            Examples:
              btlens timeline samples/heart-rate-session.btsnoop
              btlens timeline --connection 2 samples/wasteful-central.btsnoop
              btlens timeline --json btsnoop_hci.log | jq '.connections[].disconnect_reason'
              btlens timeline nrf-sniffer.pcapng
            """
    )

    @Argument(help: "Capture files, archives or bug reports (each capture in turn; rotated logs given together are one); - reads standard input.")
    var files: [String]

    @OptionGroup var anonymizing: AnonymizeOptions

    @Option(name: .long, help: "Only this connection (its number in the timeline, #1, #2, …).")
    var connection: Int?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Flag(name: .long, help: "List every scan, advertising session, failed connection attempt, connection and line (text folds repeats into one line; JSON always lists each).")
    var full = false

    @Option(name: .long, help: "Colour: auto (only on a terminal), always, never.")
    var color: DecodeCommand.ColorMode = .auto

    /// Tracks without printing: what `make bench` times as the cost of the tracking layer.
    @Flag(name: .customLong("track-only"), help: .hidden)
    var trackOnly = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("give a capture file (or - for standard input)") }
    }

    func run() throws {
        var shown = 0
        // The text timeline writes each finished link's lines when the link is judged and lets its history go
        // (`TimelineLinkLines`); the findings' headline judges it then too. JSON sets each finished link's object
        // aside the same way (`TimelineLinkJSON`).
        var judgedLines: TimelineLinkLines?
        var judgedObjects: TimelineLinkJSON?
        var judgement: LinkJudgement?
        var spill: FindingSpill?
        let filter = connection
        let directory = TemporaryFiles.directory
        var warned = false
        let retirement: () -> LinkRetirement? = { [json, trackOnly] in
            guard !trackOnly else { return nil }
            if json {
                let objects = TimelineLinkJSON(connectionFilter: filter, spillDirectory: directory)
                if let failure = objects.records.spillFailure, !warned {
                    Diagnostics.warning(file: nil, "\(failure): the finished links' objects are kept in memory")
                    warned = true
                }
                judgedObjects = objects
                // Every judged link's summary stays (the bug report's attribution reads the links).
                return LinkRetirement(window: AuditCommand.retirementWindow, keeping: .summary, interest: nil) { c, kept in
                    if kept { objects.keep(c) }
                }
            }
            // The judged links' lines wait in a temporary file until they are printed.
            let lines = TimelineLinkLines(connectionFilter: filter, spillDirectory: directory)
            if let failure = lines.records.spillFailure, !warned {
                Diagnostics.warning(file: nil, "\(failure): the finished links' lines and the findings are kept in memory")
                warned = true
            }
            // The findings wait in a temporary file as they are made, as the audit's do (in memory where the
            // lines cannot be set aside either: the warning above said so).
            let made = filter == nil
                ? (try? FindingSpill(directory: lines.records.spillFailure == nil ? directory : nil)) ?? (try? FindingSpill(directory: nil))
                : nil
            let findings = made.map { Auditor().linkJudgement(spill: $0) }
            (spill, judgement) = (made, findings)
            judgedLines = lines
            // A judged link's record holds all the report prints of it: the model keeps what the findings'
            // capture-wide rules read (as `btlens audit`'s does), not the link.
            return LinkRetirement(window: AuditCommand.retirementWindow, keeping: .summary,
                                  interest: (findings ?? Auditor().linkJudgement()).interest) { c, kept in
                findings?.judge(c, kept: kept)
                if kept { lines.keep(c) }
            }
        }
        // JSON is printed as each capture is tracked: one object for one capture, an array otherwise.
        let writer = JSONStreamWriter { Output.write($0) }
        var array: JSONStreamWriter.Elements?
        var single = false
        let resolved = { (inputs: Int, failed: Bool) in single = inputs == 1 && !failed }
        // The text timeline counts a scan's devices and names none of them; the JSON lists the top ones.
        let failed = try Tracking.each(files, label: "timeline", anonymizing: anonymizing, retirement: retirement,
                                       scanDevicesListed: json ? ScanSessionJSON.topDeviceCount : trackOnly ? .max : 0,
                                       resolved: resolved) { input, model in
            if trackOnly {
                Diagnostics.printRaw("\(model.connections.count) connections, \(model.scans.count) scans, \(model.advertisers.count) advertisers")
                return
            }
            if let connection, json ? !TimelineReport.hasConnection(connection, model: model, judged: judgedObjects)
                : !TimelineReport.hasConnection(connection, model: model, judged: judgedLines) {
                Diagnostics.error(file: input.path, "no connection #\(connection) (the capture has \(model.linkCount))")
                throw ExitStatus.usage
            }
            // Which app each scan and link was, when the capture came with a bug report that names them.
            let apps = connection == nil ? ((try? input.bugReportApps()) ?? nil) : nil
            let attribution = apps.map { BugReportClock.attribute(model, report: $0) }
            if json {
                if let failure = judgedObjects?.records.failure {
                    Diagnostics.error(file: input.path, "cannot set the finished links' objects aside in \(directory): \(failure)")
                    throw ExitStatus.inputUnreadable
                }
                let level: Int
                if single {
                    level = 0
                } else {
                    if array == nil { array = writer.elements() }
                    array?.next()
                    level = 1
                }
                // Written as it is made, a connection at a time: the report is never held whole.
                TimelineReport.writeJSON(file: input.displayName, model: model, connectionFilter: connection, judged: judgedObjects,
                                         extra: attribution.map { [("attribution", AttributionReport.json($0, model: model.lastTimestamp))] } ?? [],
                                         to: writer, level: level)
                if single { Output.write("\n") }
            } else {
                if let failure = judgedLines?.records.failure {
                    Diagnostics.error(file: input.path, "cannot set the finished links' lines aside in \(directory): \(failure)")
                    throw ExitStatus.inputUnreadable
                }
                let colored = color == .always || (color == .auto && Output.standardOutputIsTerminal)
                if shown > 0 { Output.line("") }
                // The findings' headline opens a long report (`TimelineReport.overview`).
                var headline: String?
                if connection == nil {
                    if let spill {
                        do {
                            headline = TimelineReport.findingsHeadline(Findings(try Auditor().audit(model, file: input.path, judged: judgement, spill: spill).reported))
                        } catch {
                            Diagnostics.error(file: input.path, "cannot set the findings aside: \(error)")
                            throw ExitStatus.inputUnreadable
                        }
                    } else {
                        headline = TimelineReport.findingsHeadline(Auditor().audit(model, file: input.path, judged: judgement))
                    }
                }
                // Printed a line at a time as it is made: the report is never held whole.
                TimelineReport.write(file: input.path, model: model, connectionFilter: connection, colored: colored,
                                     full: full, findingsHeadline: headline, judged: judgedLines) { Output.line($0) }
                if let attribution {
                    Output.line("")
                    for line in AttributionReport.timelineLines(attribution, links: model.links, captureEnd: model.lastTimestamp) { Output.line(line) }
                }
                shown += 1
            }
        }
        if let array {
            array.close()
            Output.write("\n")
        }
        Output.flushStandardOutput()
        if failed { throw ExitStatus.inputUnreadable }
    }
}
