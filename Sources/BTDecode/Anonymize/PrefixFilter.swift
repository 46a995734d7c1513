/// The first 4 bytes of everything the pass by value looks for, as a set that says "surely nothing begins here"
/// with one load (`ValueScanner.matches` asks it at every byte, so it is kept to a few instructions). A prefix's
/// 64-bit product with an odd constant picks a word by its top bits and two bits in that word by 12 bits below
/// them. With 8 to 16 bits a prefix (a power of two in all), about 1 in 20 to 1 in 45 positions that begin nothing
/// pass; one bit a prefix at 32 to 64 bits each let 1 in 35 to 1 in 60 through, at four times the memory.
struct PrefixFilter {
    private(set) var words: [UInt64]
    /// 64 less the bits that pick a word.
    let shift: UInt64

    /// Room for `count` prefixes at `bitsEach` each or up to twice that (a power of two), between 64 words and
    /// 2^`maximumWordBits` words (at most 2^17: the bits below pick the bits in a word).
    init(count: Int, bitsEach: Int, maximumWordBits: Int) {
        precondition(maximumWordBits <= 17)
        var wordBits = 6
        while (64 << wordBits) < count * bitsEach && wordBits < maximumWordBits { wordBits += 1 }
        words = [UInt64](repeating: 0, count: 1 << wordBits)
        shift = UInt64(64 - wordBits)
    }

    /// The constant added first keeps a run of zero bytes, common in captures, from hashing to 0: one bit in
    /// the first word, set by chance as often as the word is full.
    @inline(__always)
    static func hash(_ prefix: UInt32) -> UInt64 { (UInt64(prefix) &+ 0x5851_F42D_4C95_7F2D) &* 0x9E37_79B9_7F4A_7C15 }

    /// Two bits from the 12 below the top 17 (the most that pick a word).
    @inline(__always)
    static func mask(_ hash: UInt64) -> UInt64 { 1 &<< (hash &>> 35) | 1 &<< (hash &>> 41) }

    @inline(__always)
    static func word(_ hash: UInt64, _ shift: UInt64) -> Int { Int(truncatingIfNeeded: hash &>> shift) }

    mutating func insert(_ prefix: UInt32) {
        let h = Self.hash(prefix)
        words[Self.word(h, shift)] |= Self.mask(h)
    }

    /// Whether `prefix` may be among those inserted, reading `words` in place (the scan's loop holds them).
    @inline(__always)
    static func mayContain(_ prefix: UInt32, in words: UnsafeBufferPointer<UInt64>, shift: UInt64) -> Bool {
        let h = hash(prefix)
        let m = mask(h)
        return words[word(h, shift)] & m == m
    }

    func mayContain(_ prefix: UInt32) -> Bool {
        words.withUnsafeBufferPointer { Self.mayContain(prefix, in: $0, shift: shift) }
    }
}
