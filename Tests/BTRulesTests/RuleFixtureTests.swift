import Testing
import BTWire
import BTTrack
import BTRules
import TestSupport

/// One case per (rule, fixture) declared in the rule's description: the rule's documentation is its test.
struct FixtureCase: CustomTestStringConvertible, Sendable {
    var ruleID: String
    var index: Int
    var testDescription: String {
        guard let rule = RuleRegistry.rule(ruleID) else { return ruleID }
        let f = rule.description.fixtures[index]
        return "\(rule.description.name) on \(f.scenario): \(f.expectedFindings == 0 ? "silent" : "\(f.expectedFindings) finding(s)")"
    }

    static let all: [FixtureCase] = RuleRegistry.descriptions.flatMap { d in
        d.fixtures.indices.map { FixtureCase(ruleID: d.id, index: $0) }
    }
}

/// Models of the scenario captures, tracked once per process.
enum ScenarioModels {
    nonisolated(unsafe) static var cache: [String: CaptureModel] = [:]
    static let lock = NSLockShim()

    static func model(_ scenario: String) throws -> CaptureModel {
        lock.lock()
        defer { lock.unlock() }
        if let m = cache[scenario] { return m }
        let m = try trackScenario(scenario)
        cache[scenario] = m
        return m
    }
}

@Suite("rules on their fixtures")
struct RuleFixtureTests {
    @Test("every rule declares triggering and silent fixtures")
    func everyRuleHasFixtures() {
        for d in RuleRegistry.descriptions {
            #expect(d.fixtures.contains { $0.expectedFindings > 0 }, "\(d.name) has no triggering fixture")
            #expect(d.fixtures.contains { $0.expectedFindings == 0 }, "\(d.name) has no silent fixture")
        }
    }

    @Test("fixture", arguments: FixtureCase.all)
    func fixture(_ c: FixtureCase) throws {
        let rule = try #require(RuleRegistry.rule(c.ruleID))
        let fixture = rule.description.fixtures[c.index]
        let model = try ScenarioModels.model(fixture.scenario)
        let findings = rule.init().evaluate(model, context: RuleContext(description: rule.description))
        #expect(findings.count == fixture.expectedFindings, "\(findings.map(\.message))")
        if let connection = fixture.connection {
            #expect(findings.first?.connection?.id == connection)
        }
        if let handle = fixture.attributeHandle {
            #expect(findings.contains { $0.attributeHandle == handle })
        }
        for f in findings {
            #expect(f.rule == rule.description.name)
            #expect(!f.records.isEmpty, "a finding must cite records")
            #expect(f.start <= f.end)
            #expect(!f.message.isEmpty && !f.advice.isEmpty)
        }
    }

    @Test("a rule's options: defaults, overrides, and the options changed afterwards")
    func options() {
        var context = RuleContext(description: LingeringConnectionRule.description, overrides: ["idle_seconds": 12])
        #expect(context.option("idle_seconds") == 12)
        #expect(context.option("after_unsubscribe_seconds") == 10)
        #expect(context.option("no_such_option") == 0)
        context.options["after_unsubscribe_seconds"] = 3
        context.options["idle_seconds"] = nil
        #expect(context.option("after_unsubscribe_seconds") == 3)
        #expect(context.option("idle_seconds") == 0)
    }

    @Test("ids and names are unique and well formed")
    func uniqueIDs() {
        let d = RuleRegistry.descriptions
        #expect(Set(d.map(\.id)).count == d.count)
        #expect(Set(d.map(\.name)).count == d.count)
        for r in d {
            #expect(r.id.hasPrefix("BTL") && r.id.count == 6 && Int(r.id.dropFirst(3)) != nil, "\(r.id)")
            #expect(r.name.allSatisfy { $0.isLowercase || $0 == "-" }, "\(r.name)")
            #expect(!r.rationale.isEmpty && !r.coreBluetooth.isEmpty && !r.android.isEmpty)
        }
    }
}
