/// SplitMix64 (Steele, Lea and Flood, 2014) as a hash of one 64-bit value: the generator's output for a state of
/// `value`. Every bit of the input reaches every bit of the output, and it is written out here so results are the
/// same on every toolchain: the anonymizer's pseudonyms, the peer filter's bit positions and the scenarios'
/// random numbers all come from it.
public enum SplitMixHash {
    /// The generator's step (the golden ratio's 64-bit fraction).
    public static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15
    @usableFromInline static let mix1: UInt64 = 0xBF58_476D_1CE4_E5B9
    @usableFromInline static let mix2: UInt64 = 0x94D0_49BB_1331_11EB

    @inlinable
    public static func hash(_ value: UInt64) -> UInt64 { finalize(value &+ increment) }

    /// The output function applied to a state already advanced.
    @inlinable
    public static func finalize(_ state: UInt64) -> UInt64 {
        var z = state
        z = (z ^ (z >> 30)) &* mix1
        z = (z ^ (z >> 27)) &* mix2
        return z ^ (z >> 31)
    }
}
