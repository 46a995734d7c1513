import BTWire

/// The distinct device addresses a capture holds, in order of first appearance, each found again by its value:
/// the anonymizer's pseudonyms are numbered by that order, and the pass by value looks each address up here
/// (`ValueScanner`) instead of keeping its bytes four times over as patterns. Eight bytes an address in order and
/// a slot of four to eight in an open-addressing index of positions: a capture of hundreds of thousands of
/// rotating addresses spent hundreds of bytes on each in dictionaries and pattern arrays. At most `limit`
/// addresses are kept.
public final class AddressTable {
    public let limit: Int
    /// The addresses (`BDAddr.rawValue`), in order of first appearance.
    @exclusivity(unchecked) private(set) var values: [UInt64] = []
    /// Position + 1 of the address hashed to each slot (0: empty), linear probing; a power of two, at most half
    /// full.
    @exclusivity(unchecked) private var slots: [UInt32]
    private var mask: Int

    static let initialSlots = 1 << 10

    public init(limit: Int) {
        precondition(limit < Int(UInt32.max), "positions are four bytes")
        self.limit = limit
        slots = [UInt32](repeating: 0, count: Self.initialSlots)
        mask = Self.initialSlots - 1
    }

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }

    /// The address at `position`.
    public subscript(position: Int) -> UInt64 { values[position] }

    @inline(__always)
    static func slot(_ value: UInt64) -> Int { Int(truncatingIfNeeded: SplitMixHash.hash(value) >> 1) }

    /// Where `value` is in order of appearance, if it was met.
    @inline(__always)
    public func position(of value: UInt64) -> Int? {
        var s = Self.slot(value) & mask
        while true {
            let stored = slots[s]
            if stored == 0 { return nil }
            let p = Int(stored) - 1
            if values[p] == value { return p }
            s = (s + 1) & mask
        }
    }

    public func contains(_ value: UInt64) -> Bool { position(of: value) != nil }

    /// Adds `value` if it is new and the table is not full. Returns its position (nil when it is new and the table
    /// full) and whether it was added now.
    @discardableResult
    public func insert(_ value: UInt64) -> (position: Int?, added: Bool) {
        var s = Self.slot(value) & mask
        while true {
            let stored = slots[s]
            if stored == 0 { break }
            let p = Int(stored) - 1
            if values[p] == value { return (p, false) }
            s = (s + 1) & mask
        }
        guard values.count < limit else { return (nil, false) }
        values.append(value)
        slots[s] = UInt32(values.count)
        if values.count * 2 > slots.count { grow() }
        return (values.count - 1, true)
    }

    /// Twice the slots, every position placed again (the addresses themselves are not moved).
    private func grow() {
        let size = slots.count * 2
        slots = [UInt32](repeating: 0, count: size)
        mask = size - 1
        for (p, value) in values.enumerated() {
            var s = Self.slot(value) & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = UInt32(p + 1)
        }
    }
}
