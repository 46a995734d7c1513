import BTWire

/// Builds protocol bytes. Bluetooth fields (HCI, L2CAP, ATT, SMP, AD) are little-endian, so that is what the
/// unadorned methods write; the few big-endian fields (iBeacon major/minor, container headers) say so in
/// their name. Reusable: `reset()` keeps the capacity, so a hot loop does not allocate.
public struct ByteWriter: Sendable {
    /// Settable only so the @inlinable writers can append; treat as read-only.
    public var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    @inlinable public mutating func u8(_ v: UInt8) { bytes.append(v) }
    @inlinable public mutating func i8(_ v: Int8) { bytes.append(UInt8(bitPattern: v)) }

    @inlinable public mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    @inlinable public mutating func u16BE(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    /// 24-bit little-endian (extended advertising intervals).
    @inlinable public mutating func u24(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
    }

    @inlinable public mutating func u32(_ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    @inlinable public mutating func u32BE(_ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }

    @inlinable public mutating func u64(_ v: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    @inlinable public mutating func u64BE(_ v: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    @inlinable public mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
    @inlinable public mutating func append(_ other: ArraySlice<UInt8>) { bytes.append(contentsOf: other) }
    @inlinable public mutating func append(_ other: UnsafeRawBufferPointer) { bytes.append(contentsOf: other) }

    /// `count` copies of `value` (padding).
    public mutating func fill(_ value: UInt8, count: Int) {
        guard count > 0 else { return }
        bytes.append(contentsOf: repeatElement(value, count: count))
    }

    /// A device address in wire (little-endian) order.
    public mutating func address(_ a: BDAddr) {
        for i in 0..<6 { bytes.append(UInt8(truncatingIfNeeded: a.rawValue >> (8 * UInt64(i)))) }
    }

    /// A UUID in its shortest ATT form: 2 bytes for a SIG 16-bit alias, else 16 bytes byte-reversed.
    public mutating func uuid(_ u: BluetoothUUID) {
        if let short = u.uuid16 { u16(short) } else { uuid128(u) }
    }

    /// The full 128-bit form, byte-reversed as ATT, AD and SMP carry it.
    public mutating func uuid128(_ u: BluetoothUUID) {
        u64(u.low)
        u64(u.high)
    }

    /// The 128-bit form in text order (iBeacon's proximity UUID).
    public mutating func uuid128BigEndian(_ u: BluetoothUUID) {
        u64BE(u.high)
        u64BE(u.low)
    }

    /// Writes a one-byte length, then `body`, then patches the length to what `body` wrote.
    public mutating func lengthPrefixed8(_ body: (inout ByteWriter) -> Void) {
        let at = bytes.count
        bytes.append(0)
        body(&self)
        bytes[at] = UInt8(truncatingIfNeeded: bytes.count - at - 1)
    }

    /// As `lengthPrefixed8`, with a little-endian u16 length.
    public mutating func lengthPrefixed16(_ body: (inout ByteWriter) -> Void) {
        let at = bytes.count
        bytes.append(0)
        bytes.append(0)
        body(&self)
        let length = bytes.count - at - 2
        bytes[at] = UInt8(truncatingIfNeeded: length)
        bytes[at + 1] = UInt8(truncatingIfNeeded: length >> 8)
    }

    /// Builds a byte array in one expression.
    public static func build(capacity: Int = 64, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        var w = ByteWriter(capacity: capacity)
        body(&w)
        return w.bytes
    }
}
