import BTWire
import BTCapture

/// Records in order — the connections that came up while a scan was on — that a scan left on through a long
/// capture gathers by the hundred thousand: with a spill (the scan sessions' own file), every full chunk of
/// `chunkLength` is set aside there as it fills, memory keeping 8 bytes a chunk and the last chunk's records.
/// Read in order, a chunk at a time. A value type: a copy appended to sets its own chunks aside (the file is only
/// ever appended to).
public struct RecordRefList: Sequence, Sendable, ExpressibleByArrayLiteral, CustomReflectable {
    /// Where full chunks go; nil keeps every record in `tail`.
    let spill: Spill?
    /// Where each chunk set aside begins in `spill`, in order.
    private(set) var chunks: [Int64] = []
    /// The records after the chunks set aside.
    private(set) var tail: [RecordRef] = []

    /// Records per chunk set aside (32 KiB).
    static let chunkLength = 1024

    public init() { spill = nil }

    public init(arrayLiteral elements: RecordRef...) {
        spill = nil
        tail = elements
    }

    public init<S: Sequence<RecordRef>>(_ records: S) {
        spill = nil
        tail = Array(records)
    }

    /// An empty list that sets its full chunks aside in `spill` (in memory with none).
    public init(settingAsideIn spill: Spill?) { self.spill = spill }

    /// A list read back from `spill` (`ScanSession`'s set-aside bytes).
    init(spill: Spill, chunks: [Int64], tail: [RecordRef]) {
        self.spill = spill
        self.chunks = chunks
        self.tail = tail
    }

    public var count: Int { chunks.count * Self.chunkLength + tail.count }
    public var isEmpty: Bool { count == 0 }
    public var first: RecordRef? { first { _ in true } }

    public mutating func append(_ r: RecordRef) {
        tail.append(r)
        guard let spill, tail.count == Self.chunkLength else { return }
        chunks.append(spill.append(plain: tail))
        tail.removeAll(keepingCapacity: true)
    }

    public struct Iterator: IteratorProtocol {
        let list: RecordRefList
        var chunk = 0
        var buffer: [RecordRef] = []
        var position = 0
        var inTail = false

        public mutating func next() -> RecordRef? {
            while true {
                if position < buffer.count {
                    defer { position += 1 }
                    return buffer[position]
                }
                if chunk < list.chunks.count, let spill = list.spill {
                    buffer = spill.read(plain: RecordRef.self, count: RecordRefList.chunkLength, at: list.chunks[chunk])
                    chunk += 1
                } else if !inTail {
                    buffer = list.tail
                    inTail = true
                } else {
                    return nil
                }
                position = 0
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(list: self) }

    /// Its records, wherever they are (a list read back from a file reflects as the one written).
    public var customMirror: Mirror { Mirror(self, unlabeledChildren: Array(self), displayStyle: .collection) }

    /// Writes the list to `target` after the value it belongs to: its counts, each chunk's position, the tail,
    /// then — for chunks set aside in another file — those chunks (their positions are where they will be).
    func append(to target: Spill) {
        let copied = spill === target ? 0 : chunks.count
        var positions = chunks
        if copied > 0 {
            let stride = Int64(MemoryLayout<RecordRef>.stride)
            let after = target.size + 3 * 8 + Int64(chunks.count) * 8 + Int64(tail.count) * stride
            positions = (0..<copied).map { after + Int64($0) * Int64(Self.chunkLength) * stride }
        }
        target.append(plain: [Int64(positions.count), Int64(tail.count), Int64(copied)])
        target.append(plain: positions)
        target.append(plain: tail)
        guard copied > 0, let source = spill else { return }
        for position in chunks {
            target.append(plain: source.read(plain: RecordRef.self, count: Self.chunkLength, at: position))
        }
    }

    /// The list `append(to:)` wrote at `cursor`'s place; moves the cursor past it.
    static func read(_ cursor: inout Spill.Cursor) -> RecordRefList {
        let counts = cursor.next(Int64.self, count: 3)
        func count(_ i: Int) -> Int { counts.count == 3 ? Int(clamping: Swift.max(0, counts[i])) : 0 }
        let positions = cursor.next(Int64.self, count: count(0))
        let tail = cursor.next(RecordRef.self, count: count(1))
        cursor.skip(RecordRef.self, count: Swift.min(count(2), Int.max / chunkLength) * chunkLength)
        return RecordRefList(spill: cursor.spill, chunks: positions, tail: tail)
    }
}
