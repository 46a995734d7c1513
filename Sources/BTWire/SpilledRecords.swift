/// Records set aside in a `Spill` while a capture is read, each under an id (a link's), and read back by id once
/// all are written: memory keeps about 6 bytes per record (its id and where it begins: `PackedIDs`,
/// `PackedOffsets`). A record's writer appends its bytes to `spill` right after `begin(id:)`.
public final class SpilledRecords: @unchecked Sendable {
    public let spill: Spill
    /// Why the spill is memory rather than a file (it could not be made in the directory given).
    public let spillError: SpillError?
    public var spillFailure: String? { spillError.map { "\($0)" } }
    /// Each record's id and where it begins: in the order written until `sortByID`.
    private var storedIDs = PackedIDs()
    private var storedOffsets = PackedOffsets()
    private var sorted = true
    /// The records these follow (`init(following:)`), and this kind's place among the leader's followers.
    private let leader: SpilledRecords?
    private let slot: Int
    /// A leader's: where the next record's followers begin (−1: none yet), and for which id.
    private var followerStarts: [(id: Int32, start: Int64)] = []
    /// A leader's: per follower, the records written without one of its kind before them.
    private var followerMisses: [Int] = []
    /// A follower whose leader has records without one of its kind: its own index, made once when read.
    private var ownIndex: (ids: PackedIDs, offsets: PackedOffsets)?

    /// `directory`: where the records are set aside (a file whose name is removed at once); nil keeps them in memory.
    public init(directory: String?) {
        let made = Spill.fileOrMemory(in: directory)
        spill = made.spill
        spillError = made.error
        leader = nil
        slot = 0
    }

    /// Records of another kind set aside in `other`'s spill, after and between its own (one file for several kinds
    /// of record, each kind written whole before the next begins, on one thread).
    public init(sharing other: SpilledRecords) {
        spill = other.spill
        spillError = other.spillError
        leader = nil
        slot = 0
    }

    /// Records of another kind each written just before one of `leader`'s, for the same link, in its spill: found
    /// through the leader's index (the leader's record begins with where each of its followers' begins), so this
    /// kind keeps no index of its own — 6 bytes a record less. Made before the leader's first record.
    public init(following leader: SpilledRecords) {
        precondition(leader.leader == nil && leader.count == 0, "followers come before the leader's first record")
        spill = leader.spill
        spillError = leader.spillError
        self.leader = leader
        slot = leader.followerStarts.count
        leader.followerStarts.append((0, -1))
        leader.followerMisses.append(0)
    }

    /// The index a follower reads by: its leader's while every leader record has one of this kind, else its own.
    private var index: (ids: PackedIDs, offsets: PackedOffsets)? {
        guard let leader, leader.followerMisses[slot] > 0 else { return nil }
        if ownIndex == nil {
            var ids = PackedIDs(), offsets = PackedOffsets()
            for k in 0..<leader.count {
                let start = leader.followerStart(slot, ofRecord: k)
                guard start >= 0 else { continue }
                ids.append(leader.storedIDs[k])
                offsets.append(start)
            }
            ownIndex = (ids, offsets)
        }
        return ownIndex
    }

    /// Where the follower in `slot` of the leader's `k`th record begins (−1: it has none).
    private func followerStart(_ slot: Int, ofRecord k: Int) -> Int64 {
        spill.read(plain: Int64.self, at: storedOffsets[k] - Int64(MemoryLayout<Int64>.stride * (followerStarts.count - slot)))
    }

    /// Each record's id: in the order written until `sortByID`.
    public var ids: PackedIDs {
        guard let leader else { return storedIDs }
        return index?.ids ?? leader.storedIDs
    }

    /// Where the `i`th record begins.
    public func offset(at i: Int) -> Int64 {
        guard let leader else { return storedOffsets[i] }
        if let index { return index.offsets[i] }
        return leader.followerStart(slot, ofRecord: i)
    }

    public var count: Int {
        guard let leader else { return storedIDs.count }
        return index?.ids.count ?? leader.count
    }
    /// Whether the records are in a file (not held in memory).
    public var isFile: Bool { spill.isFile }
    /// Bytes set aside.
    public var spilledBytes: Int64 { spill.size }

    /// What went wrong writing or reading the records (a full disk), if anything: a report would then miss them.
    public var failure: String? {
        spill.flush()
        return spill.failure
    }

    /// Starts the record of `id` where the spill ends; returns where that is.
    @discardableResult
    public func begin(id: Int) -> Int64 {
        let id = Int32(clamping: id)
        if let leader {
            leader.followerStarts[slot] = (id, spill.size)
            return spill.size
        }
        // Where each follower's record of this id begins, before this one.
        for f in followerStarts.indices {
            let start = followerStarts[f].id == id ? followerStarts[f].start : -1
            if start < 0 { followerMisses[f] += 1 }
            spill.append(plain: start)
            followerStarts[f] = (0, -1)
        }
        if let last = storedIDs.last, last > id { sorted = false }
        storedIDs.append(id)
        storedOffsets.append(spill.size)
        return spill.size
    }

    /// Puts the records in id order (once every record is written).
    public func sortByID() {
        if let leader {
            leader.sortByID()
            ownIndex = nil
            return
        }
        guard !sorted else { return }
        guard let order = storedIDs.placesInOrder() else { sorted = true; return }
        let written = storedIDs
        storedIDs = PackedIDs(order.lazy.map { written[Int($0)] })
        let at = storedOffsets
        storedOffsets = PackedOffsets(order.lazy.map { at[Int($0)] })
        sorted = true
    }

    /// The place in id order of the record of `id` (after `sortByID`).
    public func index(of id: Int) -> Int? {
        let ids = self.ids
        let i = ids.partitioningIndex { Int($0) >= id }
        return i < ids.count && Int(ids[i]) == id ? i : nil
    }
}
