/// A Bluetooth UUID. 16- and 32-bit forms are aliases of the Bluetooth Base UUID
/// 0000XXXX-0000-1000-8000-00805F9B34FB; 128-bit UUIDs travel byte-reversed on the wire.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Big-endian (text order) halves of the 128-bit value.
    public let high: UInt64
    public let low: UInt64

    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    static let baseHighMask: UInt64 = 0x0000_0000_0000_1000

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init(uuid16: UInt16) { self.init(uuid32: UInt32(uuid16)) }
    public init(uuid32: UInt32) { self.init(high: UInt64(uuid32) << 32 | Self.baseHighMask, low: Self.baseLow) }

    /// From little-endian wire bytes of length 2, 4 or 16.
    public init?(littleEndianBytes b: UnsafeRawBufferPointer) {
        switch b.count {
        case 2: self.init(uuid16: UInt16(b[0]) | UInt16(b[1]) << 8)
        case 4: self.init(uuid32: UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24)
        case 16:
            var hi: UInt64 = 0
            var lo: UInt64 = 0
            for i in 0..<8 { lo |= UInt64(b[i]) << (8 * UInt64(i)) }
            for i in 0..<8 { hi |= UInt64(b[8 + i]) << (8 * UInt64(i)) }
            self.init(high: hi, low: lo)
        default: return nil
        }
    }

    /// From big-endian (text order) bytes, as iBeacon carries its proximity UUID.
    public init?(bigEndianBytes b: UnsafeRawBufferPointer) {
        guard b.count == 16 else { return nil }
        var hi: UInt64 = 0
        var lo: UInt64 = 0
        for i in 0..<8 { hi = hi << 8 | UInt64(b[i]) }
        for i in 8..<16 { lo = lo << 8 | UInt64(b[i]) }
        self.init(high: hi, low: lo)
    }

    /// Parses "180d", "0x180D", "0000180d-0000-1000-8000-00805f9b34fb".
    public init?(_ text: String) {
        var t = text.lowercased()
        if t.hasPrefix("0x") { t.removeFirst(2) }
        if t.count == 4, let v = UInt16(t, radix: 16) { self.init(uuid16: v); return }
        if t.count == 8, let v = UInt32(t, radix: 16) { self.init(uuid32: v); return }
        let hex = t.filter { $0 != "-" }
        guard hex.count == 32, let hi = UInt64(hex.prefix(16), radix: 16), let lo = UInt64(hex.suffix(16), radix: 16)
        else { return nil }
        self.init(high: hi, low: lo)
    }

    public var isBluetoothBase: Bool { low == Self.baseLow && high & 0xFFFF_FFFF == Self.baseHighMask }

    /// The 16-bit alias, when this UUID is one.
    public var uuid16: UInt16? {
        guard isBluetoothBase, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    public var uuid32: UInt32? {
        guard isBluetoothBase else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// Short form for SIG UUIDs ("180d"), full lowercase form otherwise.
    public var description: String {
        if let s = uuid16 { return String(Hex.u16(s).dropFirst(2)) }
        if let s = uuid32 { return String(Hex.format(s, width: 8).dropFirst(2)) }
        return fullString
    }

    public var fullString: String {
        let h = String(Hex.format(high, width: 16).dropFirst(2))
        let l = String(Hex.format(low, width: 16).dropFirst(2))
        let a = h.prefix(8), b = h.dropFirst(8).prefix(4), c = h.suffix(4)
        let d = l.prefix(4), e = l.suffix(12)
        return "\(a)-\(b)-\(c)-\(d)-\(e)"
    }

    /// The Bluetooth SIG name of a 16-bit UUID (services, characteristics, descriptors, declarations).
    public var name: String? {
        guard let s = uuid16 else { return nil }
        return AssignedNumbers.uuidName(s)
    }

    /// A 16-bit UUID from the range the SIG allocates to member companies and other bodies (0xFC00–0xFFFF):
    /// service UUIDs only.
    public var isMemberServiceUUID: Bool { uuid16.map { $0 >= Self.firstMemberUUID } ?? false }
    static let firstMemberUUID: UInt16 = 0xFC00

    /// The SIG name for this UUID as a characteristic or descriptor. A member service UUID there is a vendor's own
    /// choice — generic modules use 0xFFF1–0xFFF4 — not what the SIG allocated it for, so it has no name.
    public var attributeName: String? { isMemberServiceUUID ? nil : name }

    public static func < (a: BluetoothUUID, b: BluetoothUUID) -> Bool { (a.high, a.low) < (b.high, b.low) }

    // GATT declarations and descriptors (Core Vol 3 Part G §3).
    public static let primaryService = BluetoothUUID(uuid16: 0x2800)
    public static let secondaryService = BluetoothUUID(uuid16: 0x2801)
    public static let include = BluetoothUUID(uuid16: 0x2802)
    public static let characteristic = BluetoothUUID(uuid16: 0x2803)
    public static let clientCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2902)
    // The services every GATT server has, which the stacks read and subscribe to themselves (Core Vol 3 Part C
    // §12, Part G §7), and the GATT service's Service Changed characteristic.
    public static let genericAccessService = BluetoothUUID(uuid16: 0x1800)
    public static let genericAttributeService = BluetoothUUID(uuid16: 0x1801)
    public static let serviceChanged = BluetoothUUID(uuid16: 0x2A05)
    /// GAP and GATT: the stack's own services, not the app's.
    public var isStackService: Bool { self == .genericAccessService || self == .genericAttributeService }
}
