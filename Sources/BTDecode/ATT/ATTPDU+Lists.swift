import BTWire

// The list parameters of ATT responses. Each is a `Sequence` over bytes borrowed from the PDU whose iterator
// reads entries in place, so walking a discovery response never allocates. A partial entry at the end is not
// yielded; fixed-size lists expose it as `trailingBytes` so a checker can flag it.

extension ATTPDU {
    /// Find Information Response data (0x05): format 1 is {handle, uuid16}…, format 2 {handle, uuid128}….
    public struct InformationData: Sequence {
        /// 1 = 16-bit UUIDs, 2 = 128-bit UUIDs (anything else is rejected as malformed when decoding).
        public let format: UInt8
        public let bytes: UnsafeRawBufferPointer

        public init(format: UInt8, bytes: UnsafeRawBufferPointer) {
            self.format = format
            self.bytes = bytes
        }

        /// One handle and UUID of a Find Information Response.
        public struct Entry {
            public let handle: UInt16
            public let uuid: BluetoothUUID
        }

        /// 2 + the UUID size of the format.
        public var entryLength: Int { format == 2 ? 18 : 4 }
        public var count: Int { bytes.count / entryLength }
        public var underestimatedCount: Int { count }
        public var trailingBytes: UnsafeRawBufferPointer { ATTFixedRecords.trailing(bytes, entryLength) }

        public struct Iterator: IteratorProtocol {
            var records: ATTFixedRecords
            public mutating func next() -> Entry? {
                guard let record = records.next() else { return nil }
                let uuidBytes = UnsafeRawBufferPointer(rebasing: record[2...])
                guard let uuid = BluetoothUUID(littleEndianBytes: uuidBytes) else { return nil }
                return Entry(handle: ATTFixedRecords.u16(record, 0), uuid: uuid)
            }
        }

        public func makeIterator() -> Iterator { Iterator(records: ATTFixedRecords(bytes, entryLength)) }
    }

    /// Find By Type Value Response list (0x07): {found attribute handle, group end handle}….
    public struct HandlesInformationList: Sequence {
        public let bytes: UnsafeRawBufferPointer
        public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// One found attribute handle and its group's end of a Find By Type Value Response.
        public struct Entry {
            public let foundAttributeHandle: UInt16
            public let groupEndHandle: UInt16
        }

        public static let entryLength = 4
        public var count: Int { bytes.count / Self.entryLength }
        public var underestimatedCount: Int { count }
        public var trailingBytes: UnsafeRawBufferPointer { ATTFixedRecords.trailing(bytes, Self.entryLength) }

        public struct Iterator: IteratorProtocol {
            var records: ATTFixedRecords
            public mutating func next() -> Entry? {
                guard let record = records.next() else { return nil }
                return Entry(foundAttributeHandle: ATTFixedRecords.u16(record, 0),
                             groupEndHandle: ATTFixedRecords.u16(record, 2))
            }
        }

        public func makeIterator() -> Iterator { Iterator(records: ATTFixedRecords(bytes, Self.entryLength)) }
    }

    /// Read By Type Response attribute data (0x09): `length`, then {handle, value[length−2]}….
    public struct AttributeDataList: Sequence {
        /// A handle alone.
        public static let minimumLength: UInt8 = 2
        /// Length of each entry (handle + value); at least 2 once decoded.
        public let length: UInt8
        public let bytes: UnsafeRawBufferPointer

        public init(length: UInt8, bytes: UnsafeRawBufferPointer) {
            self.length = length
            self.bytes = bytes
        }

        /// One handle and value of a Read By Type Response.
        public struct Entry {
            public let handle: UInt16
            public let value: UnsafeRawBufferPointer

            /// The value as a characteristic declaration, when it has that shape (GATT Read By Type 0x2803).
            public var characteristicDeclaration: CharacteristicDeclaration? { CharacteristicDeclaration(value) }
        }

        public var count: Int { length < Self.minimumLength ? 0 : bytes.count / Int(length) }
        public var underestimatedCount: Int { count }
        public var trailingBytes: UnsafeRawBufferPointer {
            length < Self.minimumLength ? bytes : ATTFixedRecords.trailing(bytes, Int(length))
        }

        /// Whether every entry reads as a characteristic declaration whose value handle directly follows it, as
        /// GATT requires (Core Vol 3 Part G §3.3). The response does not name the request's type, so this is
        /// how `fields` decides to decode entries as declarations when it is not told the type.
        public var looksLikeCharacteristicDeclarations: Bool {
            guard length == 7 || length == 21, count > 0 else { return false }
            return allSatisfy { entry in
                guard let decl = entry.characteristicDeclaration else { return false }
                return entry.handle != 0xFFFF && decl.valueHandle == entry.handle &+ 1
            }
        }

        public struct Iterator: IteratorProtocol {
            var records: ATTFixedRecords
            public mutating func next() -> Entry? {
                guard let record = records.next() else { return nil }
                return Entry(handle: ATTFixedRecords.u16(record, 0), value: UnsafeRawBufferPointer(rebasing: record[2...]))
            }
        }

        public func makeIterator() -> Iterator {
            Iterator(records: ATTFixedRecords(length < Self.minimumLength ? UnsafeRawBufferPointer(start: nil, count: 0) : bytes,
                                              Int(length)))
        }
    }

    /// Read By Group Type Response attribute data (0x11): `length`, then {handle, end group handle,
    /// value[length−4]}…. For services (0x2800/0x2801) the value is the service UUID.
    public struct AttributeGroupDataList: Sequence {
        /// Two handles and an empty value.
        public static let minimumLength: UInt8 = 4
        public let length: UInt8
        public let bytes: UnsafeRawBufferPointer

        public init(length: UInt8, bytes: UnsafeRawBufferPointer) {
            self.length = length
            self.bytes = bytes
        }

        /// One attribute handle, group end handle and value of a Read By Group Type Response.
        public struct Entry {
            public let handle: UInt16
            public let endGroupHandle: UInt16
            public let value: UnsafeRawBufferPointer
            /// The value as a UUID when it is 2 or 16 bytes (a service declaration).
            public var uuid: BluetoothUUID? {
                value.count == 2 || value.count == 16 ? BluetoothUUID(littleEndianBytes: value) : nil
            }
        }

        public var count: Int { length < Self.minimumLength ? 0 : bytes.count / Int(length) }
        public var underestimatedCount: Int { count }
        public var trailingBytes: UnsafeRawBufferPointer {
            length < Self.minimumLength ? bytes : ATTFixedRecords.trailing(bytes, Int(length))
        }

        public struct Iterator: IteratorProtocol {
            var records: ATTFixedRecords
            public mutating func next() -> Entry? {
                guard let record = records.next() else { return nil }
                return Entry(handle: ATTFixedRecords.u16(record, 0), endGroupHandle: ATTFixedRecords.u16(record, 2),
                             value: UnsafeRawBufferPointer(rebasing: record[4...]))
            }
        }

        public func makeIterator() -> Iterator {
            Iterator(records: ATTFixedRecords(length < Self.minimumLength ? UnsafeRawBufferPointer(start: nil, count: 0) : bytes,
                                              Int(length)))
        }
    }

    /// Read Multiple Variable Response tuples (0x21): {length u16, value}…. The server may cut the last value
    /// short to fit the MTU, so an entry's `value` can be shorter than its `length` (`isTruncated`).
    public struct LengthValueTupleList: Sequence {
        public let bytes: UnsafeRawBufferPointer
        public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// One length-prefixed value of a Read Multiple Variable Response.
        public struct Entry {
            /// The full length of the attribute value.
            public let length: UInt16
            /// The bytes present in this PDU.
            public let value: UnsafeRawBufferPointer
            public var isTruncated: Bool { value.count < Int(length) }
        }

        public var count: Int { reduce(0) { n, _ in n + 1 } }
        /// A lone byte after the last tuple, too short for a length (empty when well formed).
        public var trailingBytes: UnsafeRawBufferPointer {
            var it = makeIterator()
            while it.next() != nil {}
            return it.reader.rest
        }

        public struct Iterator: IteratorProtocol {
            var reader: ByteReader
            public mutating func next() -> Entry? {
                guard let length = reader.readU16() else { return nil }
                let value = reader.readBytes(Swift.min(Int(length), reader.remaining)) ?? reader.readRest()
                return Entry(length: length, value: value)
            }
        }

        public func makeIterator() -> Iterator { Iterator(reader: ByteReader(bytes)) }
    }

    /// Multiple Handle Value Notification tuples (0x23): {handle, length u16, value}…. A tuple whose value runs
    /// past the PDU is yielded with the bytes present (`isTruncated`).
    public struct HandleLengthValueTupleList: Sequence {
        public let bytes: UnsafeRawBufferPointer
        public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// One handle, length and value of a Multiple Handle Value Notification.
        public struct Entry {
            public let handle: UInt16
            public let length: UInt16
            public let value: UnsafeRawBufferPointer
            public var isTruncated: Bool { value.count < Int(length) }
        }

        public var count: Int { reduce(0) { n, _ in n + 1 } }
        /// Bytes after the last tuple, too short for a handle and length (empty when well formed).
        public var trailingBytes: UnsafeRawBufferPointer {
            var it = makeIterator()
            while it.next() != nil {}
            return it.reader.rest
        }

        public struct Iterator: IteratorProtocol {
            var reader: ByteReader
            public mutating func next() -> Entry? {
                guard reader.remaining >= 4, let handle = reader.readU16(), let length = reader.readU16() else {
                    return nil
                }
                let value = reader.readBytes(Swift.min(Int(length), reader.remaining)) ?? reader.readRest()
                return Entry(handle: handle, length: length, value: value)
            }
        }

        public func makeIterator() -> Iterator { Iterator(reader: ByteReader(bytes)) }
    }
}

/// Fixed-size records over borrowed bytes: the shared walker behind the fixed-entry ATT lists.
struct ATTFixedRecords {
    var reader: ByteReader
    let size: Int

    init(_ bytes: UnsafeRawBufferPointer, _ size: Int) {
        reader = ByteReader(bytes)
        self.size = size
    }

    mutating func next() -> UnsafeRawBufferPointer? {
        guard size > 0 else { return nil }
        return reader.readBytes(size)
    }

    /// The bytes after the last whole record.
    static func trailing(_ bytes: UnsafeRawBufferPointer, _ size: Int) -> UnsafeRawBufferPointer {
        guard size > 0 else { return bytes }
        return UnsafeRawBufferPointer(rebasing: bytes[(bytes.count / size * size)...])
    }

    /// A little-endian u16 inside a record known to be long enough.
    static func u16(_ record: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(record[offset]) | UInt16(record[offset + 1]) << 8
    }
}
