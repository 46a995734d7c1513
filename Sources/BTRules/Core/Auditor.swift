import BTCapture
import BTTrack
import BTEnergy

/// Runs the enabled rules over a capture's model and returns deterministic, de-duplicated findings.
public struct Auditor: Sendable {
    public var configuration: AuditConfiguration
    /// Prices each finding's saving.
    public var energy: EnergyModel

    public init(configuration: AuditConfiguration = AuditConfiguration(), energy: EnergyModel = EnergyModel()) {
        self.configuration = configuration
        self.energy = energy
    }

    public func audit(_ model: CaptureModel, file: String) -> [Finding] {
        var findings: [Finding] = []
        for rule in RuleRegistry.all {
            let d = rule.description
            guard configuration.isEnabled(d) else { continue }
            let context = RuleContext(description: d, overrides: configuration.options[d.id] ?? [:], energy: energy)
            var produced = rule.init().evaluate(model, context: context)
            if let severity = configuration.severities[d.id] {
                for i in produced.indices { produced[i].severity = severity }
            }
            findings += produced
        }
        for i in findings.indices { findings[i].file = file }
        return Self.ordered(Self.deduplicated(findings))
    }

    /// Keeps the first finding per fingerprint and time, so a rule reporting the same thing twice shows once.
    static func deduplicated(_ findings: [Finding]) -> [Finding] {
        var seen = Set<String>()
        return findings.filter { seen.insert($0.fingerprint + "@\($0.start.nanoseconds)").inserted }
    }

    /// Stable order: file, time, rule id, connection, attribute.
    public static func ordered(_ findings: [Finding]) -> [Finding] {
        findings.sorted {
            ($0.file, $0.start.nanoseconds, $0.id, $0.connection?.id ?? 0, Int($0.attributeHandle ?? 0))
                < ($1.file, $1.start.nanoseconds, $1.id, $1.connection?.id ?? 0, Int($1.attributeHandle ?? 0))
        }
    }
}
