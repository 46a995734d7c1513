import Foundation
import Testing
import TestSupport

/// `--anonymize` on every command that prints: no original address or name in any report, the same counts and
/// findings; `--anonymize-key` gives the same pseudonyms run after run, another key other ones.
@Suite("--anonymize on every report")
struct AnonymizeFlagTests {
    /// What the sample shows that must not leak: the sensor's address (both spellings), its name, the phone's
    /// address, a bystander's name.
    static let secrets = ["E1:7F:03:9A:42:42", "e1:7f:03:9a:42:42", "EnviroSense 42", "9C:B6:D0:11:22:33", "Enviro Labs", "ES-42"]

    static let commands: [[String]] = [
        ["audit", "--fail-on", "never"], ["audit", "--fail-on", "never", "--format", "json"],
        ["audit", "--fail-on", "never", "--format", "sarif"], ["audit", "--fail-on", "never", "--format", "junit"],
        ["audit", "--fail-on", "never", "--format", "markdown"], ["audit", "--fail-on", "never", "--format", "html"],
        ["timeline"], ["timeline", "--json"], ["gatt"], ["gatt", "--json"], ["devices"], ["devices", "--json"],
        ["energy", "--json"], ["stats", "--json"], ["decode", "-v"],
    ]

    @Test("no original address or name in any report; the same findings", arguments: commands)
    func everyReport(command: [String]) throws {
        let sample = try writeScenario("wasteful-central")
        let plain = try CLI.run(command + [sample])
        let anonymous = try CLI.run(command + ["--anonymize", sample])
        #expect(anonymous.status == plain.status, "\(anonymous.stderr)")
        for secret in Self.secrets {
            #expect(plain.stdout.contains(secret) || !["E1:7F:03:9A:42:42"].contains(secret) || command[0] == "stats",
                    "the plain report shows \(secret)")
            #expect(!anonymous.stdout.contains(secret), "\(command.joined(separator: " ")) leaks \(secret)")
        }
        if command == ["audit", "--fail-on", "never", "--format", "json"] {
            let count = { (text: String) in
                ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any])?["findings"].map { ($0 as? [Any])?.count ?? -1 } ?? -1
            }
            #expect(count(plain.stdout) == count(anonymous.stdout) && count(plain.stdout) > 10)
        }
    }

    @Test("--anonymize-key: the same pseudonyms every run, others with another key; anonymize --keep-values keeps values")
    func keyed() throws {
        let sample = try writeScenario("wasteful-central")
        let a = try CLI.run(["timeline", "--anonymize-key", "k1", sample])
        let b = try CLI.run(["timeline", "--anonymize-key", "k1", sample])
        let c = try CLI.run(["timeline", "--anonymize-key", "k2", sample])
        #expect(a.stdout == b.stdout && a.stdout != c.stdout)
        #expect(!a.stdout.contains("E1:7F:03:9A:42:42"))
        let dir = try TemporaryDirectory()
        let kept = dir.file("kept.btsnoop"), zeroed = dir.file("zeroed.btsnoop")
        #expect(try CLI.run(["anonymize", "--anonymize-key", "k1", "--keep-values", sample, kept]).status == 0)
        #expect(try CLI.run(["anonymize", "--anonymize-key", "k1", sample, zeroed]).status == 0)
        let withValues = try CLI.run(["gatt", kept]), without = try CLI.run(["gatt", zeroed])
        // Firmware Revision String is read; its value survives only with --keep-values.
        #expect(withValues.stdout.contains("1.0.7") && !without.stdout.contains("1.0.7"))
        // The same key gives the same pseudonyms in the written capture as in the reports.
        let keyedAddress = try #require(a.stdout.split(separator: "\n").first { $0.hasPrefix("Connection #1") })
        let fromFile = try CLI.run(["timeline", kept])
        #expect(fromFile.stdout.contains(String(keyedAddress)))
    }
}
