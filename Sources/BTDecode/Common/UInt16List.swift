import BTWire

/// A run of little-endian u16 values borrowed from a PDU: ATT handle lists (Read Multiple, Read Multiple Variable)
/// and L2CAP CID lists (credit based connection and reconfigure). Iterating never allocates; an odd final byte
/// is not a value and is left in `trailingBytes`.
public struct UInt16List: Sequence {
    /// The list as it appeared on the wire.
    public let bytes: UnsafeRawBufferPointer

    @inlinable public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Number of whole values.
    @inlinable public var count: Int { bytes.count / 2 }
    @inlinable public var isEmpty: Bool { bytes.count < 2 }
    @inlinable public var underestimatedCount: Int { count }

    /// A byte that does not form a whole value (empty when the list is well formed).
    @inlinable public var trailingBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[(count * 2)...])
    }

    /// The value at `index`, or nil past the end.
    @inlinable public subscript(index: Int) -> UInt16? {
        guard index >= 0, index < count else { return nil }
        return UInt16(bytes[index * 2]) | UInt16(bytes[index * 2 + 1]) << 8
    }

    public struct Iterator: IteratorProtocol {
        @usableFromInline var reader: ByteReader
        @inlinable init(_ bytes: UnsafeRawBufferPointer) { reader = ByteReader(bytes) }
        @inlinable public mutating func next() -> UInt16? { reader.readU16() }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(bytes) }
}
