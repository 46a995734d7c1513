/// A set of values that can say "surely not among them" with one load: a split block Bloom filter, as Parquet's
/// (the Apache Parquet format, "Split Block Bloom Filter"). A value's 64-bit hash picks a block of eight 32-bit
/// words by its upper half and sets one bit in each word, the bit chosen from its lower half by eight odd
/// multipliers. A block is half a cache line. With 10 bits a value, about 1 in 80 values not added pass.
struct SplitBlockFilter {
    private(set) var blocks: [SIMD8<UInt32>]

    /// The multipliers of the format: odd, so each spreads the lower half differently.
    private static let salts = SIMD8<UInt32>(0x47B6_137B, 0x4497_4D91, 0x8824_AD5B, 0xA2B7_289D,
                                             0x7054_95C7, 0x2DF1_424B, 0x9EFC_4947, 0x5C6B_FB31)
    static let bitsPerBlock = 256

    /// Room for `count` values at `bitsEach` each (at least one block).
    init(count: Int, bitsEach: Int) {
        let blockCount = max(1, (count * bitsEach + Self.bitsPerBlock - 1) / Self.bitsPerBlock)
        blocks = [SIMD8<UInt32>](repeating: .zero, count: blockCount)
    }

    /// Bytes held.
    var byteCount: Int { blocks.count * MemoryLayout<SIMD8<UInt32>>.stride }

    @inline(__always)
    private func block(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: ((hash >> 32) &* UInt64(blocks.count)) >> 32) }

    @inline(__always)
    private static func mask(_ hash: UInt64) -> SIMD8<UInt32> {
        let shifts = (SIMD8<UInt32>(repeating: UInt32(truncatingIfNeeded: hash)) &* salts) &>> 27
        return SIMD8<UInt32>(repeating: 1) &<< shifts
    }

    @inline(__always)
    mutating func insert(hash: UInt64) { blocks[block(hash)] |= Self.mask(hash) }

    @inline(__always)
    func mayContain(hash: UInt64) -> Bool {
        let m = Self.mask(hash)
        return blocks[block(hash)] & m == m
    }
}
