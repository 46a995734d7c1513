import Foundation
import Testing
import BTWire
@testable import BTReport

/// What the Perfetto export reads one at a time instead of holding: slices in drawing order (`OrderedSlices`),
/// which kind of slice a finding falls in (`SliceCoverage`), and the advertisers' RSSI samples set aside
/// (`AdvertisingSampler`). Each must give what the lists held in memory gave.
@Suite("Perfetto export: slices and samples read in order")
struct TraceOrderTests {
    struct Random {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    /// Spans with equal starts, equal ends, zero lengths and nested ones; in the order made when `sorted`, else
    /// shuffled; every fifth belongs to another controller (nil).
    static func spans(count: Int, seed: UInt64, sorted: Bool) -> [OrderedSlices.Span?] {
        var random = Random(state: seed)
        var out: [OrderedSlices.Span?] = []
        var start: Int64 = 0
        for _ in 0..<count {
            if random.next(5) == 0 { out.append(nil); continue }
            start += Int64(random.next(3)) * 10
            let length = Int64(random.next(4) == 0 ? 0 : random.next(60))
            out.append((start, start + length))
        }
        if sorted {
            // Drawing order already: by start, the longer first.
            var kept: [OrderedSlices.Span] = out.compactMap { $0 }
            kept.sort { (a: OrderedSlices.Span, b: OrderedSlices.Span) -> Bool in
                if a.start != b.start { return a.start < b.start }
                return a.end > b.end
            }
            var i = 0
            for j in out.indices where out[j] != nil {
                out[j] = kept[i]
                i += 1
            }
        } else {
            for i in out.indices.reversed() { out.swapAt(i, random.next(i + 1)) }
        }
        return out
    }

    @Test("slices come in the order the lanes draw them, whether the model's order is it or not", arguments: [false, true])
    func drawingOrder(sorted: Bool) {
        for seed in [1, 2, 3] as [UInt64] {
            let spans = Self.spans(count: 400, seed: seed, sorted: sorted)
            let slices = OrderedSlices(count: spans.count) { spans[$0] }
            var got: [Int] = []
            slices.forEach { got.append($0) }
            let made = spans.enumerated().compactMap { i, s in
                s.map { TraceSlice(start: $0.start, end: $0.end, name: "\(i)", category: "test") }
            }
            let expected = SliceLanes.ordered(made).map { Int($0.name)! }
            #expect(got.count > 250)
            #expect(got == expected, "seed \(seed)")
            #expect(!slices.isEmpty)
        }
        #expect(OrderedSlices(count: 3) { _ in nil }.isEmpty)
    }

    @Test("a time is covered where any slice spans it, asked in order or not", arguments: [false, true])
    func coverage(sorted: Bool) {
        for seed in [4, 5] as [UInt64] {
            let spans = Self.spans(count: 300, seed: seed, sorted: sorted)
            var coverage = SliceCoverage(OrderedSlices(count: spans.count) { spans[$0] })
            var random = Random(state: seed)
            var at: Int64 = -5
            var covered = 0, uncovered = 0
            for step in 0..<2_000 {
                // Mostly forward; now and then back (findings of another kind asked for out of order).
                at = step % 500 == 499 ? Int64(random.next(100)) : at + Int64(random.next(3))
                let expected = spans.contains { s in s.map { $0.start <= at && at <= $0.end } ?? false }
                #expect(coverage.covers(at) == expected, "seed \(seed), at \(at)")
                if expected { covered += 1 } else { uncovered += 1 }
            }
            #expect(covered > 100 && uncovered > 10)
        }
    }

    /// The samples `sampler` hands over for `keys`, as (key, time, dBm).
    static func drawn(_ sampler: AdvertisingSampler, _ keys: [AdvertisingSampler.Key]) throws -> [String] {
        var out: [String] = []
        var key: AdvertisingSampler.Key?
        try sampler.samples(of: keys, begin: { key = $0 }) { s in out.append("\(key!.address) \(s.nanoseconds) \(s.dBm)") }
        return out
    }

    @Test("samples set aside and sorted in runs are those kept in memory, at most one a second per advertiser",
          arguments: [1, 3, 100, 1 << 16])
    func samplesSetAside(runLength: Int) throws {
        let memory = AdvertisingSampler()
        let spilled = AdvertisingSampler(spillDirectory: FileManager.default.temporaryDirectory.path, runLength: runLength)
        var random = Random(state: 9)
        var expected: [UInt64: [String]] = [:]
        var last: [UInt64: Int64] = [:]
        var ns: Int64 = 0
        for _ in 0..<3_000 {
            ns += Int64(random.next(400_000_000))
            let raw = UInt64(0xC0_0000_0000 + random.next(12))
            let rssi = Int8(-30 - random.next(60))
            for sampler in [memory, spilled] { sampler.add(controller: 0, address: BDAddr(rawValue: raw), rssi: rssi, at: ns) }
            if last[raw].map({ ns - $0 >= AdvertisingSampler.minimumInterval }) ?? true {
                last[raw] = ns
                expected[raw, default: []].append("\(BDAddr(rawValue: raw)) \(ns) \(rssi)")
            }
        }
        let keys = [7, 2, 11, 3, 40].map { AdvertisingSampler.Key(controller: 0, address: BDAddr(rawValue: 0xC0_0000_0000 + $0)) }
        let want = keys.flatMap { expected[$0.address.rawValue] ?? [] }
        #expect(want.count > 200)
        #expect(try Self.drawn(memory, keys) == want)
        #expect(try Self.drawn(spilled, keys) == want)
        #expect(memory.advertisers.count == 12 && memory.kept == expected.values.map(\.count).reduce(0, +))
        #expect(try Self.drawn(spilled, []).isEmpty)
    }
}
