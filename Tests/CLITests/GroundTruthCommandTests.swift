import Foundation
import Testing
import TestSupport

/// `btlens-scenario truth`: the capture and its manifest, as a user runs it.
@Suite("btlens-scenario truth")
struct GroundTruthCommandTests {
    static let scenarioBinary = CLI.packageRoot.appendingPathComponent(".build/debug/btlens-scenario").path

    @Test("writes the capture and OUTPUT.truth.json with every key of every item", arguments: ["btsnoop", "pcap", "pklg"])
    func writes(format: String) throws {
        let directory = try TemporaryDirectory(prefix: "btlens-truth-cli")
        let output = directory.file("seed3.\(format)")
        let r = try CLI.run(["truth", "--seed", "3", "--format", format, output], executable: Self.scenarioBinary)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try TemporaryDirectory.contents(of: output).count > 1000)
        let data = try Data(contentsOf: URL(fileURLWithPath: output + ".truth.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["seed"] as? Int == 3)
        #expect(object["capture"] as? String == "seed3.\(format)")
        let planted = try #require(object["planted"] as? [[String: Any]])
        let controls = try #require(object["controls"] as? [[String: Any]])
        #expect(!planted.isEmpty && !controls.isEmpty)
        for item in planted + controls {
            #expect(Set(item.keys) == ["rule", "connection", "attribute_handle", "start", "end", "note"])
            let start = try #require(item["start"] as? Double), end = try #require(item["end"] as? Double)
            #expect(start <= end && start > 1_700_000_000)
        }
        // The capture reads back: btlens finds the connections the manifest numbers.
        let run = try CLI.run(["timeline", "--json", output])
        let timeline = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let connections = try #require(timeline["connections"] as? [[String: Any]])
        let named = (planted + controls).compactMap { $0["connection"] as? Int }
        #expect(named.allSatisfy { $0 >= 1 && $0 <= connections.count })
    }

    @Test("--stack writes the phone-stack catalogue: catalog, episodes and scan_duty in the manifest")
    func stack() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-truth-cli")
        let output = directory.file("stack2.btsnoop")
        let r = try CLI.run(["truth", "--stack", "--seed", "2", output], executable: Self.scenarioBinary)
        #expect(r.status == 0, "\(r.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: output + ".truth.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["catalog"] as? String == "stack")
        let episodes = try #require(object["episodes"] as? [String])
        // Seed 2 anchors the stack catalogue's 5th and 6th kinds.
        #expect(episodes.contains("coded-extended-scan") && episodes.contains("scan-restarts-not-churn"))
        let duty = try #require(object["scan_duty"] as? [[String: Any]])
        #expect(!duty.isEmpty)
        for d in duty {
            #expect(Set(d.keys) == ["start", "end", "duty_cycle", "note"])
            let cycle = try #require(d["duty_cycle"] as? Double)
            #expect(cycle > 0.3 && cycle <= 0.9)
        }
        // The APCF vendor command is in the capture when a scan episode ran.
        let decoded = try CLI.run(["decode", "--opcode", "0xFD57", output])
        #expect(decoded.stdout.contains("FD57") || decoded.stdout.lowercased().contains("fd57"))
    }

    @Test("an unknown format is a usage error")
    func unknownFormat() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-truth-cli")
        let r = try CLI.run(["truth", "--seed", "1", "--format", "wav", directory.file("x")], executable: Self.scenarioBinary)
        #expect(r.status == 2)
        #expect(r.stderr.contains("unknown format 'wav'"))
    }
}
