import Foundation
import Testing
import BTRules
import BTReport
import TestSupport

/// docs/rules/ is what `make rule-docs` (`btlens rules --markdown docs/rules --fixtures DIR`) writes from the rules'
/// descriptions now: a page per rule with a finding from its fixture, and their index. A rule whose description
/// changed without its page being regenerated fails here, as a stale sample fails `make samples`' test.
@Suite("rule pages (docs/rules) are what the rules say")
struct RuleDocsTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/rules")

    /// The pages as the generator writes them now, each example read from the fixture's capture.
    static func generated() throws -> [(name: String, text: String)] {
        try RuleDocs.files { d in
            guard let scenario = RuleDocs.excerptScenario(d) else { return nil }
            return try RuleDocs.excerpt(of: d, capture: writeScenario(scenario))
        }
    }

    @Test("every committed page is what make rule-docs writes now, and no page is missing or left over")
    func pagesUpToDate() throws {
        let files = try Self.generated()
        let committed = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path)
            .filter { $0 == "README.md" || RuleDocs.isPageName($0) }
        #expect(Set(committed) == Set(files.map(\.name)),
                "docs/rules holds other pages than the rules (run make rule-docs): \(committed.sorted())")
        for file in files {
            let path = Self.directory.appendingPathComponent(file.name).path
            let text = FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
            if text != file.text {
                Issue.record("docs/rules/\(file.name) differs from what the rules say now: run make rule-docs and commit it")
            }
        }
    }

    @Test("each rule's page names its id, severity, advice and options, and shows a finding of its own")
    func pageContents() throws {
        for d in RuleRegistry.descriptions {
            let page = RuleDocs.page(d, excerpt: try RuleDocs.excerptScenario(d).flatMap {
                try RuleDocs.excerpt(of: d, capture: writeScenario($0))
            })
            #expect(page.hasPrefix("# \(d.id) \(d.name)\n"))
            #expect(page.contains("| default severity | \(d.defaultSeverity.rawValue) |"))
            #expect(page.contains(d.coreBluetooth) && page.contains(d.android) && page.contains(d.rationale))
            for o in d.options { #expect(page.contains("`\(o.name)`"), "\(d.id): option \(o.name)") }
            // Every rule declares a triggering fixture (RuleFixtureTests), so every page shows a real finding.
            #expect(page.contains("\(d.id) \(d.name): "), "\(d.id): no finding in its example")
        }
    }

    @Test("page names: BTL and digits only")
    func pageNames() {
        #expect(RuleDocs.isPageName("BTL005.md"))
        #expect(!RuleDocs.isPageName("README.md"))
        #expect(!RuleDocs.isPageName("BTL.md"))
        #expect(!RuleDocs.isPageName("BTL005.md.orig"))
    }
}
