import BTWire
import BTDecode

/// A device as advertising reports name it: the 48-bit address plus its address type, packed into one
/// integer so per-report lookups hash a single word instead of a struct.
///
/// Layout: bits 0–47 address, bits 48–55 address type, bit 63 always set (so no key is ever 0, the
/// empty-slot marker of `KeyTable`): a `PackedSighting`'s sender bits, so a sighting is a key once its
/// report-kind bits are cleared.
public struct DeviceKey: Hashable, Sendable, Comparable {
    public let rawValue: UInt64

    @inlinable public init(address: BDAddr, type: AddressType) {
        rawValue = PackedSighting.sender(address: address, type: type)
    }

    init(rawValue: UInt64) { self.rawValue = rawValue }

    public var address: BDAddr { BDAddr(rawValue: rawValue & 0xFFFF_FFFF_FFFF) }
    public var addressType: AddressType { AddressType(rawValue: UInt8(truncatingIfNeeded: rawValue >> 48)) }

    public static func < (a: DeviceKey, b: DeviceKey) -> Bool { a.rawValue < b.rawValue }
}

extension DeviceKey: PackedKey {}
