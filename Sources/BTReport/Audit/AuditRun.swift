import BTWire
import BTCapture
import BTTrack
import BTRules
import BTEnergy

/// The result of auditing one capture.
public struct AuditedCapture: Sendable {
    public var file: String
    /// In report order; `btlens audit` reads them back from a spill file one at a time (`StoredFindings`).
    public var findings: Findings
    /// Why the capture could not be read, when it could not.
    public var error: String?
    public var records = 0
    public var connections = 0
    /// The host's platform, where the capture shows it.
    public var platform = PlatformEvidence()
    /// The phone's radio charge over the capture (`btlens energy`'s total: the controller's counters where they
    /// count, `PhoneTotal`) and the capture's length: what findings' savings are shares and rates of.
    public var radioChargeMC: Double?
    /// The model's own radio charge, and the seconds the controller's counters cover (nil without counters).
    public var modelRadioChargeMC: Double?
    public var countedSeconds: Double?
    /// The host kept awake by HCI traffic over the capture (`energy`'s host wake-ups).
    public var hostChargeMC: Double = 0
    public var captureSeconds: Double = 0
    /// Findings hidden because the baseline accepts them; kept so a refreshed baseline still lists them.
    public var accepted: Findings = []
    public var suppressed: Int { accepted.count }
    /// What to know about the capture to read its findings (`AuditNotes`): said once.
    public var notes: [String] = []
    /// The capture held no HCI packet or link-layer frame: nothing was judged (snoop logging off or broken).
    public var nothingToJudge = false
    /// Which app each scan and link was, from the bug report the capture came with; nil without one.
    public var attribution: AppAttribution?
    /// `--app`: the app audited alone, and the others' activity as context; nil without `--app`.
    public var focus: AppFocus?
    /// The capture's last record time (for scans still on at its end).
    public var captureEnd: Timestamp?

    public init(file: String, findings: [Finding], error: String? = nil, records: Int = 0, connections: Int = 0,
                accepted: [Finding] = [], platform: PlatformEvidence = PlatformEvidence()) {
        self.init(file: file, findings: Findings(findings), error: error, records: records, connections: connections,
                  accepted: Findings(accepted), platform: platform)
    }

    public init(file: String, findings: Findings, error: String? = nil, records: Int = 0, connections: Int = 0,
                accepted: Findings, platform: PlatformEvidence = PlatformEvidence()) {
        self.platform = platform
        self.file = file
        self.findings = findings
        self.error = error
        self.records = records
        self.connections = connections
        self.accepted = accepted
    }
}

/// Everything one `btlens audit` run found, in input order.
public struct AuditRun: Sendable {
    public let captures: [AuditedCapture]
    /// Findings at or above this severity fail the run; nil = never.
    public var failOn: Severity?
    public var version: String
    /// Every capture's findings, in input order: gathered once, since each report reads them several times.
    public let findings: Findings

    public init(captures: [AuditedCapture], failOn: Severity?, version: String) {
        self.captures = captures
        self.failOn = failOn
        self.version = version
        // One capture's findings are shared, not copied.
        findings = captures.count == 1 ? captures[0].findings : Findings(concatenating: captures.map(\.findings))
    }

    /// What a baseline written from this run accepts: the reported findings and those an earlier baseline
    /// already accepted, in the order a run without a baseline reports them.
    public var baselineFindings: [Finding] { captures.flatMap { Auditor.ordered($0.findings.array + $0.accepted.array) } }

    public func count(_ severity: Severity) -> Int { findings.count(severity) }

    public func fails(_ f: Finding) -> Bool { failOn.map { f.severity >= $0 } ?? false }
    public func fails(_ key: FindingKey) -> Bool { failOn.map { key.severity >= $0 } ?? false }

    /// How the run ended; `btlens audit` exits with the matching code.
    public enum Status: String, Sendable {
        /// Every input was read and no finding reached `failOn` (exit 0).
        case passed
        /// A finding reached `failOn` (exit 1).
        case failed
        /// An input could not be read (exit 3), whatever the others showed: the audit is incomplete.
        case unreadable
    }

    public var status: Status {
        if captures.contains(where: { $0.error != nil }) { return .unreadable }
        return failOn.map(findings.contains(atLeast:)) ?? false ? .failed : .passed
    }

    /// The run did not pass: a finding reached `failOn` or an input could not be read.
    public var failed: Bool { status != .passed }

    /// "2 errors, 5 warnings, 1 info in 3 captures".
    public var summary: String {
        let e = count(.error), w = count(.warning), i = count(.info)
        var text = "\(Plural.of(e, "error")), \(Plural.of(w, "warning")), \(i) info in \(Plural.of(captures.count, "capture"))"
        let unreadable = captures.filter { $0.error != nil }.count
        if unreadable > 0 { text += " (\(unreadable) unreadable)" }
        let suppressed = captures.map(\.suppressed).reduce(0, +)
        if suppressed > 0 { text += ", \(suppressed) accepted by the baseline" }
        return text
    }
}

/// Shared wording for reports.
enum AuditText {
    static func connection(_ c: FindingConnection) -> String {
        "connection #\(c.id) \(c.linkName)" + (c.peerAddress.map { " peer \($0)" } ?? "")
    }

    static func records(_ refs: [RecordRef], limit: Int = 6) -> String {
        let shown = refs.prefix(limit).map { "#\($0.number) @\($0.offset)" }.joined(separator: ", ")
        return refs.count > limit ? shown + ", …" : shown
    }
}

extension AuditedCapture {
    /// The capture's radio charge from its `PhoneTotal`: the lead total, the model's beside it where counters count.
    public mutating func setRadioCharge(_ total: PhoneTotal) {
        radioChargeMC = total.cost.chargeMC
        modelRadioChargeMC = total.model.chargeMC
        countedSeconds = total.measured?.seconds
    }
}
