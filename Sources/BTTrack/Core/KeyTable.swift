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
/// on every lookup; here a lookup costs one multiply and a linear probe. Each slot is its key and value side
/// by side (16 bytes), because every lookup here goes on to read or update the value: a found key then costs
/// one cache line, not one in a key array and another in a value array. With thousands of devices the table
/// outgrows the first-level cache, and that second line was a miss on most advertising reports. Nothing
/// allocates once the table has grown to its limit. Memory is bounded: at most `limit` keys in at most
/// 2 × limit / 0.75 slots of 16 bytes.
struct KeyTable<Key: PackedKey>: Sendable {
    /// Slot `i` is `words[2i]` (`Key.rawValue`, or 0 for an empty slot) and `words[2i + 1]` (its value).
    private var words: [UInt64]
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
        words = []
    }

    var isFull: Bool { count >= limit }

    /// Slots allocated (0 before the first insertion).
    var capacity: Int { words.count / 2 }

    @inline(__always)
    func home(_ raw: UInt64) -> Int { Self.home(raw, shift: shift) }

    /// The home slot of `raw` in a table of 2^(64 - shift) slots.
    @inline(__always)
    static func home(_ raw: UInt64, shift: UInt64) -> Int {
        // Fibonacci hashing: the high bits of the product are well mixed even for sequential addresses.
        Int(truncatingIfNeeded: (raw &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, or nil.
    @inline(__always)
    func slot(of key: Key) -> Int? {
        guard let (slot, found) = probe(key.rawValue), found else { return nil }
        return slot
    }

    /// Where a probe for `raw` stops: the slot holding it (`found`), or the empty slot after its run, where an
    /// insertion puts it; nil before the first insertion. Read only: no check that the storage is not shared.
    @inline(__always)
    func probe(_ raw: UInt64) -> (slot: Int, found: Bool)? {
        words.withUnsafeBufferPointer { w in
            guard !w.isEmpty else { return nil }
            let mask = w.count / 2 - 1
            var i = home(raw)
            while true {
                let k = w[2 &* i]
                if k == raw { return (i, true) }
                if k == 0 { return (i, false) }
                i = (i &+ 1) & mask
            }
        }
    }

    @inline(__always) func value(at slot: Int) -> Int64 { Int64(bitPattern: words[2 * slot + 1]) }
    @inline(__always) mutating func setValue(_ value: Int64, at slot: Int) { words[2 * slot + 1] = UInt64(bitPattern: value) }

    /// The slot holding `key`, inserting it with `value` when absent and there is room (`inserted` is then
    /// true); nil when absent and the table is full.
    @inline(__always)
    mutating func findOrInsert(_ key: Key, value: Int64) -> (slot: Int, inserted: Bool)? {
        guard let (i, found) = probe(key.rawValue) else { return insert(key, value: value) }
        if found { return (i, false) }
        // Into the empty slot the probe stopped at, as `insert` would put it, unless the table must grow first.
        guard Self.fitsWithoutGrowing(count, limit: limit, slots: capacity) else { return insert(key, value: value) }
        put(key.rawValue, value, at: i)
        return (i, true)
    }

    /// Stores a new key in empty slot `i`, through one pointer (a check that the storage is not shared, not two).
    @inline(__always)
    private mutating func put(_ raw: UInt64, _ value: Int64, at i: Int) {
        words.withUnsafeMutableBufferPointer { w in
            w[2 &* i] = raw
            w[2 &* i &+ 1] = UInt64(bitPattern: value)
        }
        count += 1
    }

    /// Whether a key more fits in `slots` beside `count` keys without growing the table: within `limit` and the
    /// load factor.
    @inline(__always)
    static func fitsWithoutGrowing(_ count: Int, limit: Int, slots: Int) -> Bool {
        count < limit && loadFactorAllows(count &+ 1, slots: slots)
    }

    /// At most three quarters of the slots taken, so probes stay short.
    @inline(__always)
    static func loadFactorAllows(_ keys: Int, slots: Int) -> Bool { keys &* 4 <= slots &* 3 }

    /// Adds one to `key`'s value, inserting it with 1; false when absent and the table is full.
    @inline(__always)
    mutating func increment(_ key: Key) -> Bool {
        guard let (i, inserted) = findOrInsert(key, value: 1) else { return false }
        if !inserted { words[2 * i + 1] &+= 1 }
        return true
    }

    /// Adds one to the value of each key packed in `keys` (8 bytes each, unaligned) from byte `position` on,
    /// inserting absent ones with 1, as `increment` would one by one. Stops at a key absent when the table is
    /// full and returns its position (`keys.count` or more when every key was counted). A batch of advertising
    /// reports' senders (`LinkFeed`) is counted through one pointer: `increment` checked that the storage was
    /// not shared at every key.
    @inline(__always)
    mutating func increment(packed keys: UnsafeRawBufferPointer, from position: Int) -> Int {
        var position = position
        while position &+ 8 <= keys.count {
            let shift = self.shift  // an insertion may have grown the table
            let limit = self.limit
            var count = self.count
            // Found keys are counted in place, and absent ones put in the empty slot their probe ended at while
            // the table need not grow (most of a scan session's reports are a device's first); the loop leaves the
            // pointer at the first key that needs the table grown (or is past its limit).
            position = words.withUnsafeMutableBufferPointer { w -> Int in
                guard !w.isEmpty else { return position }
                let mask = w.count / 2 &- 1
                var p = position
                while p &+ 8 <= keys.count {
                    let raw = keys.loadUnaligned(fromByteOffset: p, as: UInt64.self)
                    var i = Self.home(raw, shift: shift)
                    while true {
                        let k = w[2 &* i]
                        if k == raw {
                            w[2 &* i &+ 1] &+= 1
                            break
                        }
                        if k == 0 {
                            guard Self.fitsWithoutGrowing(count, limit: limit, slots: mask &+ 1) else { return p }
                            w[2 &* i] = raw
                            w[2 &* i &+ 1] = 1
                            count &+= 1
                            break
                        }
                        i = (i &+ 1) & mask
                    }
                    p &+= 8
                }
                return p
            }
            self.count = count
            guard position &+ 8 <= keys.count else { break }
            let key = Key(rawValue: keys.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            guard insert(key, value: 1) != nil else { return position }
            position &+= 8
        }
        return position
    }

    /// Inserts a key known to be absent, allocating or growing the table first (nil when it is full). Out of line:
    /// the lookups put a new key in the empty slot their probe stopped at unless the table must grow, which is rare.
    @inline(never)
    private mutating func insert(_ key: Key, value: Int64) -> (slot: Int, inserted: Bool)? {
        guard count < limit else { return nil }
        if words.isEmpty {
            allocate(initialSlots)
        } else if !Self.loadFactorAllows(count &+ 1, slots: capacity) {
            grow()
        }
        let shift = self.shift
        // Through one pointer: indexing `words` checked that the storage was not shared at each store (scan
        // sessions insert every device they hear, on the link thread).
        let slot = words.withUnsafeMutableBufferPointer { w -> Int in
            let mask = w.count / 2 &- 1
            var i = Self.home(key.rawValue, shift: shift)
            while w[2 &* i] != 0 { i = (i &+ 1) & mask }
            w[2 &* i] = key.rawValue
            w[2 &* i &+ 1] = UInt64(bitPattern: value)
            return i
        }
        count += 1
        return (slot, true)
    }

    private mutating func allocate(_ slots: Int) {
        words = Array(repeating: 0, count: 2 * slots)
        shift = UInt64(64 - slots.trailingZeroBitCount)
    }

    private mutating func grow() {
        let old = words
        allocate(capacity * 2)
        let mask = capacity - 1
        for s in stride(from: 0, to: old.count, by: 2) where old[s] != 0 {
            var i = home(old[s])
            while words[2 * i] != 0 { i = (i + 1) & mask }
            words[2 * i] = old[s]
            words[2 * i + 1] = old[s + 1]
        }
    }

    /// Calls `body` with each key and value, in slot order, without building the list.
    @inline(__always)
    func forEach(_ body: (Key, Int64) -> Void) {
        words.withUnsafeBufferPointer { w in
            for i in stride(from: 0, to: w.count, by: 2) where w[i] != 0 { body(Key(rawValue: w[i]), Int64(bitPattern: w[i + 1])) }
        }
    }

    /// Every (key, value), in slot order.
    var entries: [(key: Key, value: Int64)] {
        var out: [(key: Key, value: Int64)] = []
        forEach { out.append(($0, $1)) }
        return out
    }

    /// Forgets every key but keeps the grown storage, so the next user (scan session) does not allocate again.
    mutating func removeAll() {
        guard count > 0 else { return }
        words.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        count = 0
    }

    /// Forgets every key, keeping the storage unless it has more than twice the slots `expected` keys need, when
    /// it is made that size. Emptying and walking a table cost its slots, not its keys: a device tally that
    /// once held a crowded session, or took an app scan's devices (`ScanDeviceKeeping`), was zeroed and walked
    /// whole at every session of a few hundred devices after.
    mutating func removeAll(expecting expected: Int) {
        let fitting = Self.slots(holding: min(expected, limit), initialSlots: initialSlots)
        guard capacity > 2 * fitting else { return removeAll() }
        allocate(fitting)
        count = 0
    }

    /// The fewest slots (a power of two, at least `initialSlots`) that hold `keys` keys within the load factor.
    static func slots(holding keys: Int, initialSlots: Int) -> Int {
        var slots = initialSlots
        while !loadFactorAllows(keys, slots: slots) { slots *= 2 }
        return slots
    }

    /// Inserts `key` (with value 0) when absent and there is room: the table as a set.
    @inline(__always)
    mutating func insert(_ key: Key) {
        _ = findOrInsert(key, value: 0)
    }

    /// Exchanges this table's keys and values with `other`'s, storage and all (each keeps its limit): a table
    /// handed on whole without copying it.
    mutating func exchangeStorage(with other: inout KeyTable) {
        swap(&words, &other.words)
        swap(&count, &other.count)
        swap(&shift, &other.shift)
    }
}
