@testable import BTTrack
import Testing

/// ATT PDUs by opcode per link (`OpcodeCounts`): the first opcodes counted inline, found by a search of one word,
/// the rest in a list.
@Suite("Opcode counts")
struct OpcodeCountsTests {
    @Test("counts as a dictionary would, with few opcodes, with more than fit inline, and with opcode 0",
          arguments: [1, 3, 8, 9, 40, 256])
    func sameAsDictionary(distinct: Int) {
        var counts = OpcodeCounts()
        var expected: [UInt8: Int] = [:]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Opcodes spread over the whole byte (0 and 255 among them), skewed towards a few.
            let pick = Int(state >> 33) % distinct
            let opcode = UInt8(truncatingIfNeeded: pick &* (pick % 3 == 0 ? 1 : 37))
            counts.increment(opcode)
            expected[opcode, default: 0] += 1
        }
        #expect(counts.dictionary == expected)
        #expect(counts.total == 5_000)
        for (opcode, n) in expected { #expect(counts[opcode] == n) }
        #expect(counts[UInt8(truncatingIfNeeded: 0xAB)] == expected[0xAB, default: 0])
    }

    @Test("an opcode equal to a free lane's zero byte is told from it")
    func zeroOpcode() {
        var counts = OpcodeCounts()
        counts.increment(0x1B)
        #expect(counts[0] == 0)
        counts.increment(0)
        counts.increment(0)
        #expect(counts[0] == 2 && counts[0x1B] == 1 && counts.total == 3)
    }
}
