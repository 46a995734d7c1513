/// `Auditor.deduplicate` over findings read one at a time: the first of each fingerprint and start stays. Memory
/// keeps a hash of each pair; a finding whose hash was seen is compared with the earlier ones of that hash,
/// read back, so that only the same fingerprint and start count as the same.
struct FindingDeduplication {
    /// The first finding of each hash, by its place in the order made.
    private var first: [UInt64: Int32] = [:]
    /// Further findings of a hash already seen that differ from the first (a hash collision): nearly always none.
    private var others: [UInt64: [Int32]] = [:]

    mutating func isFirst(_ f: Finding, at place: Int, reading: (Int) throws(FindingStoreError) -> Finding)
        throws(FindingStoreError) -> Bool {
        let hash = Self.hash(f)
        guard let seen = first[hash] else {
            first[hash] = Int32(place)
            return true
        }
        for j in [seen] + (others[hash] ?? []) {
            let earlier = try reading(Int(j))
            if earlier.fingerprint == f.fingerprint && earlier.start == f.start { return false }
        }
        others[hash, default: []].append(Int32(place))
        return true
    }

    /// FNV-1a over the fingerprint's bytes and the start.
    static func hash(_ f: Finding) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in f.fingerprint.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var t = UInt64(bitPattern: f.start.nanoseconds)
        for _ in 0..<8 {
            h = (h ^ (t & 0xFF)) &* 0x0000_0100_0000_01B3
            t >>= 8
        }
        return h
    }
}
