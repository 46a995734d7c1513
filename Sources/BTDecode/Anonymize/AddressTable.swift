import BTWire

/// The distinct device addresses a capture holds, in order of first appearance, each found again by its value:
/// the anonymizer's pseudonyms are numbered by that order, and the pass by value looks each address up here
/// (`ValueScanner`) instead of keeping its bytes four times over as patterns. At most `limit` addresses are kept.
///
/// The latest `segmentLength` addresses are in memory (8 bytes each in order, and a slot of 4 in an
/// open-addressing index at most half full). With a directory, each full segment before them is set aside in a
/// file: its addresses in order, and the same with their positions sorted by address, of which memory keeps every
/// `blockLength`th address and a filter (`filterBitsPerAddress` an address) that rules out most lookups of an
/// address not among them. Segments set aside are merged as a binary counter carries (two of the same size
/// become one), so there are about log2 of their number, and a lookup of an address never met passes that many
/// filters, not one per segment. A capture of a million rotating addresses then holds about 1.4 bytes for each
/// past the latest segment, and a lookup of one set aside reads a block of the file (the latest 16,384 found are
/// remembered: an advertiser met early is met again and again).
public final class AddressTable {
    public let limit: Int
    /// Where full segments are set aside (nil: every address stays in memory).
    public let directory: String?
    /// Addresses kept in memory, the latest, before they are set aside as a segment.
    public let segmentLength: Int

    /// Positions below this are set aside; from it on they are in `recent`.
    public private(set) var setAside = 0
    /// The addresses (`BDAddr.rawValue`) from `setAside` on, in order of first appearance.
    @exclusivity(unchecked) private var recent: [UInt64] = []
    /// Index in `recent` + 1 of the address hashed to each slot (0: empty), linear probing; a power of two, at
    /// most half full.
    @exclusivity(unchecked) private var slots: [UInt32]
    private var mask: Int

    /// The set-aside segments, oldest first, and their file.
    @exclusivity(unchecked) private var segments: [Segment] = []
    private var spill: Spill?
    /// Set-aside addresses found lately, two for each hash of their value (`Remembered.empty`: none): a capture
    /// of many links keeps a few thousand advertisers in the air at once, each met again and again (256 kB).
    @exclusivity(unchecked) private var remembered: [Remembered] = []
    /// A block of a segment's sorted addresses, read back (reused).
    @exclusivity(unchecked) private var block: [Located] = []

    static let initialSlots = 1 << 10
    /// Addresses kept in memory before a segment is set aside: a capture of fewer sets none aside.
    public static let defaultSegmentLength = 1 << 15
    /// Sorted addresses read back at once when one set aside is looked up (16 bytes each).
    static let blockLength = 64
    /// About 1 in 80 addresses not in a segment pass its filter (`SplitBlockFilter`).
    static let filterBitsPerAddress = 10
    /// Sorted addresses read or written at once while two segments are merged (16 bytes each).
    static let mergeChunk = 1 << 10
    /// Set-aside addresses read at once by `forEach`.
    static let readLength = 1 << 12
    static let rememberedCount = 1 << 14

    /// An address with its position, as a segment sorts them.
    struct Located {
        var value: UInt64
        var position: UInt64
    }

    struct Remembered {
        var value: UInt64
        var position: Int
        static let empty = Remembered(value: UInt64.max, position: -1)
    }

    /// A full segment set aside: positions `first ..< first + count`.
    struct Segment {
        var first: Int
        var count: Int
        /// Where its addresses are in the file in order of position, and where they are sorted with positions.
        var inOrder: Int64
        var sorted: Int64
        /// Every `blockLength`th sorted address, the first of each block.
        var blockFirsts: [UInt64]
        /// Its addresses by `filterHash` (`filterBitsPerAddress` an address).
        var filter: SplitBlockFilter

        /// What memory holds of it let go: once merged, its file regions are read and nothing else.
        mutating func releaseMemory() {
            blockFirsts = []
            filter = SplitBlockFilter(count: 0, bitsEach: 0)
        }
    }

    /// A hash of an address other than the scan's (`ValueScanner.Addresses.filter`) and the index's: an address
    /// the scan's filter lets through by chance is then ruled out here as often as any other.
    @inline(__always)
    static func filterHash(_ value: UInt64) -> UInt64 { SplitMixHash.hash(value ^ 0x5DEE_CE66_D1CE_4E5B) }

    public init(limit: Int, directory: String? = nil, segmentLength: Int = AddressTable.defaultSegmentLength) {
        precondition(limit < Int(UInt32.max), "positions are four bytes")
        self.limit = limit
        self.directory = directory
        self.segmentLength = max(1, segmentLength)
        slots = [UInt32](repeating: 0, count: Self.initialSlots)
        mask = Self.initialSlots - 1
    }

    public var count: Int { setAside + recent.count }
    /// Segments set aside now (merged as they come: about log2 of the number made).
    var segmentCount: Int { segments.count }
    public var isEmpty: Bool { count == 0 }
    /// What went wrong setting segments aside or reading them back (a full disk), if anything: lookups of the
    /// addresses lost find none.
    public var failure: String? { spill?.failure }
    /// Why segments are held in memory rather than set aside (the directory cannot be written), if they are.
    public private(set) var keptInMemory: String?

    /// The address at `position` (read from the file when it is set aside: for a few; `forEach` reads them all).
    public subscript(position: Int) -> UInt64 {
        if position >= setAside { return recent[position - setAside] }
        let segment = segments[segments.partitioningIndex { $0.first + $0.count > position }]
        return spill!.read(plain: UInt64.self, at: segment.inOrder + Int64((position - segment.first) * 8))
    }

    /// Each of the first `end` addresses with its position, in order.
    public func forEach(below end: Int, _ body: (_ position: Int, _ value: UInt64) -> Void) {
        let end = min(end, count)
        var position = 0
        for segment in segments where position < end {
            var done = 0
            while done < segment.count && position < end {
                let n = min(Self.readLength, segment.count - done, end - position)
                let values = spill!.read(plain: UInt64.self, count: n, at: segment.inOrder + Int64(done * 8))
                for v in values {
                    body(position, v)
                    position += 1
                }
                if values.count < n { position += n - values.count }  // lost (`failure`)
                done += n
            }
        }
        while position < end {
            body(position, recent[position - setAside])
            position += 1
        }
    }

    @inline(__always)
    static func slot(_ value: UInt64) -> Int { Int(truncatingIfNeeded: SplitMixHash.hash(value) >> 1) }

    /// Where `value` is in order of appearance, if it was met.
    @inline(__always)
    public func position(of value: UInt64) -> Int? {
        var s = Self.slot(value) & mask
        while true {
            let stored = slots[s]
            if stored == 0 { break }
            let p = Int(stored) - 1
            if recent[p] == value { return setAside + p }
            s = (s + 1) & mask
        }
        return segments.isEmpty ? nil : setAsidePosition(of: value)
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
            if recent[p] == value { return (setAside + p, false) }
            s = (s + 1) & mask
        }
        if !segments.isEmpty, let p = setAsidePosition(of: value) { return (p, false) }
        guard count < limit else { return (nil, false) }
        recent.append(value)
        slots[s] = UInt32(recent.count)
        if recent.count * 2 > slots.count { grow() }
        if directory != nil && recent.count >= segmentLength { setSegmentAside() }
        return (count - 1, true)
    }

    /// Twice the slots, every position placed again (the addresses themselves are not moved).
    private func grow() {
        let size = slots.count * 2
        slots = [UInt32](repeating: 0, count: size)
        mask = size - 1
        for (p, value) in recent.enumerated() {
            var s = Self.slot(value) & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = UInt32(p + 1)
        }
    }

    // MARK: - Segments set aside

    /// The in-memory addresses become a segment in the file; memory keeps its blocks' first addresses and its
    /// filter.
    private func setSegmentAside() {
        if spill == nil {
            let made = Spill.fileOrMemory(in: directory)
            spill = made.spill
            keptInMemory = made.error?.description
        }
        let spill = spill!
        var sorted = recent.enumerated().map { Located(value: $0.element, position: UInt64(setAside + $0.offset)) }
        sorted.sort { $0.value < $1.value }
        var filter = SplitBlockFilter(count: recent.count, bitsEach: Self.filterBitsPerAddress)
        for v in recent { filter.insert(hash: Self.filterHash(v)) }
        segments.append(Segment(first: setAside, count: recent.count, inOrder: spill.append(plain: recent),
                                sorted: spill.append(plain: sorted),
                                blockFirsts: stride(from: 0, to: sorted.count, by: Self.blockLength).map { sorted[$0].value },
                                filter: filter))
        setAside += recent.count
        recent.removeAll(keepingCapacity: true)
        for i in slots.indices { slots[i] = 0 }
        if remembered.isEmpty { remembered = [Remembered](repeating: .empty, count: Self.rememberedCount) }
        // In memory (the directory cannot be written) a merge's copies would stay: segments are left as made.
        if keptInMemory == nil { mergeLatest() }
    }

    /// Merges the two latest segments while the earlier is no larger than the later: segments of 1, 1 become 2;
    /// 2, 1, 1 become 2, 2 and then 4. Positions stay in order, each segment the run after the one before it.
    private func mergeLatest() {
        while segments.count >= 2 && segments[segments.count - 2].count <= segments[segments.count - 1].count {
            var later = segments.removeLast(), earlier = segments.removeLast()
            // Their filters go before the merged one is made: memory holds one filter for each address.
            later.releaseMemory()
            earlier.releaseMemory()
            segments.append(merged(earlier, later))
        }
    }

    /// One segment made of two consecutive ones: their addresses in order copied one after the other, and their
    /// sorted addresses merged, with its block firsts and filter made as they are written. The file keeps the
    /// two segments' regions (it only grows): each address is written about log2(segments) times in all.
    private func merged(_ earlier: Segment, _ later: Segment) -> Segment {
        let spill = spill!
        let count = earlier.count + later.count
        var inOrder: Int64?
        var values = [UInt64](repeating: 0, count: Self.mergeChunk)
        for segment in [earlier, later] {
            var done = 0
            while done < segment.count {
                let n = min(Self.mergeChunk, segment.count - done)
                values.withUnsafeMutableBytes { bytes in
                    let part = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<n * 8])
                    // Lost when not read back (`failure` says why): zeros stand in, as `subscript` reads them.
                    if !spill.read(at: segment.inOrder + Int64(done * 8), into: part) {
                        part.initializeMemory(as: UInt8.self, repeating: 0)
                    }
                    let at = spill.append(UnsafeRawBufferPointer(part))
                    if inOrder == nil { inOrder = at }
                }
                done += n
            }
        }

        var filter = SplitBlockFilter(count: count, bitsEach: Self.filterBitsPerAddress)
        var blockFirsts: [UInt64] = []
        blockFirsts.reserveCapacity((count + Self.blockLength - 1) / Self.blockLength)
        // A run that cannot be read back ends early (`failure` says why): the merged segment holds fewer sorted
        // addresses, and lookups of those find none.
        func run(_ segment: Segment) -> SpilledRun<Located> {
            SpilledRun(spill: spill, offset: segment.sorted, count: segment.count, sliceLength: Self.mergeChunk)
        }
        var runs = (run(earlier), run(later))
        var out: [Located] = []
        out.reserveCapacity(Self.mergeChunk)
        var sorted: Int64?
        var written = 0
        func flush() {
            let at = out.withUnsafeBytes { spill.append($0) }
            if sorted == nil { sorted = at }
            out.removeAll(keepingCapacity: true)
        }
        while true {
            let next: Located
            switch (runs.0.head, runs.1.head) {
            case (nil, nil):
                if !out.isEmpty || sorted == nil { flush() }
                return Segment(first: earlier.first, count: count, inOrder: inOrder ?? spill.size, sorted: sorted!,
                               blockFirsts: blockFirsts, filter: filter)
            case (let a?, nil):
                next = a
                runs.0.advance()
            case (nil, let b?):
                next = b
                runs.1.advance()
            case (let a?, let b?):
                // An address is in one segment only; ties cannot happen.
                if a.value < b.value {
                    next = a
                    runs.0.advance()
                } else {
                    next = b
                    runs.1.advance()
                }
            }
            if written % Self.blockLength == 0 { blockFirsts.append(next.value) }
            filter.insert(hash: Self.filterHash(next.value))
            out.append(next)
            written += 1
            if out.count == Self.mergeChunk { flush() }
        }
    }

    /// The position of `value` among the segments set aside, if it is there.
    private func setAsidePosition(of value: UInt64) -> Int? {
        let hash = Self.filterHash(value)
        // Two ways: the one found last, then the one found before it.
        let r = Int(truncatingIfNeeded: hash >> 20) & (Self.rememberedCount - 1) & ~1
        if remembered[r].value == value { return remembered[r].position }
        if remembered[r + 1].value == value { return remembered[r + 1].position }
        for segment in segments where segment.filter.mayContain(hash: hash) {
            guard let p = find(value, in: segment) else { continue }
            remembered[r + 1] = remembered[r]
            remembered[r] = Remembered(value: value, position: p)
            return p
        }
        return nil
    }

    /// Reads the block of `segment`'s sorted addresses that would hold `value`, and searches it.
    private func find(_ value: UInt64, in segment: Segment) -> Int? {
        let b = segment.blockFirsts.partitioningIndex { $0 > value } - 1
        guard b >= 0 else { return nil }
        let n = min(Self.blockLength, segment.count - b * Self.blockLength)
        if block.count < Self.blockLength { block = [Located](repeating: Located(value: 0, position: 0), count: Self.blockLength) }
        let read = block.withUnsafeMutableBytes { bytes in
            spill!.read(at: segment.sorted + Int64(b * Self.blockLength * MemoryLayout<Located>.stride),
                        into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<n * MemoryLayout<Located>.stride]))
        }
        guard read else { return nil }
        let i = block[0..<n].partitioningIndex { $0.value >= value }
        return i < n && block[i].value == value ? Int(block[i].position) : nil
    }
}
