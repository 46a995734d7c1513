/// Conversions from time to the units HCI parameters use (Core Vol 4 Part E §7.8), so scenarios say
/// "7.5 ms" instead of a bare 6. Every input is in microseconds, so no value passes through floating point.
public enum HCIUnits {
    /// Scan interval/window and advertising interval unit: 0.625 ms.
    public static let slotMicroseconds: Int64 = 625
    /// Connection interval unit: 1.25 ms.
    public static let connectionIntervalMicroseconds: Int64 = 1_250
    /// Supervision timeout unit: 10 ms.
    public static let supervisionTimeoutMicroseconds: Int64 = 10_000
    /// Extended scan duration unit: 10 ms.
    public static let scanDurationMicroseconds: Int64 = 10_000

    public static func slots(microseconds us: Int64) -> UInt16 { UInt16(clamping: us / slotMicroseconds) }
    public static func slots24(microseconds us: Int64) -> UInt32 { UInt32(clamping: us / slotMicroseconds) }
    public static func connectionInterval(microseconds us: Int64) -> UInt16 {
        UInt16(clamping: us / connectionIntervalMicroseconds)
    }
    public static func supervisionTimeout(microseconds us: Int64) -> UInt16 {
        UInt16(clamping: us / supervisionTimeoutMicroseconds)
    }

    /// A connection interval parameter back in microseconds.
    public static func microseconds(connectionInterval units: UInt16) -> Int64 {
        Int64(units) * connectionIntervalMicroseconds
    }
}

/// Time spans in microseconds, the resolution of btsnoop and PacketLogger.
public enum Micros {
    public static let perMillisecond: Int64 = 1_000
    public static let perSecond: Int64 = 1_000_000

    public static func ms(_ v: Int64) -> Int64 { v * perMillisecond }
    public static func seconds(_ v: Int64) -> Int64 { v * perSecond }
}
