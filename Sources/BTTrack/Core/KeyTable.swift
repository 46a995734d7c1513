/// An open-addressing map for the tracking layer's per-packet lookups.
/// A key packed into one non-zero 64-bit word (0 marks an empty slot of `KeyTable`).
protocol PackedKey {
    var rawValue: UInt64 { get }
    init(rawValue: UInt64)
}

/// Maps packed keys to a 64-bit value each (an index, or a count), up to `limit` keys.
///
/// Why not `Dictionary`: the tables behind per-packet work use it — devices per advertising report (most
/// records of a scanning capture, and with thousands of advertisers every lookup is a cache miss), attributes
/// and activity runs per ATT PDU. `Dictionary` hashes with SipHash on every lookup; open addressing with
/// linear probing keeps the key and its value in one 16-byte slot, so a lookup costs one multiply and usually
/// one cache line, and nothing allocates once the table has grown to its limit. Memory is bounded: at most
/// `limit` keys in at most 4 × limit slots (load factor ≤ ½).
struct KeyTable<Key: PackedKey>: Sendable {
    struct Slot {
        /// `Key.rawValue`, or 0 for an empty slot.
        var key: UInt64
        var value: Int64
    }

    private(set) var slots: [Slot]
    private(set) var count = 0
    private var shift: UInt64
    let limit: Int

    /// - Parameter initialSlots: a power of two.
    init(limit: Int, initialSlots: Int = 64) {
        precondition(initialSlots > 1 && initialSlots.nonzeroBitCount == 1, "a power of two")
        self.limit = max(1, limit)
        slots = Array(repeating: Slot(key: 0, value: 0), count: initialSlots)
        shift = UInt64(64 - initialSlots.trailingZeroBitCount)
    }

    var isFull: Bool { count >= limit }

    @inline(__always)
    func home(_ raw: UInt64) -> Int {
        // Fibonacci hashing: the high bits of the product are well mixed even for sequential addresses.
        Int(truncatingIfNeeded: (raw &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, or nil.
    func slot(of key: Key) -> Int? {
        let mask = slots.count - 1
        var i = home(key.rawValue)
        while true {
            let k = slots[i].key
            if k == key.rawValue { return i }
            if k == 0 { return nil }
            i = (i + 1) & mask
        }
    }

    /// The slot holding `key`, inserting it with `value` when absent and there is room (`inserted` is then
    /// true); nil when absent and the table is full.
    @inline(__always)
    mutating func findOrInsert(_ key: Key, value: Int64) -> (slot: Int, inserted: Bool)? {
        var mask = slots.count - 1
        var i = home(key.rawValue)
        while true {
            let k = slots[i].key
            if k == key.rawValue { return (i, false) }
            if k == 0 { break }
            i = (i + 1) & mask
        }
        guard count < limit else { return nil }
        if (count + 1) * 2 > slots.count {
            // Keep the load factor at or below one half so probes stay short, then find the new empty slot.
            grow()
            mask = slots.count - 1
            i = home(key.rawValue)
            while slots[i].key != 0 { i = (i + 1) & mask }
        }
        slots[i] = Slot(key: key.rawValue, value: value)
        count += 1
        return (i, true)
    }

    @inline(__always)
    mutating func setValue(_ value: Int64, at slot: Int) { slots[slot].value = value }

    /// Adds one to `key`'s value, inserting it with 1; false when absent and the table is full.
    @inline(__always)
    mutating func increment(_ key: Key) -> Bool {
        guard let found = findOrInsert(key, value: 1) else { return false }
        if !found.inserted { slots[found.slot].value &+= 1 }
        return true
    }

    private mutating func grow() {
        let old = slots
        let size = slots.count * 2
        slots = Array(repeating: Slot(key: 0, value: 0), count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        let mask = size - 1
        for s in old where s.key != 0 {
            var i = home(s.key)
            while slots[i].key != 0 { i = (i + 1) & mask }
            slots[i] = s
        }
    }

    /// Every (key, value), in slot order.
    var entries: [(key: Key, value: Int64)] {
        slots.compactMap { $0.key == 0 ? nil : (Key(rawValue: $0.key), $0.value) }
    }

    /// Forgets every key but keeps the grown storage, so the next user (scan session) does not allocate again.
    mutating func removeAll() {
        guard count > 0 else { return }
        for i in slots.indices { slots[i].key = 0 }
        count = 0
    }
}
