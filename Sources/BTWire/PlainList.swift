/// Plain values of one type, in order, set aside in a temporary file (`Spill`) with nothing kept in memory per
/// value (the n-th is at n strides), and read back in order a slice at a time, as often as wanted. Without a
/// directory, or when no file can be made there, the bytes are held in memory.
public struct PlainList<Element>: Sequence, @unchecked Sendable {
    let spill: Spill
    public private(set) var count = 0

    /// Values read back at once.
    static var sliceLength: Int { Swift.max(1, Spill.readAheadWindow / MemoryLayout<Element>.stride) }

    public init(directory: String? = nil) {
        precondition(_isPOD(Element.self), "set aside as bytes")
        spill = Spill.fileOrMemory(in: directory, readAhead: Spill.readAheadWindow).spill
    }

    public var isEmpty: Bool { count == 0 }
    /// What went wrong writing or reading the values (a full disk), if anything: reading then ends early.
    public var failure: String? { spill.failure }

    public mutating func append(_ value: Element) {
        spill.append(plain: value)
        count += 1
    }

    public func makeIterator() -> Iterator { Iterator(list: self, read: 0, end: count) }

    /// The values at `range` (within `0..<count`), in order.
    public func values(in range: Range<Int>) -> Values { Values(list: self, range: range) }

    public struct Values: Sequence {
        let list: PlainList
        let range: Range<Int>
        public func makeIterator() -> Iterator { Iterator(list: list, read: range.lowerBound, end: range.upperBound) }
    }

    public struct Iterator: IteratorProtocol {
        let list: PlainList
        var read: Int
        let end: Int
        var slice: [Element] = []
        var position = 0

        init(list: PlainList, read: Int, end: Int) {
            self.list = list
            self.read = read
            self.end = Swift.min(end, list.count)
        }

        public mutating func next() -> Element? {
            if position == slice.count {
                guard read < end else { return nil }
                let n = Swift.min(PlainList.sliceLength, end - read)
                slice = list.spill.read(plain: Element.self, count: n, at: Int64(read * MemoryLayout<Element>.stride))
                // A slice that cannot be read back (`failure`) ends the list.
                guard !slice.isEmpty else { return nil }
                read += slice.count
                position = 0
            }
            defer { position += 1 }
            return slice[position]
        }
    }
}
