import Foundation
import Testing
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport
import BTScenario
import TestSupport

/// Bad input must never crash or hang btlens: every sample is damaged in many seeded ways (flipped bytes,
/// cut short, garbage inserted, lengths rewritten) and run through reading, decoding, tracking and every rule.
/// A trap anywhere fails the whole test process; a hang is caught by the record budget below.
@Suite("damaged captures")
struct MutationTests {
    static let samples = ["heart-rate-session", "wasteful-central", "peripheral-role", "beacons", "fragmented-acl"]
    static let formats: [ScenarioFormat] = [.btsnoopH4, .btsnoopMonitor, .packetLoggerLE, .pcapH4WithDirection]

    /// Reads, tracks and audits `bytes` and renders every report; returns the record count (nil when the file is
    /// refused outright).
    static func survive(_ bytes: [UInt8], in dir: TemporaryDirectory, name: String) throws -> Int? {
        let path = try dir.write(name, bytes)
        guard let outcome = try PipelineExercise.run(path: path, name: name) else { return nil }
        // Bounded: never more records than bytes could hold, and issues are counted, not kept without end.
        // (A compressed file may expand: up to 1000-fold, or 16 MiB, before it is refused as a bomb.)
        #expect(outcome.records <= (outcome.expanded ? max(16 << 20, bytes.count * 1000) : bytes.count) / 4 + 1)
        #expect(outcome.keptIssues <= outcome.keepLimit)
        return outcome.records
    }

    static var regressions: [String] {
        // Files only: layers/ holds the layer targets' inputs (framed packets, not captures), which
        // FuzzHarnessTests replays through those targets.
        ((try? FileManager.default.contentsOfDirectory(atPath: "Tests/Fuzz/Regressions")) ?? [])
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") && $0 != "layers" }.sorted()
    }

    /// Regressions whose header every reader refuses: what they found was in the refusing (a leak under
    /// LeakSanitizer), so here they must be refused, not read.
    static let refusedRegressions: Set<String> = ["btsnoop-reader-leak-on-bad-header.bin"]

    @Test("inputs fuzzing once crashed on (Tests/Fuzz/Regressions)", arguments: regressions)
    func fuzzRegression(name: String) throws {
        let bytes = try TemporaryDirectory.contents(of: "Tests/Fuzz/Regressions/" + name)
        // Read, tracked, audited and drawn in every report without trapping; it holds records (or, refused, none).
        let records = try Self.survive(bytes, in: try TemporaryDirectory(), name: name) ?? 0
        if Self.refusedRegressions.contains(name) {
            #expect(records == 0, "\(name): \(records) records from an input every reader should refuse")
        } else {
            #expect(records > 0)
        }
    }

    @Test("seeded corruption of every sample in four formats", arguments: samples)
    func corrupt(scenario: String) throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0xF00D ^ UInt64(scenario.utf8.count))
        var survived = 0
        for format in Self.formats {
            let original = try TemporaryDirectory.contents(of: try ScenarioFixtures.path(scenario, format: format))
            for round in 0..<40 {
                var bytes = original
                switch round % 4 {
                case 0:  // flip bytes anywhere, header included
                    for _ in 0..<rng.int(in: 1...20) {
                        let i = rng.int(in: 0...(bytes.count - 1))
                        bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                    }
                case 1:  // cut short at a random point
                    bytes = Array(bytes.prefix(rng.int(in: 0...bytes.count)))
                case 2:  // garbage inserted in the middle
                    let at = rng.int(in: 0...bytes.count)
                    let junk = (0..<rng.int(in: 1...300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    bytes.insert(contentsOf: junk, at: at)
                default:  // a run of 0xFF (absurd lengths) over a random place
                    let at = rng.int(in: 0...(bytes.count - 1))
                    for i in at..<min(bytes.count, at + rng.int(in: 1...8)) { bytes[i] = 0xFF }
                }
                if try Self.survive(bytes, in: dir, name: "\(scenario)-\(format.rawValue)-\(round).cap") != nil {
                    survived += 1
                }
            }
        }
        #expect(survived > 0)
    }

    @Test("random bytes, and random bytes behind a valid header")
    func garbage() throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0xBAD_C0DE)
        let headers: [[UInt8]] = [
            CaptureBytes.btsnoopHeader(datalink: 1002), CaptureBytes.btsnoopHeader(datalink: 2001),
            CaptureBytes.btsnoopHeader(datalink: 1001), CaptureBytes.pcapHeader(linktype: 201),
            CaptureBytes.pcapHeader(linktype: 254), [],
        ]
        var opened = 0
        for round in 0..<120 {
            let body = (0..<rng.int(in: 0...4000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if try Self.survive(headers[round % headers.count] + body, in: dir, name: "garbage-\(round)") != nil {
                opened += 1
            }
        }
        #expect(opened >= 80)  // every file with a valid header opens; pure noise is refused
    }

    @Test("damaged archives and compressed captures: bytes flipped, cut short, garbage inserted",
          arguments: ArchiveFixtures.Container.allCases)
    func archives(container: ArchiveFixtures.Container) throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0xA2C ^ UInt64(container.rawValue.utf8.count))
        let capture = try TemporaryDirectory.contents(of: try ScenarioFixtures.path("wasteful-central", format: .btsnoopH4))
        let path = dir.file("original.\(container.rawValue)")
        try ArchiveFixtures.write(path, container, members: [("FS/data/misc/bluetooth/logs/btsnoop_hci.log", capture)])
        let original = try TemporaryDirectory.contents(of: path)
        #expect(try Self.survive(original, in: dir, name: "whole.\(container.rawValue)") == 1523)
        for round in 0..<30 {
            var bytes = original
            switch round % 3 {
            case 0:
                for _ in 0..<rng.int(in: 1...8) {
                    let i = rng.int(in: 0...(bytes.count - 1))
                    bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                }
            case 1:
                bytes = Array(bytes.prefix(rng.int(in: 0...bytes.count)))
            default:
                let at = rng.int(in: 0...bytes.count)
                bytes.insert(contentsOf: (0..<rng.int(in: 1...300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
            }
            _ = try Self.survive(bytes, in: dir, name: "\(container.rawValue)-\(round).bin")
        }
    }

    @Test("damaged btsnooz summaries in a bug report's text")
    func btsnooz() throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0x5A002)
        let capture = try TemporaryDirectory.contents(of: try ScenarioFixtures.path("heart-rate-session", format: .btsnoopH4))
        for version in [1, 2] {
            let summary = ArchiveFixtures.btsnooz(fromBTSnoop: capture, version: version)
            for round in 0..<20 {
                var damaged = summary
                switch round % 3 {
                case 0:
                    for _ in 0..<rng.int(in: 1...6) {
                        let i = rng.int(in: 9...(damaged.count - 1))
                        damaged[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                    }
                case 1: damaged = Array(damaged.prefix(rng.int(in: 0...damaged.count)))
                default: damaged[0] = UInt8(truncatingIfNeeded: rng.next())
                }
                _ = try Self.survive(ArchiveFixtures.bugReportText(summary: damaged), in: dir, name: "bugreport-\(version)-\(round).txt")
            }
        }
    }
}
