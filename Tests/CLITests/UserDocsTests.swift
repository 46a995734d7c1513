import Foundation
import Testing

/// What a user reads — README.md, the man page, every `--help`, the rule pages — names no internal issue numbers
/// or development history ("issue 26", "issues 25 and 27"), and the README stays a short introduction.
@Suite("user documentation")
struct UserDocsTests {
    /// `issue 26`, `Issues 25, 27`, `issue #12`: an internal reference a user cannot follow.
    static let issueReference = try! NSRegularExpression(pattern: #"\bissues?\s*#?\d+"#, options: [.caseInsensitive])

    static func issueReferences(_ text: String) -> [String] {
        let range = NSRange(text.startIndex..., in: text)
        return issueReference.matches(in: text, range: range).compactMap { m in
            Range(m.range, in: text).map { r in
                let line = text[..<r.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).count
                return "line \(line): \(text[r])"
            }
        }
    }

    static func read(_ relativePath: String) throws -> String {
        let url = CLI.packageRoot.appendingPathComponent(relativePath)
        return String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    /// User-facing documents in the repository.
    static let documents = ["README.md", "CHANGELOG.md", "man/btlens.1", "docs/USAGE.md", "docs/FORMATS.md", "docs/FLEETS.md",
                            "docs/CONFORMANCE.md", "docs/PERFORMANCE.md", "docs/ARCHITECTURE.md"]

    @Test("the pattern finds what it should")
    func pattern() {
        #expect(Self.issueReferences("since issue 26, continued").count == 1)
        #expect(Self.issueReferences("After Issues 25, 27 and 28").count == 1)
        #expect(Self.issueReferences("fixed (issue #12)").count == 1)
        #expect(Self.issueReferences("a copy safe to attach to an issue: connection #2").isEmpty)
    }

    @Test("README.md is at most 400 lines")
    func readmeLength() throws {
        let lines = try Self.read("README.md").reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
        #expect(lines <= 400, "README.md has \(lines) lines; move reference material to docs/")
    }

    @Test("README, CHANGELOG, the man page and docs/ name no internal issue")
    func documentsHaveNoIssueNumbers() throws {
        for path in Self.documents {
            let found = Self.issueReferences(try Self.read(path))
            #expect(found.isEmpty, "\(path): \(found)")
        }
        let rules = CLI.packageRoot.appendingPathComponent("docs/rules")
        for name in try FileManager.default.contentsOfDirectory(atPath: rules.path) where name.hasSuffix(".md") {
            let found = Self.issueReferences(try Self.read("docs/rules/" + name))
            #expect(found.isEmpty, "docs/rules/\(name): \(found)")
        }
    }

    @Test("no --help text names an internal issue")
    func helpHasNoIssueNumbers() throws {
        let top = try CLI.run(["--help"])
        #expect(top.status == 0)
        #expect(Self.issueReferences(top.stdout).isEmpty, "btlens --help: \(Self.issueReferences(top.stdout))")
        // Every subcommand the top-level help lists, each through `--help`.
        let lines = top.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("SUBCOMMANDS:") }) else {
            Issue.record("btlens --help lists no SUBCOMMANDS")
            return
        }
        let subcommands = lines[(start + 1)...].compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first else { return nil }
            return String(word)
        }
        #expect(subcommands.count >= 10, "\(subcommands)")
        for subcommand in subcommands {
            let r = try CLI.run([subcommand, "--help"])
            #expect(r.status == 0, "btlens \(subcommand) --help exited \(r.status)")
            let found = Self.issueReferences(r.stdout + r.stderr)
            #expect(found.isEmpty, "btlens \(subcommand) --help: \(found)")
        }
    }

    /// The README's GitHub and GitLab recipes parse, and the SARIF and JUnit their jobs upload are what those
    /// CIs read (Scripts/check_readme_recipes.py: PyYAML, the SARIF 2.1.0 schema of ../shared, junitparser).
    @Test("the README's CI recipes parse and their reports load")
    func ciRecipes() throws {
        let script = CLI.packageRoot.appendingPathComponent("Tests/CLITests/Scripts/check_readme_recipes.py").path
        let r = try CLI.run(["python3", script, CLI.binary, CLI.packageRoot.path], executable: "/usr/bin/env")
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("5 passed, 0 failed") || r.stdout.contains("4 passed, 0 failed"), "\(r.stdout)")
        if r.stdout.contains("NOTE:") { FileHandle.standardError.write(Data(r.stdout.utf8)) }
    }
}
