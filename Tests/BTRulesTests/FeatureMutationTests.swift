import Foundation
import Testing
import BTCapture
import BTScenario
import TestSupport

/// Damaged Android btsnooz logs (alone and as `.last` + log) and captures full of Bluetooth Quality Reports and
/// Bluetooth 6 link events: read, tracked, audited and reported without a crash or a hang (see `MutationTests`).
@Suite("damaged btsnooz logs and quality reports")
struct FeatureMutationTests {
    static func damage(_ original: [UInt8], round: Int, rng: inout SplitMix64, keepHeader: Int) -> [UInt8] {
        var bytes = original
        switch round % 4 {
        case 0:
            for _ in 0..<rng.int(in: 1...12) {
                let i = rng.int(in: keepHeader...(bytes.count - 1))
                bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            }
        case 1:
            bytes = Array(bytes.prefix(rng.int(in: 0...bytes.count)))
        case 2:
            let at = rng.int(in: keepHeader...bytes.count)
            bytes.insert(contentsOf: (0..<rng.int(in: 1...200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
        default:
            let at = rng.int(in: keepHeader...(bytes.count - 1))
            for i in at..<min(bytes.count, at + rng.int(in: 1...8)) { bytes[i] = 0xFF }
        }
        return bytes
    }

    @Test("damaged btsnooz_hci.log files, alone and beside their .last")
    func btsnoozLogs() throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0x5A00_2B17)
        let capture = try TemporaryDirectory.contents(of: try ScenarioFixtures.path("heart-rate-session"))
        let (last, current) = BTSnoozLog.files(fromBTSnoop: capture, lastDumpAt: 120, ring: 100)
        var read = 0
        for round in 0..<40 {
            let damaged = Self.damage(current, round: round, rng: &rng, keepHeader: 16)
            let sub = try TemporaryDirectory()
            let path = try sub.write("btsnooz_hci.log", damaged)
            if try MutationTests.survive(damaged, in: dir, name: "btsnooz-\(round).log") != nil { read += 1 }
            // With its .last: joined (or not) and read without a crash.
            _ = try sub.write("btsnooz_hci.log.last", round % 2 == 0 ? last : Self.damage(last, round: round + 1, rng: &rng, keepHeader: 16))
            for result in CaptureInputs.resolve([sub.file("btsnooz_hci.log.last"), path]) {
                guard case .success(let input) = result, let capture = try? input.open() else { continue }
                while capture.nextRecord() != nil {}
            }
        }
        #expect(read > 0)
    }

    @Test("damaged captures of quality reports and Bluetooth 6 link events", arguments: RadioFeatureLinks.all.map(\.name))
    func featureLinks(_ name: String) throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0xB0_0051 ^ UInt64(name.utf8.count))
        let original = try TemporaryDirectory.contents(of: try ScenarioFixtures.path(name))
        var survived = 0
        for round in 0..<24 {
            let damaged = Self.damage(original, round: round, rng: &rng, keepHeader: 0)
            if try MutationTests.survive(damaged, in: dir, name: "\(name)-\(round).btsnoop") != nil { survived += 1 }
        }
        #expect(survived > 0)
    }
}
