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

    public var description: String {
        var out = ""
        out.reserveCapacity(17)
        for i in stride(from: 5, through: 0, by: -1) {
            let b = UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(i)))
            out.unicodeScalars.append(UnicodeScalar(Hex.digits[Int(b >> 4)]))
            out.unicodeScalars.append(UnicodeScalar(Hex.digits[Int(b & 0xF)]))
            if i > 0 { out += ":" }
        }
        return out.uppercased()
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
