/// A 48-bit Bluetooth device address. On the wire it is little-endian; it prints most significant byte first,
/// as every Bluetooth tool shows it.
public struct BDAddr: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    @inlinable public init(littleEndianBytes b: UnsafeRawBufferPointer) {
        var v: UInt64 = 0
        for i in 0..<min(6, b.count) { v |= UInt64(b[i]) << (8 * UInt64(i)) }
        self.rawValue = v
    }

    /// Parses "AA:BB:CC:DD:EE:FF".
    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 6 else { return nil }
        var v: UInt64 = 0
        for p in parts {
            guard p.count == 2, let b = UInt8(p, radix: 16) else { return nil }
            v = v << 8 | UInt64(b)
        }
        self.rawValue = v
    }

    /// Little-endian wire bytes.
    public var bytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) } }

    /// "AA:BB:CC:DD:EE:FF", written as 17 ASCII bytes in one step: it is printed for every advertiser and
    /// many decoded packets.
    public var description: String {
        String(unsafeUninitializedCapacity: 17) { out in
            for i in 0..<6 {
                let b = Int(truncatingIfNeeded: rawValue >> (8 * UInt64(5 - i))) & 0xFF
                out[3 * i] = Hex.upperDigits[b >> 4]
                out[3 * i + 1] = Hex.upperDigits[b & 0xF]
                if i < 5 { out[3 * i + 2] = UInt8(ascii: ":") }
            }
            return 17
        }
    }

    public static func < (a: BDAddr, b: BDAddr) -> Bool { a.rawValue < b.rawValue }
}

/// Address type as LE events report it (Core Vol 4 Part E §7.7.65.1 and .10).
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public static var `public`: AddressType { AddressType(rawValue: 0x00) }
    @inlinable public static var random: AddressType { AddressType(rawValue: 0x01) }
    @inlinable public static var publicIdentity: AddressType { AddressType(rawValue: 0x02) }
    @inlinable public static var randomIdentity: AddressType { AddressType(rawValue: 0x03) }
    @inlinable public static var anonymous: AddressType { AddressType(rawValue: 0xFF) }

    public var description: String {
        switch rawValue {
        case 0x00: "public"
        case 0x01: "random"
        case 0x02: "public-identity"
        case 0x03: "random-identity"
        case 0xFF: "anonymous"
        default: Hex.u8(rawValue)
        }
    }
}
