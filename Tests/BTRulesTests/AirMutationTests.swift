import Testing
import BTCapture
import BTScenario
import TestSupport

/// Bad input in every LE air-sniffer container btlens reads — 251 (bare LL), 256 (PHDR), 272 (nRF header
/// versions 0–3) and PPI (Ubertooth's BTLE field) —, written by the scenario generator's air sink: damaged as
/// `MutationTests` damages the HCI samples, and every record cut short inside its container. Reading, decoding,
/// tracking and every rule must neither crash nor hang, and the damage must show as counted issues.
@Suite("damaged air captures")
struct AirMutationTests {
    static let containers: [(name: String, format: ScenarioFormat, container: LinkLayerContainer)] = [
        ("251", .air251, .leLL), ("256", .air256, .pseudoHeader), ("ppi", .airPPI, .ppi),
        ("272v0", .air272, .nordic(version: 0, board: 0)), ("272v1", .air272, .nordic(version: 1, board: 0)),
        ("272v2", .air272, .nordic(version: 2, board: 0)), ("272v3", .air272, .nordic(version: 3, board: 0)),
    ]

    /// peripheral-role: connections both ways, encryption, a parameter update; with CRC errors and
    /// retransmissions planted.
    static func capture(_ container: LinkLayerContainer, format: ScenarioFormat, in dir: TemporaryDirectory) throws -> [UInt8] {
        let path = dir.file("original.pcap")
        let options = AirOptions(container: container,
                                 impairments: AirImpairments(crcErrorRate: 0.05, retransmissionRate: 0.05))
        try #require(ScenarioRegistry.named("peripheral-role")).write(to: path, format: format, air: options)
        return try TemporaryDirectory.contents(of: path)
    }

    @Test("seeded corruption: bytes flipped, cut short, garbage inserted, absurd lengths",
          arguments: containers.map(\.name))
    func corrupt(name: String) throws {
        let c = try #require(Self.containers.first { $0.name == name })
        let dir = try TemporaryDirectory()
        let original = try Self.capture(c.container, format: c.format, in: dir)
        let intact = try #require(try PipelineExercise.run(path: try dir.write("intact.pcap", original), name: "intact"))
        #expect(intact.keptIssues == 0)
        var rng = SplitMix64(seed: 0xA1B ^ UInt64(name.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
        var issues = 0
        for round in 0..<24 {
            var bytes = original
            switch round % 4 {
            case 0:  // flip bytes past the file header: container headers, LL headers, payloads, CRCs
                for _ in 0..<rng.int(in: 1...40) {
                    let i = rng.int(in: 24...(bytes.count - 1))
                    bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                }
            case 1:  // cut short at a random point
                bytes = Array(bytes.prefix(rng.int(in: 0...bytes.count)))
            case 2:  // garbage inserted
                let at = rng.int(in: 24...bytes.count)
                bytes.insert(contentsOf: (0..<rng.int(in: 1...300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
            default:  // a run of 0xFF over a random place
                let at = rng.int(in: 24...(bytes.count - 1))
                for i in at..<min(bytes.count, at + rng.int(in: 1...8)) { bytes[i] = 0xFF }
            }
            let path = try dir.write("\(name)-\(round).pcap", bytes)
            #expect(try MutationTests.survive(bytes, in: dir, name: "\(name)-\(round).pcap") != nil || bytes.count < 24)
            issues += (try PipelineExercise.run(path: path, name: "x")?.keptIssues) ?? 0
        }
        #expect(issues > 0)
    }

    @Test("every record cut short inside its container or LL packet", arguments: containers.map(\.name))
    func recordsCutShort(name: String) throws {
        let c = try #require(Self.containers.first { $0.name == name })
        let dir = try TemporaryDirectory()
        let original = try Self.capture(c.container, format: c.format, in: dir)
        var rng = SplitMix64(seed: 0xC07 ^ UInt64(name.utf8.count))
        // Classic little-endian pcap: 24-byte file header, records of a 16-byte header (caplen, len at 8, 12).
        var out = Array(original.prefix(24))
        var offset = 24
        var records = 0
        while offset + 16 <= original.count {
            let caplen = original[(offset + 8)..<(offset + 12)].reversed().reduce(0) { $0 << 8 | Int($1) }
            let keep = rng.int(in: 0...max(0, caplen - 1))
            var header = Array(original[offset..<(offset + 16)])
            for i in 0..<4 {
                header[8 + i] = UInt8(truncatingIfNeeded: keep >> (8 * i))
                header[12 + i] = UInt8(truncatingIfNeeded: keep >> (8 * i))
            }
            out += header + original[(offset + 16)..<(offset + 16 + keep)]
            offset += 16 + caplen
            records += 1
        }
        #expect(records > 100)
        let path = try dir.write("\(name)-cut.pcap", out)
        #expect(try MutationTests.survive(out, in: dir, name: "\(name)-cut.pcap") == records)
        let outcome = try #require(try PipelineExercise.run(path: path, name: "cut"))
        #expect(outcome.keptIssues > 0)
    }
}
