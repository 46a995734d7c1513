import BTTrack
import BTEnergy

/// A rule's documentation, which is also its test: id, name, rationale, advice, options and the fixture
/// captures that must trigger it (and where) and must not (as SwiftLint and clippy document their rules).
public struct RuleDescription: Sendable {
    public enum Category: String, Sendable, CaseIterable {
        case scanning, discovery, connection, transfer, advertising, correctness
    }

    /// Stable id: `BTL` + three digits. Never reused.
    public var id: String
    /// Stable kebab name.
    public var name: String
    public var title: String
    public var category: Category
    public var defaultSeverity: Severity
    /// What it costs on the radio, and why.
    public var rationale: String
    /// What to do instead with CoreBluetooth.
    public var coreBluetooth: String { didSet { advice = Self.advice(coreBluetooth, android) } }
    /// What to do instead with Android's API.
    public var android: String { didSet { advice = Self.advice(coreBluetooth, android) } }
    /// Both, as every finding of the rule carries them: made once, so that the findings share one string (made
    /// per finding, it took 9 MB of a capture with 19,500 findings).
    public private(set) var advice: String
    public var options: [RuleOption]
    public var fixtures: [RuleFixture]
    /// What one evaluation reads: one link alone (judged as the link is retired, `LinkRetirement`) or the
    /// whole capture (judged at its end).
    public var scope: RuleScope

    public init(id: String, name: String, title: String, category: Category, defaultSeverity: Severity,
                rationale: String, coreBluetooth: String, android: String, options: [RuleOption] = [],
                fixtures: [RuleFixture], scope: RuleScope = .capture) {
        self.scope = scope
        self.id = id
        self.name = name
        self.title = title
        self.category = category
        self.defaultSeverity = defaultSeverity
        self.rationale = rationale
        self.coreBluetooth = coreBluetooth
        self.android = android
        advice = Self.advice(coreBluetooth, android)
        self.options = options
        self.fixtures = fixtures
    }

    static func advice(_ coreBluetooth: String, _ android: String) -> String { "CoreBluetooth: \(coreBluetooth) Android: \(android)" }
}

/// What a rule reads to judge.
public enum RuleScope: String, Sendable {
    /// Each link on its own (its events, series, discoveries and database): judged when the link is retired.
    case link
    /// Links, scans and advertising together: judged when the capture ends.
    case capture
}

/// A threshold a user can change in the config file.
public struct RuleOption: Sendable {
    public var name: String
    public var defaultValue: Double
    public var unit: String
    public var summary: String

    public init(_ name: String, _ defaultValue: Double, unit: String = "", _ summary: String) {
        self.name = name
        self.defaultValue = defaultValue
        self.unit = unit
        self.summary = summary
    }
}

/// A scenario capture (from BTScenario) a rule is tested on.
public struct RuleFixture: Sendable {
    /// The scenario's name.
    public var scenario: String
    /// Findings the rule must report on it (0 = must stay silent).
    public var expectedFindings: Int
    /// Where the finding must appear: the connection number, when connection-level.
    public var connection: Int?
    /// An attribute handle the finding must name.
    public var attributeHandle: UInt16?

    public static func triggers(_ scenario: String, findings: Int = 1, connection: Int? = nil,
                                attributeHandle: UInt16? = nil) -> RuleFixture {
        RuleFixture(scenario: scenario, expectedFindings: findings, connection: connection, attributeHandle: attributeHandle)
    }

    public static func clean(_ scenario: String) -> RuleFixture {
        RuleFixture(scenario: scenario, expectedFindings: 0, connection: nil, attributeHandle: nil)
    }
}

/// Option values for one run: defaults overridden by the config file.
public struct RuleContext: Sendable {
    public var options: [String: Double] {
        get { Dictionary(uniqueKeysWithValues: listed.lazy.map { ($0.name, $0.value) }) }
        set { listed = newValue.map { ($0.key, $0.value) } }
    }
    /// The options as a list: a rule asks for its few options on every link judged, and comparing a short name
    /// costs less than hashing it.
    private var listed: [(name: String, value: Double)]
    public var description: RuleDescription
    /// Prices findings' counterfactuals (`FindingCost`).
    public var energy: EnergyModel

    public init(description: RuleDescription, overrides: [String: Double] = [:], energy: EnergyModel = EnergyModel()) {
        self.description = description
        self.energy = energy
        var values: [String: Double] = [:]
        for o in description.options { values[o.name] = overrides[o.name] ?? o.defaultValue }
        listed = values.map { ($0.key, $0.value) }
    }

    public func option(_ name: String) -> Double {
        for o in listed where o.name == name { return o.value }
        return 0
    }
}

/// A best-practice rule. Rules read the tracking layer's model, never bytes.
public protocol Rule: Sendable {
    static var description: RuleDescription { get }
    init()
    func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding]
    /// `evaluate`, each finding handed to `found` as it is made, in the same order: a rule that can find tens of
    /// thousands in one capture gives them this way, so that they are set aside (`FindingSpill`) rather than
    /// held until the last is made.
    func evaluate(_ model: CaptureModel, context: RuleContext, found: (Finding) -> Void)
}

extension Rule {
    public func evaluate(_ model: CaptureModel, context: RuleContext, found: (Finding) -> Void) {
        for f in evaluate(model, context: context) { found(f) }
    }

    /// `evaluate(_:context:found:)`'s findings as a list: for rules that make them one at a time.
    public func collected(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        evaluate(model, context: context) { findings.append($0) }
        return findings
    }
}
