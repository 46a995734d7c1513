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

    @Test("link ids in close order and in id order in 2 bytes each, those far from their block's first kept whole")
    func ids() throws {
        // Links close near id order, now and then one long after its neighbours (a link up for hours).
        var closeOrder: [Int32] = []
        for id in Int32(1)...5000 where id % 250 != 7 { closeOrder.append(id) }
        for (k, id) in stride(from: Int32(7), through: 5000, by: 250).enumerated() { closeOrder.insert(id, at: min(closeOrder.count, 40 * k + 4000)) }
        closeOrder.append(Int32.max - 3)  // far beyond every other: a 16-bit difference cannot reach it
        let packed = PackedIDs(closeOrder)
        #expect(Array(packed) == closeOrder)
        #expect(packed.whole.count == 1)
        let order = try #require(packed.placesInOrder())
        let sorted = PackedIDs(order.map { packed[Int($0)] })
        #expect(Array(sorted) == closeOrder.sorted())
        #expect(sorted.placesInOrder() == nil)
        let empty: PackedIDs = []
        #expect(empty.isEmpty && empty.placesInOrder() == nil)
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

    @Test("a spill read in order from several places at once, and here and there between, reads what was written",
          arguments: [64, 4096, Spill.readAheadWindow])
    func interleavedReaders(readAhead: Int) throws {
        let directory = try TemporaryDirectory()
        let spill = try Spill(directory: directory.path, readAhead: readAhead)
        // Values of 1 to 40 words, so that some cross a window's end and a few are larger than a small window.
        var values: [(offset: Int64, words: [Int64])] = []
        var state: UInt64 = 7
        func random() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for i in 0..<3000 {
            let words = (0..<Int(random() % 40) + 1).map { Int64(i) << 20 | Int64($0) }
            values.append((spill.append(plain: words), words))
        }
        func check(_ i: Int) {
            #expect(spill.read(plain: Int64.self, count: values[i].words.count, at: values[i].offset) == values[i].words)
        }
        // Twelve readers in order, each through its own stretch (more than the spill's windows), taking turns, with
        // a value looked up at random between turns; then every value backwards.
        let stretch = values.count / 12
        for k in 0..<stretch {
            for r in 0..<12 {
                check(r * stretch + k)
                if k % 5 == 0 { check(Int(random() % UInt64(values.count))) }
            }
        }
        for i in values.indices.reversed() { check(i) }
        #expect(spill.failure == nil)
    }
}
