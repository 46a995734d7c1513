/// A set of values that can say "surely not among them" with one load: a value's 64-bit hash picks a word by its
/// top bits and three bits in it by its lowest 18. With 16 bits a value about 1 in 100 values not added pass (one
/// bit a value, as before, let 1 in 16 through), and memory stays within `maximumBits`.
struct BlockedFilter {
    private(set) var words: [UInt64]
    let shift: UInt64

    /// Room for `count` values at `bitsEach` each, between 2^12 and 2^`maximumBits` bits (a power of two).
    init(count: Int, bitsEach: Int, maximumBits: Int) {
        var bits = 12
        while (1 << bits) < count * bitsEach && bits < maximumBits { bits += 1 }
        words = [UInt64](repeating: 0, count: (1 << bits) / 64)
        shift = UInt64(64 - (bits - 6))
    }

    @inline(__always)
    static func mask(_ hash: UInt64) -> UInt64 { 1 << (hash & 63) | 1 << (hash >> 6 & 63) | 1 << (hash >> 12 & 63) }

    @inline(__always)
    mutating func insert(hash: UInt64) { words[Int(truncatingIfNeeded: hash >> shift)] |= Self.mask(hash) }

    @inline(__always)
    func mayContain(hash: UInt64) -> Bool {
        let m = Self.mask(hash)
        return words[Int(truncatingIfNeeded: hash >> shift)] & m == m
    }
}
