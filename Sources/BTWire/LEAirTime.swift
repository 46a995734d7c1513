/// How long an LE packet lasts on air [Core Vol 6 Part B §2.1, §2.2; ENERGY.md §3.1], from its bytes between the
/// access address and the CRC inclusive: 8 µs a byte on LE 1M after a 1-byte preamble, 4 µs on LE 2M after a
/// 2-byte one; LE Coded has 376 µs of preamble, access address, CI and TERM1, then 8 µs (S8) or 2 µs (S2) a bit
/// of PDU and CRC, and TERM2 (3 bits). The one formula the cost model, the sniffer clock and the scenario
/// generator use.
public enum LEAirTime {
    public enum PHY: Sendable {
        case le1M, le2M, codedS8, codedS2
    }

    /// The access address's length, which `bytes` counts but LE Coded sends at the fixed rate.
    public static let accessAddressLength = 4
    static let codedFixedNanoseconds: Int64 = 376_000
    static let codedTerm2Bits: Int64 = 3

    /// Nanoseconds on air of a packet of `bytes` bytes, access address to CRC.
    @inlinable public static func nanoseconds(bytes: Int, phy: PHY) -> Int64 {
        let n = Int64(bytes)
        switch phy {
        case .le1M: return (1 + n) * 8_000
        case .le2M: return (2 + n) * 4_000
        case .codedS8: return coded(n, nanosecondsPerBit: 8_000)
        case .codedS2: return coded(n, nanosecondsPerBit: 2_000)
        }
    }

    @usableFromInline static func coded(_ n: Int64, nanosecondsPerBit: Int64) -> Int64 {
        let pduAndCRC = max(0, n - Int64(accessAddressLength))
        return codedFixedNanoseconds + (pduAndCRC * 8 + codedTerm2Bits) * nanosecondsPerBit
    }
}
