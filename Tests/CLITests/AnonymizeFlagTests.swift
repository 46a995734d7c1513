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

    @Test("a pcap is anonymised into a pcap (the same format family), with the same counts")
    func pcapFamily() throws {
        let pcap = try ScenarioFixtures.path("heart-rate-session", format: .pcapH4WithDirection)
        let dir = try TemporaryDirectory()
        let out = dir.file("shared.pcap")
        #expect(try CLI.run(["anonymize", pcap, out]).status == 0)
        let bytes = try TemporaryDirectory.contents(of: out)
        #expect(bytes.prefix(4) == [0xD4, 0xC3, 0xB2, 0xA1] || bytes.prefix(4) == [0xA1, 0xB2, 0xC3, 0xD4])
        let before = try CLI.run(["stats", "--json", pcap]), after = try CLI.run(["stats", "--json", out])
        // The counts: HCI packets by kind and code, ACL, advertising reports, connections, ATT.
        let counts = { (text: String) -> NSDictionary in
            var d = ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]
            for key in ["file", "format", "linktype"] { d[key] = nil }
            return NSDictionary(dictionary: d)
        }
        #expect(counts(before.stdout).count > 5)
        #expect(counts(before.stdout) == counts(after.stdout))
        let timeline = try CLI.run(["timeline", out])
        #expect(!after.stdout.contains("D4:3A:2C:81:5E:07") && !timeline.stdout.contains("D4:3A:2C:81:5E:07"))
        #expect(timeline.stdout.contains("Connection #1"))
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
