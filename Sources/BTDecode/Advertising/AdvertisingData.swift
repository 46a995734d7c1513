import BTWire

/// Advertising or scan-response data (Core Supplement Part A §1; FORMATS.md §8), read in place: a run of
/// structures `len u8, type u8, data[len−1]`, where a `len` of 0 ends the data (padding may follow).
///
/// Named `…View` because it only borrows the bytes (like `String.UTF8View`), and to stay apart from
/// BTScenario's `AdvertisingData`, the encoder that builds such bytes; tests import both modules.
///
/// Iterating yields each well-formed structure without allocating. A structure whose length runs past the
/// end (or a length byte with no type byte) stops the iteration and is reported by `malformation`; the
/// structures before it are still yielded. Nothing traps. The parsed accessors (`localName`, `serviceUUIDs`,
/// `iBeacon`, …) allocate and are meant for describing, not for the per-frame hot path.
public struct AdvertisingDataView: Sequence {
    /// The data as it appeared in the report or command.
    public let bytes: UnsafeRawBufferPointer

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// One AD structure; `data` excludes the length and type bytes and is borrowed.
    public struct Structure {
        public let type: ADType
        public let data: UnsafeRawBufferPointer
        /// Offset of the structure's length byte in `bytes`.
        public let offset: Int
    }

    /// Why the walk stopped early.
    public struct Malformation: Hashable, Sendable, CustomStringConvertible {
        /// Offset of the offending length byte.
        public let offset: Int
        /// The length byte's value (type + data).
        public let declaredLength: UInt8
        /// Bytes present after the length byte.
        public let available: Int
        public let reason: String

        /// `structure at offset 3 declares 10 bytes, 4 present: runs past the end of the data`.
        public var description: String {
            "structure at offset " + String(offset) + " declares " + String(declaredLength) + " bytes, "
                + String(available) + " present: " + reason
        }
    }

    public struct Iterator: IteratorProtocol {
        var reader: ByteReader
        /// Set once the walk meets a structure that does not fit.
        public private(set) var malformation: Malformation?

        init(_ bytes: UnsafeRawBufferPointer) { reader = ByteReader(bytes) }

        public mutating func next() -> Structure? {
            let offset = reader.position
            guard malformation == nil, let length = reader.readU8(), length > 0 else {
                reader.position = reader.bytes.count
                return nil
            }
            guard let body = reader.readBytes(Int(length)) else {
                let available = reader.remaining
                malformation = Malformation(
                    offset: offset, declaredLength: length, available: available,
                    reason: available == 0 ? "length byte without a type" : "runs past the end of the data")
                reader.position = reader.bytes.count
                return nil
            }
            return Structure(type: ADType(rawValue: body[0]), data: UnsafeRawBufferPointer(rebasing: body[1...]),
                             offset: offset)
        }
    }

    public func makeIterator() -> Iterator { Iterator(bytes) }

    /// The structure that stopped the walk, or nil when the data is well formed.
    public var malformation: Malformation? {
        var it = makeIterator()
        while it.next() != nil {}
        return it.malformation
    }

    public var isMalformed: Bool { malformation != nil }

    /// The data of the first structure of `type`.
    public func first(_ type: ADType) -> UnsafeRawBufferPointer? {
        for s in self where s.type == type { return s.data }
        return nil
    }
}
