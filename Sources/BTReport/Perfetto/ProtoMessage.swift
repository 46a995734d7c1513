/// One protocol-buffer message being encoded (the wire format of developers.google.com/protocol-buffers
/// "Encoding"): fields appended as tag + value, nested messages as length-delimited bytes. Enough for the handful
/// of Perfetto messages btlens writes, so no protobuf library is needed.
struct ProtoMessage {
    /// Wire types (the low three bits of a tag).
    enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    private(set) var bytes: [UInt8] = []

    init() {}

    mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func tag(_ field: Int, _ type: WireType) { appendVarint(UInt64(field) << 3 | type.rawValue) }

    /// uint32, uint64, enum and bool fields.
    mutating func uint(_ field: Int, _ value: UInt64) {
        tag(field, .varint)
        appendVarint(value)
    }

    /// int32 and int64 fields: negative values take ten bytes (two's complement), as the format says.
    mutating func int(_ field: Int, _ value: Int64) {
        tag(field, .varint)
        appendVarint(UInt64(bitPattern: value))
    }

    mutating func bool(_ field: Int, _ value: Bool) { uint(field, value ? 1 : 0) }

    mutating func double(_ field: Int, _ value: Double) { fixed64(field, value.bitPattern) }

    mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, .fixed64)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func string(_ field: Int, _ value: String) {
        tag(field, .lengthDelimited)
        var s = value
        s.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func message(_ field: Int, _ value: ProtoMessage) {
        tag(field, .lengthDelimited)
        appendVarint(UInt64(value.bytes.count))
        bytes.append(contentsOf: value.bytes)
    }
}
