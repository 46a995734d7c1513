/// An open-addressing map for the tracking layer's per-packet lookups.
/// A key packed into one non-zero 64-bit word (0 marks an empty slot of `KeyTable`).
protocol PackedKey {
    var rawValue: UInt64 { get }
    init(rawValue: UInt64)
}

/// Maps packed keys to a 64-bit value each (an index, or a count), up to `limit` keys.
///
/// Why not `Dictionary`: the tables behind per-packet work use it — devices per advertising report (most
/// records of a scanning capture), attributes and activity runs per ATT PDU. `Dictionary` hashes with SipHash
/// on every lookup; here a lookup costs one multiply and a linear probe over the keys. Keys and values are
/// separate arrays so the probed part stays small: 4096 devices' keys take 32–64 KiB, about the first-level
/// cache, where a 16-byte slot layout would not fit. Nothing allocates once the table has grown to its
/// limit. Memory is bounded: at most `limit` keys in at most 2 × limit / 0.75 slots.
struct KeyTable<Key: PackedKey>: Sendable {
    /// `Key.rawValue` per slot, or 0 for an empty slot.
    private var keys: [UInt64]
    private var values: [Int64]
    private(set) var count = 0
    private var shift: UInt64 = 0
    let limit: Int
    /// Slots allocated by the first insertion: most links' tables stay empty or small, and a table that is
    /// never used should cost no allocation.
    private let initialSlots: Int

    /// - Parameter initialSlots: a power of two.
    init(limit: Int, initialSlots: Int = 64) {
        precondition(initialSlots > 1 && initialSlots.nonzeroBitCount == 1, "a power of two")
        self.limit = max(1, limit)
        self.initialSlots = initialSlots
        keys = []
        values = []
    }

    var isFull: Bool { count >= limit }

    @inline(__always)
    func home(_ raw: UInt64) -> Int {
        // Fibonacci hashing: the high bits of the product are well mixed even for sequential addresses.
        Int(truncatingIfNeeded: (raw &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, or nil.
    @inline(__always)
    func slot(of key: Key) -> Int? {
        guard !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        var i = home(key.rawValue)
        while true {
            let k = keys[i]
            if k == key.rawValue { return i }
            if k == 0 { return nil }
            i = (i + 1) & mask
        }
    }

    @inline(__always) func value(at slot: Int) -> Int64 { values[slot] }
    @inline(__always) mutating func setValue(_ value: Int64, at slot: Int) { values[slot] = value }

    /// The slot holding `key`, inserting it with `value` when absent and there is room (`inserted` is then
    /// true); nil when absent and the table is full.
    @inline(__always)
    mutating func findOrInsert(_ key: Key, value: Int64) -> (slot: Int, inserted: Bool)? {
        if keys.isEmpty { allocate(initialSlots) }
        var mask = keys.count - 1
        var i = home(key.rawValue)
        while true {
            let k = keys[i]
            if k == key.rawValue { return (i, false) }
            if k == 0 { break }
            i = (i + 1) & mask
        }
        guard count < limit else { return nil }
        if (count + 1) * 4 > keys.count * 3 {
            // Keep the load factor at or below three quarters so probes stay short, then find the new empty slot.
            grow()
            mask = keys.count - 1
            i = home(key.rawValue)
            while keys[i] != 0 { i = (i + 1) & mask }
        }
        keys[i] = key.rawValue
        values[i] = value
        count += 1
        return (i, true)
    }

    /// Adds one to `key`'s value, inserting it with 1; false when absent and the table is full.
    @inline(__always)
    mutating func increment(_ key: Key) -> Bool {
        guard let found = findOrInsert(key, value: 1) else { return false }
        if !found.inserted { values[found.slot] &+= 1 }
        return true
    }

    private mutating func allocate(_ size: Int) {
        keys = Array(repeating: 0, count: size)
        values = Array(repeating: 0, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        let size = keys.count * 2
        allocate(size)
        let mask = size - 1
        for s in oldKeys.indices where oldKeys[s] != 0 {
            var i = home(oldKeys[s])
            while keys[i] != 0 { i = (i + 1) & mask }
            keys[i] = oldKeys[s]
            values[i] = oldValues[s]
        }
    }

    /// Every (key, value), in slot order.
    var entries: [(key: Key, value: Int64)] {
        keys.indices.compactMap { keys[$0] == 0 ? nil : (Key(rawValue: keys[$0]), values[$0]) }
    }

    /// Forgets every key but keeps the grown storage, so the next user (scan session) does not allocate again.
    mutating func removeAll() {
        guard count > 0 else { return }
        for i in keys.indices { keys[i] = 0 }
        count = 0
    }
}
