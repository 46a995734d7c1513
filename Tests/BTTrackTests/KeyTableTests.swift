@testable import BTTrack
import Testing

/// `KeyTable.increment(packed:from:)` counts a batch of senders (the link thread's device tally) through one
/// pointer: it must leave the table as `increment` one key at a time does, across growth and a full table.
@Suite("Key table batches")
struct KeyTableTests {
    static func key(_ n: Int) -> DeviceKey { DeviceKey(rawValue: 1 << 63 | UInt64(n) &* 0x1_0001) }

    /// The keys packed as `LinkFeed` sends them, 8 bytes each.
    static func packed(_ keys: [DeviceKey]) -> [UInt8] {
        keys.flatMap { k in withUnsafeBytes(of: k.rawValue) { Array($0) } }
    }

    /// Counts `keys` with `increment(packed:from:)`, restarting past each key the full table refused, and
    /// returns the table and the refused keys.
    static func batch(_ keys: [DeviceKey], limit: Int) -> (KeyTable<DeviceKey>, [DeviceKey]) {
        var table = KeyTable<DeviceKey>(limit: limit)
        var refused: [DeviceKey] = []
        let bytes = packed(keys)
        bytes.withUnsafeBytes { raw in
            var position = 0
            while true {
                position = table.increment(packed: raw, from: position)
                guard position + 8 <= raw.count else { break }
                refused.append(keys[position / 8])
                position += 8
            }
        }
        return (table, refused)
    }

    static func oneByOne(_ keys: [DeviceKey], limit: Int) -> (KeyTable<DeviceKey>, [DeviceKey]) {
        var table = KeyTable<DeviceKey>(limit: limit)
        var refused: [DeviceKey] = []
        for k in keys where !table.increment(k) { refused.append(k) }
        return (table, refused)
    }

    static func counts(_ table: KeyTable<DeviceKey>) -> [UInt64: Int64] {
        Dictionary(uniqueKeysWithValues: table.entries.map { ($0.key.rawValue, $0.value) })
    }

    @Test("a batch counts as one key at a time does, through growth and past the limit", arguments: [10, 100, 5000])
    func sameAsOneByOne(limit: Int) {
        // Keys repeat in a scrambled order; more distinct keys (300) than the smaller limits.
        let keys = (0..<4000).map { Self.key(($0 &* 7919) % 300) }
        let (batched, refusedInBatch) = Self.batch(keys, limit: limit)
        let (single, refusedSingly) = Self.oneByOne(keys, limit: limit)
        #expect(Self.counts(batched) == Self.counts(single))
        // Each key in the slot one at a time puts it in (a batch inserts where its probe ended).
        #expect(batched.entries.map(\.key.rawValue) == single.entries.map(\.key.rawValue))
        #expect(batched.count == min(limit, 300))
        #expect(refusedInBatch == refusedSingly)
        #expect(refusedInBatch.count == keys.count - Int(Self.counts(single).values.reduce(0, +)))
    }

    @Test("a key found or inserted in one probe lands where counting puts it, and is found there", arguments: [10, 100, 5000])
    func findOrInsert(limit: Int) {
        let keys = (0..<4000).map { Self.key(($0 &* 7919) % 300) }
        var probed = KeyTable<DeviceKey>(limit: limit)
        var seen: Set<UInt64> = []
        for k in keys {
            let result = probed.findOrInsert(k, value: 7)
            if seen.count < limit || seen.contains(k.rawValue) {
                #expect(result?.inserted == !seen.contains(k.rawValue))
                seen.insert(k.rawValue)
                if let slot = result?.slot { #expect(probed.value(at: slot) == 7) }
            } else {
                #expect(result == nil, "past the limit an absent key is refused")
            }
        }
        let (single, _) = Self.oneByOne(keys, limit: limit)
        #expect(probed.entries.map(\.key.rawValue) == single.entries.map(\.key.rawValue))
        #expect(probed.count == single.count && probed.count == seen.count)
        #expect(seen.allSatisfy { probed.slot(of: DeviceKey(rawValue: $0)) != nil })
    }

    @Test("an empty batch, and a batch into an empty table, count nothing and everything")
    func edges() {
        var table = KeyTable<DeviceKey>(limit: 4)
        let none: [UInt8] = []
        #expect(none.withUnsafeBytes { table.increment(packed: $0, from: 0) } == 0)
        #expect(table.count == 0)
        let bytes = Self.packed([Self.key(1), Self.key(1), Self.key(2)])
        #expect(bytes.withUnsafeBytes { table.increment(packed: $0, from: 0) } == 24)
        #expect(Self.counts(table) == [Self.key(1).rawValue: 2, Self.key(2).rawValue: 1])
    }
}

/// `KeyTable.removeAll(expecting:)`: a device tally that held a crowded session, or took an app scan's devices in
/// exchange, is made the size the next session needs, and counts as a new table would.
@Suite("Key table emptied for the next session")
struct KeyTableEmptyingTests {
    @Test("a table far larger than the keys expected is made their size; one near it keeps its storage")
    func sizedForExpected() {
        var table = KeyTable<DeviceKey>(limit: Int.max)
        for n in 0..<20_000 { table.insert(KeyTableTests.key(n)) }
        let grown = table.capacity
        #expect(grown >= 32_768)
        table.removeAll(expecting: 700)
        #expect(table.count == 0 && table.entries.isEmpty)
        // 700 keys within three quarters of 1,024 slots.
        #expect(table.capacity == 1_024)
        for n in 0..<700 { table.insert(KeyTableTests.key(n)) }
        #expect(table.capacity == 1_024 && table.count == 700)
        // Near what it holds: emptied in place.
        table.removeAll(expecting: 400)
        #expect(table.capacity == 1_024 && table.count == 0)
        // Counting after either kind of emptying is counting in a new table.
        let keys = (0..<3_000).map { KeyTableTests.key(($0 &* 7919) % 900) }
        var shrunk = table
        shrunk.removeAll(expecting: 10)
        #expect(shrunk.capacity == 64)
        for k in keys { _ = table.increment(k); _ = shrunk.increment(k) }
        let (fresh, _) = KeyTableTests.oneByOne(keys, limit: Int.max)
        #expect(KeyTableTests.counts(table) == KeyTableTests.counts(fresh))
        #expect(KeyTableTests.counts(shrunk) == KeyTableTests.counts(fresh))
    }

    @Test("the expected count is capped by the table's limit, and a table never used stays unallocated")
    func limitsAndEmpty() {
        var never = KeyTable<DeviceKey>(limit: 100)
        never.removeAll(expecting: 5_000)
        #expect(never.capacity == 0)
        var limited = KeyTable<DeviceKey>(limit: 100, initialSlots: 16)
        for n in 0..<100 { limited.insert(KeyTableTests.key(n)) }
        #expect(limited.capacity == 256)
        limited.removeAll(expecting: 5_000)
        // Sized for the limit (100 keys: 256 slots), not for 5,000.
        #expect(limited.capacity == 256 && limited.count == 0)
    }
}
