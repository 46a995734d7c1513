/// A cursor over borrowed bytes. Bluetooth protocol fields are little-endian, so that is the default;
/// container headers (btsnoop, PacketLogger BE) ask for big-endian explicitly.
///
/// `read…` consumes, `peek…` and `get…(at:)` do not. A read with too few bytes returns nil and leaves the
/// position where it was, so a decoder can stop cleanly at the first short field.
public struct ByteReader {
    public let bytes: UnsafeRawBufferPointer
    /// Settable so a decoder can rewind to a mark it took itself.
    public var position: Int

    @inlinable public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.position = 0
    }

    @inlinable public var remaining: Int { bytes.count - position }
    @inlinable public var isAtEnd: Bool { position >= bytes.count }

    /// The bytes not read yet, borrowed.
    @inlinable public var rest: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[position...])
    }

    @inlinable public func get<T: FixedWidthInteger>(_: T.Type, at offset: Int, bigEndian: Bool = false) -> T? {
        let size = MemoryLayout<T>.size
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    @inlinable public func peek<T: FixedWidthInteger>(_ type: T.Type, bigEndian: Bool = false) -> T? {
        get(type, at: position, bigEndian: bigEndian)
    }

    @inlinable public mutating func read<T: FixedWidthInteger>(_ type: T.Type, bigEndian: Bool = false) -> T? {
        guard let value = get(type, at: position, bigEndian: bigEndian) else { return nil }
        position += MemoryLayout<T>.size
        return value
    }

    @inlinable public mutating func readU8() -> UInt8? { read(UInt8.self) }
    @inlinable public mutating func readI8() -> Int8? { read(Int8.self) }
    @inlinable public mutating func readU16() -> UInt16? { read(UInt16.self) }
    @inlinable public mutating func readU32() -> UInt32? { read(UInt32.self) }
    @inlinable public mutating func readU64() -> UInt64? { read(UInt64.self) }

    /// Reads a 24-bit little-endian value (SMP passkeys, class of device).
    @inlinable public mutating func readU24() -> UInt32? {
        guard remaining >= 3 else { return nil }
        let v = UInt32(bytes[position]) | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2]) << 16
        position += 3
        return v
    }

    /// Borrows `count` bytes and moves past them.
    @inlinable public mutating func readBytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
        position += count
        return slice
    }

    /// Borrows everything left.
    @inlinable public mutating func readRest() -> UnsafeRawBufferPointer {
        let slice = rest
        position = bytes.count
        return slice
    }

    @inlinable public mutating func readAddress() -> BDAddr? {
        guard let raw = readBytes(6) else { return nil }
        return BDAddr(littleEndianBytes: raw)
    }

    @inlinable @discardableResult public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        position += count
        return true
    }
}
