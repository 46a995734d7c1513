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
}
