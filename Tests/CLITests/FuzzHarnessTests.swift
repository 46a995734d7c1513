import Foundation
import Testing
import TestSupport

/// `btlens-fuzz` as the plain build makes it: it replays inputs through the checks `make fuzz` runs under libFuzzer
/// (the whole pipeline, and one thread against two), so the harness keeps building and passing on every sample.
@Suite("fuzz harness")
struct FuzzHarnessTests {
    static let harness = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("btlens-fuzz").path

    @Test("replays every sample through the pipeline and both tracking paths")
    func replaysSamples() throws {
        let samples = try FileManager.default.contentsOfDirectory(atPath: CLI.packageRoot.appendingPathComponent("samples").path)
            .filter { !$0.hasPrefix(".") }
        let r = try CLI.run(["samples"], directory: CLI.packageRoot.path, executable: Self.harness)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "btlens-fuzz: \(samples.count) inputs replayed, none failed\n")
        #expect(samples.count >= 10)
    }

    @Test("replays the whole pipeline's committed corpus (Tests/Fuzz/Corpus/pipeline)")
    func replaysPipelineCorpus() throws {
        let r = try CLI.run(["Tests/Fuzz/Corpus/pipeline"], directory: CLI.packageRoot.path, executable: Self.harness)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("inputs replayed, none failed\n"), "\(r.stdout)")
    }

    @Test("replays archives, compressed captures and a bug report's btsnooz summary: the archive path is covered")
    func replaysArchives() throws {
        let dir = try TemporaryDirectory()
        let capture = try TemporaryDirectory.contents(of: CLI.packageRoot.appendingPathComponent("samples/heart-rate-session.btsnoop").path)
        for container in ArchiveFixtures.Container.allCases {
            try ArchiveFixtures.write(dir.file("capture.\(container.rawValue)"), container, members: [("btsnoop_hci.log", capture)])
        }
        _ = try dir.write("bugreport.txt", ArchiveFixtures.bugReportText(summary: ArchiveFixtures.btsnooz(fromBTSnoop: capture, version: 2)))
        let r = try CLI.run([dir.path], executable: Self.harness)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "btlens-fuzz: \(ArchiveFixtures.Container.allCases.count + 1) inputs replayed, none failed\n")
    }

    @Test("the structure-aware mutator keeps framing and lengths, and its inputs still open links and carry ATT")
    func mutatorKeepsInputsPlausible() throws {
        let r = try CLI.run(["--mutator-check", "5", "Tests/Fuzz/Corpus/tracker"], directory: CLI.packageRoot.path, executable: Self.harness)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(r.stdout)")
        // Framing: the structure-aware mutator keeps it (at least 80 %), byte mutation chained five times does not.
        func framed(_ line: Substring) -> Int? {
            guard let range = line.range(of: "framing intact in ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        let structured = try #require(lines.first.flatMap(framed)), bytesOnly = try #require(lines.last.flatMap(framed))
        #expect(structured >= 80 && bytesOnly < 50, "\(r.stdout)")
    }

    @Test("an input it cannot read is an error")
    func unreadableInput() throws {
        let r = try CLI.run(["no-such-input"], executable: Self.harness)
        #expect(r.status == 2)
        #expect(r.stderr == "btlens-fuzz: no-such-input: cannot read\n")
    }

    /// Each layer's target (`BTLENS_FUZZ_TARGET`) replays the samples, the fuzz seeds and the regression inputs,
    /// and a layer's target reads bytes no container holds (random bytes framed as records) without failing.
    static let layers = ["readers", "btsnoop", "pcap", "pcapng", "pklg", "monitor", "btsnooz", "archive", "decode", "l2cap", "ll",
                               "addata", "tracker", "anonymizer"]

    @Test("every layer target replays the samples, seeds, regressions and its committed corpus", arguments: layers)
    func layerTargets(target: String) throws {
        let r = try CLI.run(["samples", "Tests/Fuzz/Seeds", "Tests/Fuzz/Regressions", "Tests/Fuzz/Regressions/layers",
                                "Tests/Fuzz/Corpus/" + target], directory: CLI.packageRoot.path,
                            environment: ["BTLENS_FUZZ_TARGET": target], executable: Self.harness)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("replayed through \(target), none failed\n"), "\(r.stdout)")
        let dir = try TemporaryDirectory()
        var rng = SystemRandomNumberGenerator()
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let path = try dir.write("noise.bin", noise)
        let random = try CLI.run([path], environment: ["BTLENS_FUZZ_TARGET": target], executable: Self.harness)
        #expect(random.status == 0, "\(random.stderr)")
    }

    @Test("an unknown target is an error naming the targets")
    func unknownTarget() throws {
        let r = try CLI.run(["samples"], directory: CLI.packageRoot.path, environment: ["BTLENS_FUZZ_TARGET": "nonesuch"],
                            executable: Self.harness)
        #expect(r.status == 2)
        #expect(r.stderr.contains("decode") && r.stderr.contains("tracker"), "\(r.stderr)")
    }
}
