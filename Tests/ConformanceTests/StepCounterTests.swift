import Foundation
import Testing
@testable import BTReport

/// The Perfetto export's counters (`StepCounter`): with a spill directory the rate changes are set aside in sorted
/// runs and merged at the end, and the steps must be the very same, to the last bit, as summing them all in memory.
@Suite("Counter tracks summed from runs set aside")
struct StepCounterTests {
    /// Intervals in no order, some of them alike, overlapping, of zero length, sharing their ends.
    static func intervals(count: Int, seed: UInt64) -> [(start: Int64, end: Int64, total: Double)] {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var out: [(start: Int64, end: Int64, total: Double)] = []
        for i in 0..<count {
            if i > 0 && next() % 5 == 0 {
                out.append(out[Int(next() % UInt64(out.count))])  // the same interval again
                continue
            }
            let start = Int64(next() % 2_000) * 1_000_000
            let length = next() % 4 == 0 ? 0 : Int64(next() % 500) * 1_000_000
            out.append((start, start + length, Double(next() % 10_000) / 97))
        }
        return out
    }

    static func steps(_ counter: inout StepCounter) throws -> [(Int64, UInt64, UInt64)] {
        var out: [(Int64, UInt64, UInt64)] = []
        try counter.steps { at, rate, total in out.append((at, rate.bitPattern, total.bitPattern)) }
        return out
    }

    @Test("runs set aside and merged give the steps summed in memory", arguments: [1, 2, 7, 64, 1_000])
    func merged(runLength: Int) throws {
        let directory = FileManager.default.temporaryDirectory.path
        for seed in [1, 2, 3] as [UInt64] {
            var whole = StepCounter()
            var runs = StepCounter(spillDirectory: directory, runLength: runLength)
            for i in Self.intervals(count: 500, seed: seed) {
                whole.add(start: i.start, end: i.end, total: i.total)
                runs.add(start: i.start, end: i.end, total: i.total)
            }
            let expected = try Self.steps(&whole)
            let got = try Self.steps(&runs)
            #expect(expected.count > 100)
            #expect(got.count == expected.count)
            #expect(zip(got, expected).allSatisfy { $0 == $1 }, "seed \(seed), runs of \(runLength)")
        }
    }

    @Test("an empty counter gives no step, set aside or not")
    func empty() throws {
        var memory = StepCounter()
        var spilled = StepCounter(spillDirectory: FileManager.default.temporaryDirectory.path, runLength: 1)
        #expect(memory.isEmpty && spilled.isEmpty)
        #expect(try Self.steps(&memory).isEmpty)
        #expect(try Self.steps(&spilled).isEmpty)
        spilled.add(start: 5, end: 5, total: 2)
        #expect(!spilled.isEmpty)
        let one = try Self.steps(&spilled)
        #expect(one.count == 1 && one[0].0 == 5 && Double(bitPattern: one[0].2) == 2)
    }
}
