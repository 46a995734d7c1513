import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules
import BTReport
#if canImport(Glibc)
import Glibc
#endif

/// Everything btlens does to a capture, for the bad-input tests and the fuzz harness (`btlens-fuzz`): describe
/// every record (`decode -v`), anonymize it, count (`stats`), track, run every rule and render every report (and
/// the Perfetto trace).
public enum PipelineExercise {
    public struct Outcome: Sendable {
        /// Records the tracker observed.
        public var records: Int
        /// Problems kept in detail, and how many may be.
        public var keptIssues: Int
        public var keepLimit: Int
        /// A capture came out of an archive, a compressed file or a btsnooz summary: it may hold more records
        /// than its file's bytes could (within the decompression-bomb limits).
        public var expanded: Bool = false
    }

    /// What of the pipeline to run past reading and tracking: all of it for the tests; the fuzz harness picks one
    /// part per input (by the input), so that each input costs a part and every part is reached.
    public struct Parts: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `decode -v`: every record described.
        public static let describe = Parts(rawValue: 1 << 0)
        /// `anonymize` and `anonymize --check`.
        public static let anonymize = Parts(rawValue: 1 << 1)
        /// `stats`, text and JSON.
        public static let statistics = Parts(rawValue: 1 << 2)
        /// The tracked model in the timeline, GATT, audit (text, SARIF, JUnit, Markdown, JSON), devices and energy reports.
        public static let reports = Parts(rawValue: 1 << 3)
        /// The HTML report and the Perfetto trace.
        public static let htmlAndTrace = Parts(rawValue: 1 << 4)
        /// `audit`, `energy`, `timeline` and `devices` as they run: links judged and let go as they close.
        public static let judgedAsTheyClose = Parts(rawValue: 1 << 5)
        /// `diff` of the capture against itself.
        public static let diff = Parts(rawValue: 1 << 6)
        public static let each: [Parts] = [.describe, .anonymize, .statistics, .reports, .htmlAndTrace, .judgedAsTheyClose, .diff]
        public static let all = Parts(each)
    }

    /// Runs `path` — each capture it holds, when it is an archive or a bug report — through the whole pipeline
    /// (`parts` of it past tracking); nil when it is refused outright (not a capture, no capture inside).
    public static func run(path: String, name: String, linkThread: LinkThreadPolicy = .whenTwoProcessors, parts: Parts = .all) throws -> Outcome? {
        guard let inputs = try? CaptureInputs.resolve(path) else { return nil }
        var total: Outcome?
        for input in inputs {
            guard let one = try run(input, name: inputs.count == 1 ? name : input.displayName, linkThread: linkThread, parts: parts) else { continue }
            total = Outcome(records: (total?.records ?? 0) + one.records, keptIssues: max(total?.keptIssues ?? 0, one.keptIssues),
                            keepLimit: one.keepLimit, expanded: (total?.expanded ?? false) || !input.isPlainFile)
        }
        return total
    }

    static func run(_ input: CaptureInput, name: String, linkThread: LinkThreadPolicy, parts: Parts) throws -> Outcome? {
        guard var capture = try? input.open() else { return nil }
        if parts.contains(.describe) {
            var describe = DescribeEveryRecord()
            _ = try capture.accept(&describe)
        }
        // `btlens anonymize`: identifiers collected, then every packet rewritten in place and by value (into
        // /dev/null); `anonymize --check` of the capture against itself.
        let null = parts.contains(.anonymize) ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1
        if null >= 0 {
            let writer = try BTSnoopWriter(fd: null, datalink: BTSnoopDatalink.h4, ownsDescriptor: true)
            let identifiers = try AnonymizingCopier.copy(reading: { try input.open() }, to: writer).identifiers
            var check = AnonymizeCheck(identifiers: identifiers)
            _ = try input.open().accept(&check)
        }
        if parts.contains(.statistics) {
            capture = try input.open()
            var statistics = StatisticsCollector()
            let counted = try capture.accept(&statistics)
            _ = StatisticsText.render(file: name, info: capture.info, statistics: counted, notices: capture.issues.notices)
            _ = StatisticsJSON.object(file: name, info: capture.info, statistics: counted).serialized()
        }

        capture = try input.open()
        var options = TrackerOptions()
        options.linkThread = linkThread
        options.keptATTTransactions = 20_000  // as `export --format perfetto` tracks
        var collector = TrackingCollector(options: options)
        let advertising = AdvertisingSampler()
        collector.frameObserver = { advertising.observe($0) }
        let model = try capture.accept(&collector)
        let findings = Auditor().audit(model, file: name)
        let run = AuditRun(captures: [AuditedCapture(file: name, findings: findings)], failOn: .warning, version: "test")
        if parts.contains(.reports) {
            _ = TimelineReport.text(file: name, model: model)
            _ = TimelineReport.text(file: name, model: model, full: true, findingsHeadline: TimelineReport.findingsHeadline(findings))
            _ = TimelineReport.json(file: name, model: model).serialized()
            _ = GATTReport.text(file: name, model: model)
            _ = GATTReport.json(file: name, model: model).serialized()
            _ = AuditTextReport.render(run, colored: true, verbose: true)
            _ = AuditSARIF.render(run) + AuditJUnit.render(run) + AuditMarkdown.render(run) + AuditJSON.render(run)
            let devices = DevicesReport(file: name, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
            _ = DevicesText.render(devices) + DevicesJSON.object(devices).serialized()
        }
        if parts.contains(.reports) || parts.contains(.htmlAndTrace) {
            let energy = EnergyReport(model: model)
            if parts.contains(.reports) {
                _ = EnergyText.render(file: name, report: energy, side: .both) + EnergyJSON.object(file: name, report: energy).serialized()
                _ = EnergyText.render(file: name, report: energy, side: .both, full: true)
            }
            // `btlens export --format perfetto` (into /dev/null).
            let traceOut = parts.contains(.htmlAndTrace) ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1
            if traceOut >= 0 {
                _ = AuditHTML.render(run, models: [name: model])
                let trace = PerfettoTraceWriter(out: BufferedDescriptorWriter(fd: traceOut, ownsDescriptor: true))
                try trace.clockSnapshot(at: model.firstTimestamp?.nanoseconds ?? 0)
                try CaptureTrace(file: name, model: model, energy: energy, findings: findings, advertising: advertising).write(index: 0, to: trace)
                try trace.finish()
            }
        }
        if parts.contains(.judgedAsTheyClose) { try judgedAsTheyClose(input, name: name, linkThread: linkThread) }
        if parts.contains(.diff) {
            let side = DiffSide(label: name, model: model, findings: findings, energy: EnergyModel())
            let diff = CaptureDiff(base: side, head: side)
            _ = diff.text() + diff.markdown() + diff.json().serialized()
        }
        let issues = capture.issues
        return Outcome(records: model.records, keptIssues: issues.issues.count, keepLimit: issues.keepLimit)
    }

    /// `btlens audit`, `energy` and the text `timeline` as they run: links judged and slimmed as they close
    /// (`LinkRetirement`), here each as soon as the next one finishes.
    static func judgedAsTheyClose(_ input: CaptureInput, name: String, linkThread: LinkThreadPolicy) throws {
        let capture = try input.open()
        let auditor = Auditor()
        let judgement = auditor.linkJudgement(pricing: true)
        let rows = EnergyLinkRows(energy: auditor.energy)
        let lines = TimelineLinkLines()
        var options = TrackerOptions.withoutAdvertisers
        options.linkThread = linkThread
        options.connectionsWhileScanningListed = 0
        options.retirement = LinkRetirement(window: 1) { c, kept in
            judgement.judge(c, kept: kept)
            rows.price(c, kept: kept)
            if kept { lines.keep(c) }
        }
        var collector = TrackingCollector(options: options)
        let model = try capture.accept(&collector)
        let findings = auditor.audit(model, file: name, judged: judgement)
        var audited = AuditedCapture(file: name, findings: findings)
        audited.setRadioCharge(EnergyReport.accountedTotal(model: model, energy: auditor.energy, priced: judgement.priced))
        let run = AuditRun(captures: [audited], failOn: .warning, version: "test")
        _ = AuditTextReport.render(run, colored: false, verbose: true) + AuditJSON.render(run)
        // As `btlens audit` audits a large capture: findings set aside as they are made, the rules shared between
        // two threads. The same findings in the same order.
        var sharing = auditor
        sharing.sharedEvaluationRecords = 0
        let shared = try sharing.audit(model, file: name, judged: judgement, spill: FindingSpill(directory: nil)).reported
        func json(_ f: Findings) -> String {
            AuditJSON.render(AuditRun(captures: [AuditedCapture(file: name, findings: f, accepted: [])], failOn: .warning, version: "test"))
        }
        precondition(json(Findings(shared)) == json(Findings(findings)), "the findings differ with the rules on two threads")
        let energy = EnergyReport(model: model, energy: auditor.energy, rows: rows)
        _ = EnergyText.render(file: name, report: energy, side: .both) + EnergyJSON.object(file: name, report: energy).serialized()
        _ = TimelineReport.text(file: name, model: model, findingsHeadline: TimelineReport.findingsHeadline(findings), judged: lines)
        // `btlens devices`: every finished link let go as soon as the next one finishes.
        var devicesOptions = TrackerOptions()
        devicesOptions.linkThread = linkThread
        devicesOptions.retirement = LinkRetirement(window: 1, keeping: .nothing, letGoBatch: 1) { _, _ in }
        var devicesCollector = TrackingCollector(options: devicesOptions)
        let devicesModel = try input.open().accept(&devicesCollector)
        _ = DevicesJSON.object(DevicesReport(file: name, info: capture.info, model: devicesModel,
                                             advertiserOverflow: devicesModel.advertiserOverflow)).serialized()
        // `btlens audit`, `energy` and the text `timeline`: every judged link let go as soon as the next finishes,
        // but for what the capture-wide rules read (its summary, or 24 bytes).
        let summarized = auditor.linkJudgement(pricing: true)
        let summarizedRows = EnergyLinkRows(energy: auditor.energy)
        let summarizedLines = TimelineLinkLines()
        var summaryOptions = TrackerOptions.withoutAdvertisers
        summaryOptions.linkThread = linkThread
        summaryOptions.connectionsWhileScanningListed = 0
        summaryOptions.scanDevicesListed = 0
        summaryOptions.retirement = LinkRetirement(window: 1, keeping: .summary, interest: summarized.interest,
                                                   letGoBatch: 1) { c, kept in
            summarized.judge(c, kept: kept)
            summarizedRows.price(c, kept: kept)
            if kept { summarizedLines.keep(c) }
        }
        var summaryCollector = TrackingCollector(options: summaryOptions)
        let summaryModel = try input.open().accept(&summaryCollector)
        var summaryAudit = AuditedCapture(file: name, findings: auditor.audit(summaryModel, file: name, judged: summarized))
        summaryAudit.notes = AuditNotes.notes(summaryModel)
        _ = AuditJSON.render(AuditRun(captures: [summaryAudit], failOn: .warning, version: "test"))
        _ = EnergyJSON.object(file: name, report: EnergyReport(model: summaryModel, energy: auditor.energy, rows: summarizedRows)).serialized()
        _ = TimelineReport.text(file: name, model: summaryModel, findingsHeadline: "", judged: summarizedLines)
    }

    /// Timeline JSON and text, GATT text, devices JSON and the issue log of `path` tracked with `linkThread`:
    /// what must be the same on one thread and on two.
    /// `only`: that one of the first four reports (the fuzz harness compares one per input), the others empty.
    public static func trackingReports(path: String, linkThread: LinkThreadPolicy, only: Int? = nil) throws -> [String] {
        let issues = IssueLog()
        var reports: [String] = []
        for input in try CaptureInputs.resolve(path) {
            reports += try trackingReports(input, issues: issues, linkThread: linkThread, only: only)
        }
        return reports
    }

    static func trackingReports(_ input: CaptureInput, issues: IssueLog, linkThread: LinkThreadPolicy, only: Int?) throws -> [String] {
        let capture = try input.open(issues: issues)
        let path = input.path
        var options = TrackerOptions()
        options.linkThread = linkThread
        var collector = TrackingCollector(options: options)
        let model = try capture.accept(&collector)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        func wanted(_ report: Int) -> Bool { only == nil || only == report }
        // As the audit and `devices --json` track: finished scans keep only what those reports read of their
        // devices; the trimmed reports ride with the timeline JSON, as the energy report does, so the issue log
        // stays the fifth element.
        func trimmedReports() throws -> String {
            var trimmed = TrackerOptions()
            trimmed.linkThread = linkThread
            trimmed.scanDevicesListed = ScanSessionJSON.topDeviceCount
            var trimmedCollector = TrackingCollector(options: trimmed)
            let trimmedModel = try input.open().accept(&trimmedCollector)
            let trimmedAudit = AuditJSON.render(AuditRun(captures: [AuditedCapture(file: name, findings: Auditor().audit(trimmedModel, file: name))],
                                                         failOn: .warning, version: "test"))
            return trimmedAudit + DevicesJSON.object(DevicesReport(file: name, info: capture.info, model: trimmedModel,
                                                                   advertiserOverflow: trimmedModel.advertiserOverflow)).serialized()
        }
        return [wanted(0) ? TimelineReport.json(file: name, model: model).serialized()
                    + EnergyJSON.object(file: name, report: EnergyReport(model: model)).serialized() + (try trimmedReports()) : "",
                wanted(1) ? TimelineReport.text(file: name, model: model) : "",
                wanted(2) ? GATTReport.text(file: name, model: model) : "",
                wanted(3) ? DevicesJSON.object(DevicesReport(file: name, info: capture.info, model: model,
                                                             advertiserOverflow: model.advertiserOverflow)).serialized() : "",
                "\(issues.count) issues: " + issues.issues.map(\.description).joined(separator: "\n")]
    }

    /// What `btlens decode -v` does: describe every record, fields included.
    struct DescribeEveryRecord: RecordSourceVisitor {
        mutating func visit<S: RecordSource>(_ source: S) throws -> Int {
            var decoder = PacketDecoder(issues: source.issues)
            var characters = 0
            while let record = source.next() {
                let frame = decoder.decode(record)
                characters += FrameDescription.summary(frame).count + FrameDescription.fields(frame).count
            }
            return characters
        }
    }
}
