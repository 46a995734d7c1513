import Foundation
import Testing
import TestSupport

@Suite("btlens timeline")
struct TimelineCommandTests {
    /// wasteful-central discovers every characteristic of its five services and the descriptors of three of them
    /// after discovering all services: eight procedures in a row.
    @Test("a run of per-service discovery reads as one line in the text; --json keeps every procedure")
    func contentsDiscovery() throws {
        let path = "samples/wasteful-central.btsnoop"
        let text = try CLI.run(["timeline", "--connection", "1", path], directory: CLI.packageRoot.path)
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let contents = lines.filter { $0.contains("discovery: contents") }
        #expect(contents.count == 1)
        #expect(contents.first?.hasSuffix("discovery: contents 0x0001-0x001f in 8 procedures — characteristics ×5 (11 found), "
                                          + "descriptors ×3 (4 found); 15 requests, 180 ms") == true)
        #expect(!lines.contains { $0.contains("discovery: characteristics") || $0.contains("discovery: descriptors") })
        #expect(lines.contains { $0.contains("discovery: all primary services 0x0001-0xffff") })

        let json = try CLI.run(["timeline", "--json", "--connection", "1", path], directory: CLI.packageRoot.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let connection = try #require((object["connections"] as? [[String: Any]])?.first)
        let procedures = ((connection["events"] as? [[String: Any]]) ?? []).compactMap { $0["procedure"] as? String }
        #expect(procedures.filter { $0 == "characteristics" }.count == 5)
        #expect(procedures.filter { $0 == "descriptors" }.count == 3)
    }

    @Test("finished links' lines set aside in TMPDIR give the same text; a TMPDIR it cannot use is a warning")
    func linesSetAside() throws {
        let path = try writeScenario("connection-churn")
        let directory = try TemporaryDirectory()
        let whole = try CLI.run(["timeline", "--full", path])
        // Every link judged (and its lines set aside) as soon as the next one finishes.
        let spilled = try CLI.run(["timeline", "--full", path], environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": directory.path])
        #expect(whole.status == 0 && spilled.status == 0 && spilled.stderr.isEmpty, "\(spilled.stderr)")
        #expect(spilled.stdout == whole.stdout && whole.stdout.contains("Connection #2"))
        let missing = try CLI.run(["timeline", "--full", path],
                                  environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": directory.path + "/missing"])
        #expect(missing.status == 0 && missing.stdout == whole.stdout)
        #expect(missing.stderr.hasPrefix("btlens: warning: ") && missing.stderr.contains("/missing")
                && missing.stderr.contains("kept in memory") && missing.stderr.split(separator: "\n").count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
