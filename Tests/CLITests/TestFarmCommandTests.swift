import Foundation
import Testing
import TestSupport

/// Directory audits for device farms: `audit DIR --format junit` (a testcase per capture), per-test baselines,
/// and `diff BASE_DIR HEAD_DIR` (captures paired by test and device).
@Suite("btlens audit and diff over a device farm's test runs")
struct TestFarmCommandTests {
    static let serials = ["R58M41ABCDE", "emulator-5554"]
    static let episodes = ["sync": ["poll-controls", "prompt-disconnect"], "pair": ["discover-all-services-all-used", "fast-then-relaxed"]]

    /// base/ and head/ with `<test>-<serial>-btsnoop_hci.log` for two tests on two devices; head's sync test also
    /// leaves a link connected while idle (lingering-idle) on every device.
    static func farm() throws -> (TemporaryDirectory, base: String, head: String) {
        let dir = try TemporaryDirectory(prefix: "btlens-farm")
        for run in ["base", "head"] {
            try FileManager.default.createDirectory(atPath: dir.file(run), withIntermediateDirectories: true)
            for (n, (test, list)) in episodes.sorted(by: { $0.key < $1.key }).enumerated() {
                for (s, serial) in serials.enumerated() {
                    let names = run == "head" && test == "sync" ? list + ["lingering-idle"] : list
                    try writeTruthCapture(seed: UInt64(10 * n + s + 1), episodes: names,
                                          to: dir.file("\(run)/\(test)-\(serial)-btsnoop_hci.log"))
                }
            }
        }
        return (dir, dir.file("base"), dir.file("head"))
    }

    @Test("audit DIR --format junit: one testcase per capture, classname the serial, name the test")
    func junit() throws {
        let (dir, _, head) = try Self.farm()
        let r = try CLI.run(["audit", "--format", "junit", head])
        #expect(r.status == 1, "\(r.stderr)")
        let testcases = r.stdout.components(separatedBy: "<testcase ").dropFirst()
        #expect(testcases.count == 4, "\(r.stdout)")
        #expect(r.stdout.contains("<testsuite name=\"btlens test farm\" tests=\"4\" failures=\"2\""))
        for serial in Self.serials {
            let sync = try #require(testcases.first { $0.hasPrefix("classname=\"\(serial)\" name=\"sync\"") })
            #expect(sync.contains("<failure type=\"warning\" message=\"BTL") && sync.contains("lingering-connection"))
            let pair = try #require(testcases.first { $0.hasPrefix("classname=\"\(serial)\" name=\"pair\"") })
            #expect(!pair.contains("<failure"))
        }
        // A file named on the command line keeps the report of old; --test-pattern applies the naming to it too.
        let one = dir.file("head/sync-R58M41ABCDE-btsnoop_hci.log")
        let plain = try CLI.run(["audit", "--format", "junit", one])
        #expect(plain.stdout.contains("<testsuite name=\"\(one)\"") && !plain.stdout.contains("test farm"))
        let named = try CLI.run(["audit", "--format", "junit", "--test-pattern", #"(?<test>[a-z]+)_(?<serial>.+)\.log"#, one])
        #expect(!named.stdout.contains("test farm"), "the pattern does not match: the old report")
        let custom = try CLI.run(["audit", "--format", "junit", "--test-pattern", #"(?<test>[a-z]+)-(?<serial>[A-Z0-9]+)-.*"#, one])
        #expect(custom.stdout.contains("<testcase classname=\"R58M41ABCDE\" name=\"sync\""), "\(custom.stdout)")
        let bad = try CLI.run(["audit", "--test-pattern", "(?<serial>.+)", one])
        #expect(bad.status == 2 && bad.stderr.contains("(?<test>"), "\(bad.stderr)")
    }

    @Test("--write-baseline DIR/ writes one baseline per test; --baseline DIR accepts each test's own findings")
    func baselines() throws {
        let (dir, base, head) = try Self.farm()
        let baselines = dir.file("baselines") + "/"
        let written = try CLI.run(["audit", "--write-baseline", baselines, base])
        #expect(written.status == 0 && written.stderr.contains("wrote the baselines of 2 tests"), "\(written.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: baselines)) == ["sync.json", "pair.json"])
        let r = try CLI.run(["audit", "--format", "json", "--baseline", baselines, head])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let findings = try #require(root["findings"] as? [[String: Any]])
        #expect(findings.count == 2 && findings.allSatisfy { $0["rule"] as? String == "lingering-connection" }, "\(findings.map { $0["rule"] ?? "" })")
        #expect(r.status == 1)
    }

    @Test("diff BASE_DIR HEAD_DIR: per test and in total, new and fixed findings and the radio charge; fails per test")
    func diff() throws {
        let (dir, base, head) = try Self.farm()
        defer { withExtendedLifetime(dir) {} }
        let r = try CLI.run(["diff", "--format", "json", base, head])
        #expect(r.status == 1, "a new warning fails by default: \(r.stderr)")
        try SchemaValidation.validate(r.stdout, schema: "Sources/BTReport/Schemas/farm-diff.schema.json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let tests = try #require(root["tests"] as? [[String: Any]])
        #expect(tests.map { $0["test"] as? String } == ["pair", "sync"])
        let sync = tests[1], pair = tests[0]
        #expect(sync["devices"] as? Int == 2 && sync["new"] as? Int == 2 && sync["fixed"] as? Int == 0 && sync["failed"] as? Bool == true)
        #expect(pair["new"] as? Int == 0 && pair["fixed"] as? Int == 0 && pair["failed"] as? Bool == false)
        func change(_ t: [String: Any]) -> Double? { ((t["charge"] as? [String: Any])?["change_pct"] as? NSNumber)?.doubleValue }
        #expect((change(sync) ?? 0) > 0 && change(pair) == 0)
        let total = try #require(root["total"] as? [String: Any])
        #expect(total["new"] as? Int == 2 && total["failed_tests"] as? Int == 1)

        let text = try CLI.run(["diff", "--fail-on", "never", base, head])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("sync (2 devices): radio charge") && text.stdout.contains("new in sync-R58M41ABCDE-btsnoop_hci.log"))
        // --fail-on-increase per test: the sync test's rise fails at 0 %, the unchanged pair test does not.
        let increase = try CLI.run(["diff", "--fail-on", "never", "--fail-on-increase", "0", "--format", "json", base, head])
        #expect(increase.status == 1)
        #expect(increase.stdout.contains("\"failed_tests\": 1"))
        let markdown = try CLI.run(["diff", "--fail-on", "never", "--format", "markdown", base, head])
        #expect(markdown.stdout.hasPrefix("## ✅ btlens diff: 2 tests") && markdown.stdout.contains("| sync | 2 |"))
    }
}
