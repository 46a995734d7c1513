import ArgumentParser
import Foundation
import BTRules
import BTReport

struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "List the audit rules: id, name, severity, category and title.",
        discussion: """
            --markdown DIR writes a Markdown page per rule (DIR/BTL001.md …) and their index (DIR/README.md) from the \
            rules' descriptions, as docs/rules/ holds them (make rule-docs); with --fixtures FIXTURES each page shows \
            the rule's findings on its first triggering fixture, read from FIXTURES/SCENARIO.btsnoop (btlens-scenario \
            write SCENARIO FIXTURES/SCENARIO.btsnoop).

            Examples:
              btlens rules
              btlens rules --json | jq '.[].name'
              btlens rules --markdown docs/rules --fixtures /tmp/fixtures
            """
    )

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Write the rule pages (BTLnnn.md and README.md) into this directory.",
                                            valueName: "dir"))
    var markdown: String?

    @Option(name: .long, help: ArgumentHelp("With --markdown: the fixture captures, DIR/SCENARIO.btsnoop, whose findings the pages show.",
                                            valueName: "dir"))
    var fixtures: String?

    func validate() throws {
        if fixtures != nil && markdown == nil { throw ValidationError("--fixtures needs --markdown") }
    }

    func run() throws {
        if let markdown {
            try writePages(into: markdown)
            return
        }
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

    /// `--markdown DIR`: the rule pages, and pages of rules that no longer exist removed.
    func writePages(into directory: String) throws {
        let files = try RuleDocs.files { d in
            guard let fixtures, let scenario = RuleDocs.excerptScenario(d) else { return nil }
            let path = (fixtures as NSString).appendingPathComponent(scenario + ".btsnoop")
            guard FileManager.default.fileExists(atPath: path) else {
                Diagnostics.error(file: path, "no such fixture capture (btlens-scenario write \(scenario) \(path))")
                throw ExitStatus.inputUnreadable
            }
            do {
                return try RuleDocs.excerpt(of: d, capture: path)
            } catch {
                Diagnostics.error(file: path, "\(error)")
                throw ExitStatus.inputUnreadable
            }
        }
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let written = Set(files.map(\.name))
            for name in try manager.contentsOfDirectory(atPath: directory) where RuleDocs.isPageName(name) && !written.contains(name) {
                try manager.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
            }
            for file in files {
                try Data(file.text.utf8).write(to: URL(fileURLWithPath: (directory as NSString).appendingPathComponent(file.name)))
            }
        } catch {
            Diagnostics.error(file: directory, "cannot write the rule pages: \(error.localizedDescription)")
            throw ExitStatus.inputUnreadable
        }
        Diagnostics.printRaw("btlens: wrote \(files.count) files in \(directory)")
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
