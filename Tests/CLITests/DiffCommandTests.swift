import Foundation
import Testing
import TestSupport

@Suite("btlens diff")
struct DiffCommandTests {
    static let schema = "Sources/BTReport/Schemas/diff.schema.json"

    @Test("a sample and its fixed version: every finding fixed, a lower charge; swapped, --fail-on-increase fails")
    func fixedVersion() throws {
        let wasteful = try writeScenario("wasteful-central"), tidy = try writeScenario("tidy-central")
        let r = try CLI.run(["diff", "--format", "json", wasteful, tidy])
        #expect(r.status == 0, "\(r.stderr)")
        try SchemaValidation.validate(r.stdout, schema: Self.schema)
        let j = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let findings = try #require(j["findings"] as? [String: [Any]])
        #expect(findings["fixed"]?.count == 16 && findings["new"]?.isEmpty == true && findings["unchanged"]?.isEmpty == true)
        let charge = try #require(j["charge"] as? [String: Any])
        let base = try #require((charge["base_mc"] as? NSNumber)?.doubleValue), head = try #require((charge["head_mc"] as? NSNumber)?.doubleValue)
        #expect(head < base / 10)
        #expect(((charge["change_pct"] as? NSNumber)?.doubleValue ?? 0) < -90)
        let names = ((j["activities"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
        #expect(names.contains("scanning") && names.contains("connections to E1:7F:03:9A:42:42"))
        // The other way round the charge rises: --fail-on-increase fails, and so do the new findings.
        let swapped = try CLI.run(["diff", "--fail-on", "never", "--fail-on-increase", "10", tidy, wasteful])
        #expect(swapped.status == 1)
        #expect(swapped.stdout.contains("new findings: 16"))
        #expect(try CLI.run(["diff", "--fail-on", "never", tidy, wasteful]).status == 0)
        #expect(try CLI.run(["diff", tidy, wasteful]).status == 1)  // new warnings reach the default --fail-on
        #expect(try CLI.run(["diff", "--fail-on", "never", "--fail-on-increase", "100000", tidy, wasteful]).status == 0)  // +28 000 %
    }

    @Test("the same scenario recorded with other handles: everything unchanged, no change in charge")
    func sameScenario() throws {
        let a = try writeScenario("wasteful-central")
        let r = try CLI.run(["diff", "--fail-on-increase", "0", a, a])
        #expect(r.status == 0)
        #expect(r.stdout.contains("unchanged findings: 16") && r.stdout.contains("(0.0 %)") || r.stdout.contains("(+0.0 %)"),
                "\(r.stdout)")
    }

    @Test("two audit JSON reports diff by fingerprint and total charge; markdown is a PR comment")
    func auditReports() throws {
        let dir = try TemporaryDirectory()
        let before = dir.file("before.json"), after = dir.file("after.json")
        _ = try CLI.run(["audit", "--fail-on", "never", "--format", "json", "-o", before, try writeScenario("wasteful-central")])
        _ = try CLI.run(["audit", "--fail-on", "never", "--format", "json", "-o", after, try writeScenario("tidy-central")])
        let r = try CLI.run(["diff", "--format", "json", before, after])
        #expect(r.status == 0, "\(r.stderr)")
        try SchemaValidation.validate(r.stdout, schema: Self.schema)
        let j = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(((j["findings"] as? [String: [Any]])?["fixed"])?.count == 16)
        #expect(((j["charge"] as? [String: Any])?["change_pct"] as? NSNumber).map { $0.doubleValue < -90 } == true)
        let md = try CLI.run(["diff", "--format", "markdown", before, after])
        #expect(md.stdout.hasPrefix("## ✅ btlens diff") && md.stdout.contains("### Fixed findings"))
    }

    @Test("usage and unreadable inputs")
    func errors() throws {
        #expect(try CLI.run(["diff", "only-one"]).status == 2)
        #expect(try CLI.run(["diff", "--fail-on-increase", "-5", "a", "b"]).status == 2)
        let dir = try TemporaryDirectory()
        let r = try CLI.run(["diff", dir.file("missing.log"), try writeScenario("tidy-central")])
        #expect(r.status == 3 && r.stderr.contains("missing.log"))
        let notReport = try dir.write("x.json", Array(#"{"nothing": 1}"#.utf8))
        #expect(try CLI.run(["diff", notReport, notReport]).status == 3)
        #expect(try CLI.run(["help", "diff"]).stdout.contains("Examples"))
    }
}
