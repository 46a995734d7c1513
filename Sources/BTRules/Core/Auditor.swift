import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// Runs the enabled rules over a capture's model and returns deterministic, de-duplicated findings.
public struct Auditor: Sendable {
    public var configuration: AuditConfiguration
    /// Prices each finding's saving.
    public var energy: EnergyModel
    /// Captures of at least this many HCI packets and link-layer frames (`CaptureModel.judgedRecords`) have their
    /// rules evaluated on two threads when findings are set aside (`audit(_:file:judged:spill:finishing:)`): on a
    /// smaller one a thread and its files cost more than the rules (a thousand captures a second in a fleet
    /// export). `Int.max` with one processor.
    public var sharedEvaluationRecords = Auditor.defaultSharedEvaluationRecords
    public static let defaultSharedEvaluationRecords = SecondThread.isWorthwhile ? 1 << 20 : Int.max

    public init(configuration: AuditConfiguration = AuditConfiguration(), energy: EnergyModel = EnergyModel()) {
        self.configuration = configuration
        self.energy = energy
    }

    /// `judged` holds the per-link rules' findings on links judged before the capture ended (`LinkRetirement`);
    /// the model's other links are judged here. The findings are the same either way.
    public func audit(_ model: CaptureModel, file: String, judged: LinkJudgement? = nil) -> [Finding] {
        var findings: [Finding] = []
        let rest = judged == nil ? model : model.withoutJudgedLinks
        for rule in RuleRegistry.all {
            let d = rule.description
            guard configuration.isEnabled(d) else { continue }
            if d.scope == .link, let judged {
                // In link order, as one evaluation over every link gives them.
                findings += Self.inLinkOrder(judged.findings(of: d.id) + evaluate(rule, rest))
            } else {
                findings += evaluate(rule, model)
            }
        }
        for i in findings.indices { findings[i].file = file }
        // In place: a capture with tens of thousands of findings held three copies at once.
        Self.deduplicate(&findings)
        MeasuredCap(model.controllerActivity).apply(to: &findings)
        findings.sort(by: Self.precedes)
        return findings
    }

    func evaluate(_ rule: any Rule.Type, _ model: CaptureModel) -> [Finding] { prepare(rule).evaluate(model) }

    /// `rule` with this configuration's options and severity for it.
    func prepare(_ rule: any Rule.Type) -> PreparedRule {
        let d = rule.description
        return PreparedRule(rule: rule.init(), id: d.id,
                            context: RuleContext(description: d, overrides: configuration.options[d.id] ?? [:], energy: energy),
                            severity: configuration.severities[d.id])
    }

    /// Findings by their link's id, keeping each link's own order (a stable sort).
    static func inLinkOrder(_ findings: [Finding]) -> [Finding] {
        findings.enumerated().sorted { ($0.element.connection?.id ?? 0, $0.offset) < ($1.element.connection?.id ?? 0, $1.offset) }
            .map(\.element)
    }

    /// Judges links as they are retired while the capture is read: pass `linkJudgement().retirement()` to the
    /// tracker (`TrackerOptions.retirement`) and the judgement to `audit(_:file:judged:)`.
    /// `pricing`: also price the judged links' phases for the energy total (`EnergyReport.phoneTotal`'s `priced`),
    /// which only the audit's summary needs.
    /// `spill`: the judged links' findings are set aside there as they are made, for
    /// `audit(_:file:judged:spill:finishing:)` with the same spill.
    public func linkJudgement(pricing: Bool = false, spill: FindingSpill? = nil) -> LinkJudgement {
        LinkJudgement(auditor: self, pricing: pricing, spill: spill)
    }

    /// Keeps the first finding per fingerprint and time, so a rule reporting the same thing twice shows once.
    public static func deduplicated(_ findings: [Finding]) -> [Finding] {
        var kept = findings
        deduplicate(&kept)
        return kept
    }

    /// `deduplicated`, in place: the first of each fingerprint and time stays, in order.
    static func deduplicate(_ findings: inout [Finding]) {
        var seen = Set<String>()
        var kept = 0
        for i in findings.indices where seen.insert(findings[i].fingerprint + "@\(findings[i].start.nanoseconds)").inserted {
            if kept != i { findings.swapAt(kept, i) }
            kept += 1
        }
        findings.removeLast(findings.count - kept)
    }

    /// Stable order: file, time, rule id, connection, attribute.
    public static func ordered(_ findings: [Finding]) -> [Finding] { findings.sorted(by: precedes) }

    static func precedes(_ a: Finding, _ b: Finding) -> Bool {
        (a.file, a.start.nanoseconds, a.id, a.connection?.id ?? 0, Int(a.attributeHandle ?? 0))
            < (b.file, b.start.nanoseconds, b.id, b.connection?.id ?? 0, Int(b.attributeHandle ?? 0))
    }
}

/// The per-link rules' findings on links judged before the capture ended, by rule (`LinkRetirement`).
public final class LinkJudgement: @unchecked Sendable {
    let auditor: Auditor
    /// Prepared once: a link's judgement runs each, and building a rule's context (a dictionary of its options)
    /// per link cost about as much as the rules themselves.
    let rules: [PreparedRule]
    var byRule: [String: [Finding]] = [:]
    /// Where the findings are set aside when they are not held in `byRule`, and where they are there, by rule.
    let spill: FindingSpill?
    var spilledByRule: [String: [FindingSpill.Ref]] = [:]
    /// The judged links' phase costs, for the energy total (their phases are let go); nil unless made with
    /// `pricing`.
    public private(set) var priced: PricedPhases?

    init(auditor: Auditor, pricing: Bool, spill: FindingSpill? = nil) {
        self.auditor = auditor
        self.spill = spill
        priced = pricing ? PricedPhases() : nil
        rules = RuleRegistry.all.filter { $0.description.scope == .link && auditor.configuration.isEnabled($0.description) }
            .map(auditor.prepare)
    }

    /// Runs the per-link rules on one finished link, as the whole capture's evaluation would; prices its phases
    /// when pricing and it stays in the model (`kept`). Returns the link's findings (the Perfetto export draws them at once).
    @discardableResult
    public func judge(_ c: Connection, kept: Bool = true) -> [Finding] {
        let model = CaptureModel.links([c])
        var found: [Finding] = []
        for rule in rules {
            let produced = rule.evaluate(model)
            if !produced.isEmpty {
                if let spill {
                    spilledByRule[rule.id, default: []] += produced.map(spill.append)
                } else {
                    byRule[rule.id, default: []] += produced
                }
                found += produced
            }
        }
        if kept { priced?.price(c, energy: auditor.energy) }
        return Auditor.deduplicated(found)
    }

    /// Whether the rule `id` is judged per link: on a link judged early, its findings are those `judge` gave.
    public func judgesPerLink(_ id: String) -> Bool { rules.contains { $0.id == id } }

    func findings(of rule: String) -> [Finding] {
        guard let spill else { return byRule[rule] ?? [] }
        return (spilledByRule[rule] ?? []).compactMap { try? spill.read($0) }
    }

    /// The findings of `rule` set aside in `target`: where they are, when they were set aside there as made.
    func spilledFindings(of rule: String, in target: FindingSpill) -> [FindingSpill.Ref] {
        if spill === target { return spilledByRule[rule] ?? [] }
        return findings(of: rule).map(target.append)
    }

    /// The tracker's side: judges with this judgement. The capture-wide rules read judged links' summaries
    /// (`CaptureModel.links`), so a judged link is kept slim only when more of it may still be read
    /// (`LinkRetirement.Keeping.summary`).
    public func retirement(window: Int = LinkRetirement.defaultWindow, wholeBudget: Int = LinkRetirement.defaultWholeBudget,
                           letGoBatch: Int = LinkRetirement.defaultLetGoBatch) -> LinkRetirement {
        LinkRetirement(window: window, wholeBudget: wholeBudget, keeping: .summary, interest: interest,
                       letGoBatch: letGoBatch) { [self] c, kept in
            judge(c, kept: kept)
        }
    }

    /// What the capture-wide rules read of judged links (`LinkInterest`), with this configuration's options.
    public var interest: LinkInterest {
        let churn = auditor.prepare(ConnectionChurnRule.self).context
        return LinkInterest(
            scanEndAroundRequest: (before: 2 * ScanChurnRule.restartGap, after: ScanChurnRule.restartGap),
            peerWindow: Int64(saturating: max(0, churn.option("window_seconds")) * 1e9),
            everyAppLink: churn.option("minimum_connections") <= 1)
    }
}

/// A rule with its context (options) and severity override resolved for one configuration. A class: judging a
/// link walks the prepared rules, and a struct would be copied (its strings and dictionaries retained) at each.
final class PreparedRule: Sendable {
    let rule: any Rule
    let id: String
    let context: RuleContext
    let severity: Severity?

    init(rule: any Rule, id: String, context: RuleContext, severity: Severity?) {
        self.rule = rule
        self.id = id
        self.context = context
        self.severity = severity
    }

    func evaluate(_ model: CaptureModel) -> [Finding] {
        var produced = rule.evaluate(model, context: context)
        if let severity {
            for i in produced.indices { produced[i].severity = severity }
        }
        return produced
    }

    /// `evaluate`, each finding handed to `found` as the rule makes it.
    func evaluate(_ model: CaptureModel, found: (Finding) -> Void) {
        guard let severity else { return rule.evaluate(model, context: context, found: found) }
        rule.evaluate(model, context: context) { f in
            var f = f
            f.severity = severity
            found(f)
        }
    }
}
