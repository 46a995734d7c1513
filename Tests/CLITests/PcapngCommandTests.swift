import Foundation
import Testing
import TestSupport

/// `btlens-scenario pcapng`, and btlens reading what it writes: a pcap as two capture interfaces.
@Suite("btlens-scenario pcapng")
struct PcapngCommandTests {
    static let scenarioBinary = GroundTruthCommandTests.scenarioBinary

    @Test("two interfaces of an HCI capture: two controllers, each with the sample's connection")
    func twoAdapters() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-pcapng-cli")
        let output = directory.file("two.pcapng")
        let input = CLI.packageRoot.appendingPathComponent("samples/heart-rate-session.pcap").path
        let r = try CLI.run(["pcapng", input, output, "--interfaces", "2"], executable: Self.scenarioBinary)
        #expect(r.status == 0, "\(r.stderr)")
        let run = try CLI.run(["timeline", "--json", output])
        #expect(run.status == 0, "\(run.stderr)")
        let timeline = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let connections = try #require(timeline["connections"] as? [[String: Any]])
        #expect(connections.count == 2)
        #expect(Set(connections.compactMap { $0["controller"] as? Int }) == [0, 1])
    }

    @Test("what is not a classic pcap is an input error naming the file; a bad count is a usage error")
    func errors() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-pcapng-cli")
        let notPcap = try directory.write("x.log", Array("not a capture at all, just text".utf8))
        let r = try CLI.run(["pcapng", notPcap, directory.file("y.pcapng")], executable: Self.scenarioBinary)
        #expect(r.status == 3)
        #expect(r.stderr == "btlens-scenario: \(notPcap): not a classic pcap file\n")
        let usage = try CLI.run(["pcapng", notPcap, directory.file("y.pcapng"), "--interfaces", "0"], executable: Self.scenarioBinary)
        #expect(usage.status == 2)
    }
}
