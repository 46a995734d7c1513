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
            let bytes = Self.damaged(original, round: round, rng: &rng, after: 24)
            let path = try dir.write("\(name)-\(round).pcap", bytes)
            #expect(try MutationTests.survive(bytes, in: dir, name: "\(name)-\(round).pcap") != nil || bytes.count < 24)
            issues += (try PipelineExercise.run(path: path, name: "x")?.keptIssues) ?? 0
        }
        #expect(issues > 0)
    }

    /// `original` damaged past its first `header` bytes, one of four ways by `round`.
    static func damaged(_ original: [UInt8], round: Int, rng: inout SplitMix64, after header: Int) -> [UInt8] {
        var bytes = original
        switch round % 4 {
        case 0:  // flip bytes past the file header: container headers, LL headers, payloads, CRCs
            for _ in 0..<rng.int(in: 1...40) {
                let i = rng.int(in: header...(bytes.count - 1))
                bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            }
        case 1:  // cut short at a random point
            bytes = Array(bytes.prefix(rng.int(in: 0...bytes.count)))
        case 2:  // garbage inserted
            let at = rng.int(in: header...bytes.count)
            bytes.insert(contentsOf: (0..<rng.int(in: 1...300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
        default:  // a run of 0xFF over a random place
            let at = rng.int(in: header...(bytes.count - 1))
            for i in at..<min(bytes.count, at + rng.int(in: 1...8)) { bytes[i] = 0xFF }
        }
        return bytes
    }

    /// pcapng, framed by btlens itself: an air capture as two sniffers' interfaces, and an HCI capture.
    @Test("seeded corruption of pcapng: blocks, interfaces and their packets", arguments: ["272v3-two-interfaces", "hci-201"])
    func corruptPcapng(name: String) throws {
        let dir = try TemporaryDirectory()
        let original: [UInt8]
        if name == "hci-201" {
            let pcap = try TemporaryDirectory.contents(of: try ScenarioFixtures.path("peripheral-role", format: .pcapH4WithDirection))
            original = try PcapngConversion.convert(pcap)
        } else {
            original = try PcapngConversion.convert(try Self.capture(.nordic(version: 3, board: 0), format: .air272, in: dir),
                                                    interfaces: 2)
        }
        let intact = try #require(try PipelineExercise.run(path: try dir.write("intact.pcapng", original), name: "intact"))
        #expect(intact.keptIssues == 0 && intact.records > 100)
        var rng = SplitMix64(seed: 0x9C4 ^ UInt64(name.utf8.count))
        var issues = 0
        // Past the section header (28 bytes) and the interface descriptions (32 bytes each, with if_tsresol): a
        // file whose only description is damaged may rightly be refused.
        let firstPacket = 28 + 32 * (name == "hci-201" ? 1 : 2)
        for round in 0..<32 {
            let bytes = Self.damaged(original, round: round, rng: &rng, after: firstPacket)
            let path = try dir.write("\(name)-\(round).pcapng", bytes)
            #expect(try MutationTests.survive(bytes, in: dir, name: "\(name)-\(round).pcapng") != nil || bytes.count < firstPacket)
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
