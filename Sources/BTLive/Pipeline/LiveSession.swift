import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport

/// What a live capture amounted to when it ended.
public struct LiveSummary: Sendable {
    /// Records seen (after `--index`).
    public var records: Int
    public var connections: Int
    /// Links still up when the capture ended.
    public var openConnections: Int
    public var failedConnections: Int
    /// Of `failedConnections`, the attempts the host withdrew (Create Connection Cancel).
    public var cancelledConnections: Int
    /// Every finding of the final audit.
    public var findings: [Finding]
    /// Findings printed while the capture ran (the final audit may add more and revise their numbers).
    public var findingsShownLive: Int
    /// Records written to `--write`.
    public var written: Int
}

/// The live pipeline: filter → write → decode → track → print, with connection events as links come and go
/// and periodic audits of a tracker snapshot whose new findings are printed once. Sources call `idle()` while
/// they wait, which flushes output and runs a due audit; `finish()` closes the model and prints the summary
/// and every finding. The same pipeline serves the socket, followed files and standard input.
public final class LiveSession {
    public let options: LiveOptions
    public let issues: IssueLog
    let output: any LiveOutput
    let writer: LiveCaptureWriter?
    var decoder: PacketDecoder
    let tracker: CaptureTracker
    let auditor: Auditor
    var schedule: LiveAuditSchedule
    /// Fingerprints of the findings printed so far: a finding shows once although every later audit finds it
    /// again, with other numbers and wording as the capture grows ("993 ms" becomes "3.2 s", "still connected"
    /// becomes "before the disconnect"), which the fingerprint leaves out. A second link to the same peer, or a
    /// second scan session, has a fingerprint of its own and shows anew.
    var shown: Set<String> = []
    var counters: CaptureTracker.LinkCounters
    var first: Timestamp?
    var last: Timestamp?
    public private(set) var records = 0

    public init(options: LiveOptions, output: any LiveOutput, writer: LiveCaptureWriter? = nil,
                issues: IssueLog = IssueLog(), trackerOptions: TrackerOptions = .withoutAdvertisers) {
        self.options = options
        self.output = output
        self.writer = writer
        self.issues = issues
        decoder = PacketDecoder(issues: issues)
        tracker = CaptureTracker(options: trackerOptions)
        auditor = Auditor(configuration: options.configuration)
        schedule = LiveAuditSchedule(options: options)
        counters = tracker.linkCounters
    }

    /// One record from the source. `fromMonitor`: the record's `sourceType` is a monitor opcode (the socket,
    /// btsnoop datalink 2001), which `--write` keeps as is.
    public func process(_ record: CaptureRecord, fromMonitor: Bool) {
        if let index = options.index, record.controller != index, record.controller != CaptureRecord.noController {
            return
        }
        records += 1
        if let writer, let error = writer.write(record, fromMonitor: fromMonitor) {
            output.note("\(writer.path): cannot write the capture (\(error.message)); no longer writing it")
        }
        let frame = decoder.decode(record)
        tracker.observe(frame)
        let start = first ?? record.timestamp
        first = start
        last = record.timestamp
        output.line(LiveLines.record(frame, first: start, format: options.format))
        if fromMonitor { noteController(record) }
        let now = tracker.linkCounters
        if now != counters {
            reportLinks(from: counters, to: now, at: record.timestamp)
            counters = now
        }
        schedule.recorded(at: record.timestamp)
        if schedule.isDue { auditIfDue(idle: false) }
    }

    /// The source has nothing more for now: run a due audit and push the output out.
    public func idle() {
        auditIfDue(idle: true)
        output.flush()
    }

    /// A truncated or rotated file, as `FollowingSource` reports it.
    public func note(_ text: String) {
        output.flush()
        output.note(text)
    }

    // MARK: - Connection events

    func reportLinks(from old: CaptureTracker.LinkCounters, to new: CaptureTracker.LinkCounters, at now: Timestamp) {
        let start = first ?? now
        for c in tracker.closedConnections(after: old.closed) {
            output.line(LiveLines.connectionDown(c, now: now, first: start, format: options.format))
        }
        if new.opened > old.opened {
            for id in (old.opened + 1)...new.opened {
                guard let c = tracker.connection(id: id) else { continue }
                output.line(LiveLines.connectionUp(c, now: now, first: start, format: options.format))
            }
        }
        for f in tracker.failedConnections(after: old.failed) {
            output.line(LiveLines.connectionFailed(f, first: start, format: options.format))
        }
    }

    /// Controllers coming and going on the monitor channel (NEW_INDEX, DEL_INDEX), on standard error: a
    /// removed controller does not end the capture, but the user should know why its traffic stopped.
    func noteController(_ record: CaptureRecord) {
        switch record.kind {
        case .controllerAdded:
            if case .newIndex(_, let bus, let address, let name) = NoteRecord(record) {
                let busName = Int(bus) < NoteRecord.busNames.count ? NoteRecord.busNames[Int(bus)] : "bus \(bus)"
                note("controller hci\(record.controller) present (\(name.isEmpty ? "unnamed" : name), \(busName), \(address))")
            }
        case .controllerRemoved:
            note("controller hci\(record.controller) was removed; still listening")
        default:
            break
        }
    }

    // MARK: - Findings

    func auditIfDue(idle: Bool) {
        guard schedule.shouldRun(idle: idle) else { return }
        let findings = auditor.audit(tracker.snapshot(), file: options.label)
        schedule.ran(at: last)
        let now = last ?? Timestamp(nanoseconds: 0)
        for f in findings where shown.insert(f.fingerprint).inserted {
            output.line(LiveLines.finding(f, now: now, first: first ?? now, format: options.format))
        }
    }

    // MARK: - The end

    /// Closes the model, audits it and prints the summary and every finding. `reason`: why the capture ended,
    /// for the summary line ("interrupted (SIGINT)", "end of input").
    @discardableResult
    public func finish(reason: String) -> LiveSummary {
        let model = tracker.finish()
        let findings = auditor.audit(model, file: options.label)
        let open = model.connections.filter { $0.isOpen }.count
        let summary = LiveSummary(records: records, connections: model.connections.count, openConnections: open,
                                  failedConnections: model.failedConnections.count,
                                  cancelledConnections: model.failedConnections.filter(\.cancelledByHost).count, findings: findings,
                                  findingsShownLive: shown.count, written: writer?.written ?? 0)
        switch options.format {
        case .text:
            var line = "--- btlens live: \(reason): \(Plural.of(records, "record")), \(Plural.of(summary.connections, "connection"))"
            if open > 0 { line += " (\(open) still open)" }
            let failed = summary.failedConnections - summary.cancelledConnections
            if failed > 0 { line += ", \(Plural.of(failed, "failed connection attempt"))" }
            if summary.cancelledConnections > 0 {
                line += ", \(Plural.of(summary.cancelledConnections, "connection attempt")) cancelled by the host"
            }
            if let writer { line += ", \(Plural.of(writer.written, "record")) written to \(writer.path)" }
            output.line("")
            output.line(line)
            let run = AuditRun(captures: [AuditedCapture(file: options.label, findings: findings, records: model.records,
                                                         connections: model.connections.count, platform: model.platform)],
                               failOn: nil, version: options.version)
            output.line(AuditTextReport.render(run, colored: false))
        case .json:
            output.line(LiveLines.json([
                ("type", .string("summary")), ("reason", .string(reason)), ("records", .int(records)),
                ("connections", .int(summary.connections)), ("open_connections", .int(open)),
                ("failed_connections", .int(summary.failedConnections)),
                ("cancelled_connections", .int(summary.cancelledConnections)),
                ("malformed", .int(issues.count)),
                ("written", writer.map { _ in .int(summary.written) } ?? .null),
                ("findings_shown_live", .int(summary.findingsShownLive)),
                ("findings", .array(findings.map(AuditJSON.finding))),
            ]))
        }
        output.flush()
        return summary
    }
}
