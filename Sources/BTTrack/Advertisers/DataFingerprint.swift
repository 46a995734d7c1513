/// A 64-bit fingerprint of advertising data plus its event type, to skip parsing repeats.
///
/// Why: most advertisers send the same bytes every advertising event, and reports are the bulk of a
/// scanning capture, so the advertiser table parses AD structures only when a report's data differs from
/// that advertiser's previous data of the same event type. Comparing fingerprints needs no copy of the
/// data and no allocation; hashing 31 bytes takes three multiplies. Two different payloads with the
/// same fingerprint (probability about 2⁻⁶⁴ per pair) would only hide that one change.
///
/// Not a cryptographic or general-purpose hash: it only has to tell an advertiser's consecutive payloads
/// apart, and every byte feeds the result.
enum DataFingerprint {
    /// Never produced by `of(_:eventType:)`: "no data seen yet".
    static let none: UInt64 = 0

    @inline(__always)
    static func of(_ data: UnsafeRawBufferPointer, eventType: UInt16) -> UInt64 {
        let n = data.count
        let seed: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ (UInt64(n) << 16 | UInt64(eventType))
        guard let base = data.baseAddress, n > 0 else { return seed }
        // Two independent lanes of 8 bytes each per round (the multiplies overlap), then the tail as one
        // overlapping 8-byte load, or byte by byte when the data is shorter than 8 bytes.
        var a = seed, b = ~seed
        var i = 0
        while i &+ 16 <= n {
            a = (a ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            b = (b ^ base.loadUnaligned(fromByteOffset: i &+ 8, as: UInt64.self)) &* 0xC4CE_B9FE_1A85_EC53
            a ^= a >> 29
            b ^= b >> 31
            i &+= 16
        }
        var tail: UInt64 = 0
        if i < n {
            if n >= 8 {
                tail = base.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
                if n &- i > 8 { tail ^= base.loadUnaligned(fromByteOffset: i, as: UInt64.self) &* 0x9E37_79B9_7F4A_7C15 }
            } else {
                var shift: UInt64 = 0
                while i < n {
                    tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
                    shift &+= 8
                    i &+= 1
                }
            }
        }
        var h = (a ^ (b &* 0x9E37_79B9_7F4A_7C15) ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 29
        return h == none ? 1 : h
    }
}
