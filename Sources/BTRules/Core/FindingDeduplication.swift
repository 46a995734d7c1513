import BTWire
import BTCapture

/// `Auditor.deduplicate` over findings set aside (`FindingSpill`): which of them to leave out, each whose
/// fingerprint and start an earlier one had. A hash of each pair (kept before each finding's bytes, so no finding
/// is decoded for it) is sorted with its place in runs set aside beside the findings; only findings of one hash
/// (nearly always one finding) are read back and compared, so that only the same fingerprint and start count as
/// the same. Memory holds a run, not an entry per finding: a dictionary of hashes took about 30 bytes a finding
/// (6 MB for the 200,000 findings of 10 GB of scans).
enum FindingDeduplication {
    /// One finding: its hash, its place in the order made, where it is.
    struct Entry {
        var hash: UInt64
        var place: Int32
        var ref: FindingSpill.Ref
    }

    static let runLength = 1 << 14

    /// The places (in `made`'s order) of the findings to leave out, in order; nil when there are none (no file is
    /// made for them then: an audit asks once per rule).
    static func duplicates(of made: some Sequence<FindingSpill.Ref>, in spill: FindingSpill,
                           runLength: Int = FindingDeduplication.runLength) throws(FindingStoreError) -> PlainList<Int32>? {
        var byHash = SortedRuns<Entry>(directory: spill.directory, runLength: runLength)
        let order: (Entry, Entry) -> Bool = { ($0.hash, $0.place) < ($1.hash, $1.place) }
        var place: Int32 = 0
        for ref in made {
            guard let hash = spill.hash(ref) else { throw spill.failure ?? .spill(cause: "cannot read back") }
            byHash.append(Entry(hash: hash, place: place, ref: ref), order: { order })
            place += 1
        }

        var dropped = SortedRuns<Int32>(directory: spill.directory, runLength: runLength)
        var group: [Entry] = []
        var failure: FindingStoreError?
        /// Of one hash's findings (in place order), those whose fingerprint and start one before had.
        func settle() {
            defer { group.removeAll(keepingCapacity: true) }
            guard group.count > 1, failure == nil else { return }
            var kept: [(fingerprint: String, start: Timestamp)] = []
            for entry in group {
                do {
                    let f = try spill.read(entry.ref)
                    if kept.contains(where: { $0.fingerprint == f.fingerprint && $0.start == f.start }) {
                        dropped.append(entry.place, order: { (<) })
                    } else {
                        kept.append((f.fingerprint, f.start))
                    }
                } catch {
                    failure = error
                    return
                }
            }
        }
        byHash.drain(by: order) { entry in
            if let last = group.last, last.hash != entry.hash { settle() }
            group.append(entry)
        }
        settle()
        if let failure { throw failure }
        if let cause = byHash.failure { throw .spill(cause: cause) }

        if dropped.isEmpty { return nil }
        var places = PlainList<Int32>(directory: spill.directory)
        dropped.drain(by: <) { places.append($0) }
        if let cause = dropped.failure ?? places.failure { throw .spill(cause: cause) }
        return places
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
