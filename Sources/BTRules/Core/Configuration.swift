/// Which rules run, at what severity, with which thresholds: the config file and command-line options.
public struct AuditConfiguration: Sendable {
    /// Rule ids or names switched off / on (on wins over off for the same rule when given on the command line).
    public var disabled: Set<String> = []
    public var enabled: Set<String> = []
    /// Severity overrides by rule id.
    public var severities: [String: Severity] = [:]
    /// Option overrides by rule id, then option name.
    public var options: [String: [String: Double]] = [:]

    public init() {}

    /// Normalises a rule key (id or name) to the rule's id; nil when no rule has it.
    public static func ruleID(_ key: String) -> String? { RuleRegistry.rule(key)?.description.id }

    public func isEnabled(_ d: RuleDescription) -> Bool {
        if enabled.contains(d.id) { return true }
        return !disabled.contains(d.id)
    }
}
