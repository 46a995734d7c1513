/// Records set aside in a `Spill` while a capture is read, each under an id (a link's), and read back by id once
/// all are written: memory keeps about 6 bytes per record (its id and where it begins: `PackedIDs`,
/// `PackedOffsets`). A record's writer appends its bytes to `spill` right after `begin(id:)`.
public final class SpilledRecords: @unchecked Sendable {
    public let spill: Spill
    /// Why the spill is memory rather than a file (it could not be made in the directory given).
    public let spillError: SpillError?
    public var spillFailure: String? { spillError.map { "\($0)" } }
    /// Each record's id and where it begins: in the order written until `sortByID`.
    public private(set) var ids = PackedIDs()
    public private(set) var offsets = PackedOffsets()
    private var sorted = true

    /// `directory`: where the records are set aside (a file whose name is removed at once); nil keeps them in memory.
    public init(directory: String?) {
        let made = Spill.fileOrMemory(in: directory)
        spill = made.spill
        spillError = made.error
    }

    /// Records of another kind set aside in `other`'s spill, after and between its own (one file for several kinds
    /// of record, each kind written whole before the next begins, on one thread).
    public init(sharing other: SpilledRecords) {
        spill = other.spill
        spillError = other.spillError
    }

    public var count: Int { ids.count }
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
        if let last = ids.last, last > id { sorted = false }
        ids.append(id)
        offsets.append(spill.size)
        return spill.size
    }

    /// Puts the records in id order (once every record is written).
    public func sortByID() {
        guard !sorted else { return }
        guard let order = ids.placesInOrder() else { sorted = true; return }
        let written = ids
        ids = PackedIDs(order.lazy.map { written[Int($0)] })
        let at = offsets
        offsets = PackedOffsets(order.lazy.map { at[Int($0)] })
        sorted = true
    }

    /// The place in id order of the record of `id` (after `sortByID`).
    public func index(of id: Int) -> Int? {
        let i = ids.partitioningIndex { Int($0) >= id }
        return i < ids.count && Int(ids[i]) == id ? i : nil
    }
}
