import Foundation
import Testing
@testable import BTWire
import TestSupport

/// Where each value set aside begins, in 4 bytes rather than 8 (`PackedOffsets`), and the window a spill reads
/// ahead (`Spill.readAhead`).
@Suite("Packed offsets and spills read ahead")
struct PackedOffsetsTests {
    @Test("positions near their block's first, far from it, negative and rewritten read back as written")
    func roundTrip() {
        var packed = PackedOffsets()
        var plain: [Int64] = []
        var position: Int64 = 0
        for i in 0..<1000 {
            // Mostly one after another; now and then one far away (a value rewritten at the end of a large file),
            // and the mark a value held in memory carries (-1).
            let p: Int64 = i % 97 == 5 ? (Int64(1) << 40) + Int64(i) : i % 101 == 3 ? -1 : position
            position += Int64(i % 7) * 40
            packed.append(p)
            plain.append(p)
        }
        #expect(Array(packed) == plain)
        // Rewritten: a far value replaced by a near one and the other way round.
        for i in [0, 97, 300, 999] {
            let p: Int64 = i == 97 ? 12 : (Int64(1) << 35) + Int64(i)
            packed[i] = p
            plain[i] = p
        }
        #expect(Array(packed) == plain)
        // Those too far from their block's first are kept whole (the eleven far ones and three rewritten far), the
        // rest in 4 bytes.
        #expect(packed.whole.count == 14)
        #expect(PackedOffsets(plain).elementsEqual(plain))
    }

    @Test("a spill read ahead reads what was written, in order, here and there, and after more was appended")
    func readAhead() throws {
        let directory = try TemporaryDirectory()
        let spill = try Spill(directory: directory.path, readAhead: 64)
        var offsets: [Int64] = []
        for i in 0..<200 { offsets.append(spill.append(plain: Int64(i) * 3)) }
        // In order (a window at a time), backwards and scattered (each read on its own).
        for i in 0..<200 { #expect(spill.read(plain: Int64.self, at: offsets[i]) == Int64(i) * 3) }
        for i in (0..<200).reversed() { #expect(spill.read(plain: Int64.self, at: offsets[i]) == Int64(i) * 3) }
        for i in stride(from: 0, to: 200, by: 37) { #expect(spill.read(plain: Int64.self, at: offsets[i]) == Int64(i) * 3) }
        // A value appended after a window was read is read too.
        let later = spill.append(plain: Int64(-5))
        #expect(spill.read(plain: Int64.self, at: later) == -5)
        // A read past the end fails, says why, and gives zeros.
        #expect(spill.read(plain: Int64.self, at: later + 8) == 0)
        #expect(spill.failure != nil)
    }
}
