import ArgumentParser
import BTRules
import BTReport

struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "List the audit rules: id, name, severity, category and title.",
        discussion: "Examples:\n  btlens rules\n  btlens rules --json | jq '.[].name'"
    )

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func run() throws {
        let d = RuleRegistry.descriptions
        if json {
            Output.line(RuleCatalogue.json(d))
        } else {
            for r in d {
                Output.line("\(r.id)  \(r.name.padding(30))  \(r.defaultSeverity.rawValue.padding(8))  \(r.category.rawValue.padding(12))  \(r.title)")
            }
            Output.line("")
            Output.line("btlens explain ID shows a rule's rationale, advice, options and fixtures.")
        }
        Output.flushStandardOutput()
    }
}

struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Print a rule's documentation: what it looks for, why it costs battery, what to do instead.",
        discussion: "Examples:\n  btlens explain BTL005\n  btlens explain poll-instead-of-notify"
    )

    @Argument(help: "A rule id (BTL005) or name (poll-instead-of-notify).")
    var rule: String

    func validate() throws {
        if RuleRegistry.rule(rule) == nil { throw ValidationError("no rule '\(rule)' (see btlens rules)") }
    }

    func run() throws {
        guard let d = RuleRegistry.rule(rule)?.description else { return }
        Output.line(RuleCatalogue.explain(d))
        Output.flushStandardOutput()
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
