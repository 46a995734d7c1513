/// A point in time as nanoseconds since the Unix epoch. Integer, so conversions from btsnoop (µs since year 0)
/// and pcap (s + µs/ns) are exact.
public struct Timestamp: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    /// Times are clamped to ±(2⁶² − 1) ns (years 1824 to 2116): a corrupt capture's absurd timestamps stay absurd
    /// but the difference of any two always fits in an Int64 (2⁶³ itself would not), so no arithmetic on them
    /// can overflow.
    public static let limit: Int64 = (1 << 62) - 1

    @inlinable public init(nanoseconds: Int64) {
        self.nanoseconds = min(max(nanoseconds, -Self.limit), Self.limit)
    }
    @inlinable public init(seconds: Int64, nanoseconds: Int64) {
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflow2) = whole.addingReportingOverflow(nanoseconds)
        self.init(nanoseconds: overflow || overflow2 ? (seconds < 0 ? -Self.limit : Self.limit) : sum)
    }
    @inlinable public init(unixMicroseconds us: Int64) {
        let (v, overflow) = us.multipliedReportingOverflow(by: 1000)
        self.init(nanoseconds: overflow ? (us < 0 ? -Self.limit : Self.limit) : v)
    }

    /// This time moved by `delta` nanoseconds, saturating at the limits.
    @inlinable public func adding(nanoseconds delta: Int64) -> Timestamp {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(delta)
        return Timestamp(nanoseconds: overflow ? (delta < 0 ? -Self.limit : Self.limit) : sum)
    }

    public var seconds: Double { Double(nanoseconds) / 1e9 }
    public var microseconds: Int64 { nanoseconds / 1000 }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func - (a: Timestamp, b: Timestamp) -> Duration { .nanoseconds(a.nanoseconds &- b.nanoseconds) }

    /// Exact decimal Unix seconds with `digits` fraction digits (6 for µs sources, 9 for ns),
    /// trailing zeros removed: "1552223479.7078".
    public func decimalString(fractionDigits digits: Int = 6) -> String {
        let negative = nanoseconds < 0
        let magnitude = nanoseconds.magnitude
        let whole = magnitude / 1_000_000_000
        var frac = magnitude % 1_000_000_000
        var width = 9
        while width > digits { frac /= 10; width -= 1 }
        var fracText = String(frac)
        fracText = String(repeating: "0", count: width - fracText.count) + fracText
        while fracText.hasSuffix("0") { fracText.removeLast() }
        let sign = negative ? "-" : ""
        return fracText.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fracText)"
    }
}

/// Conversions for btsnoop timestamps: microseconds since 0000-01-01 ("nominal Gregorian"); the offset to the
/// Unix epoch is 0x00DCDDB30F2F8000 (Wireshark KUnixTimeBase, Android BTSNOOP_EPOCH_DELTA).
public enum BTSnoopTime {
    public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    @inlinable public static func timestamp(fromBTSnoop raw: Int64) -> Timestamp {
        // A corrupt value near Int64.min must clamp to the earliest time, not wrap to the latest.
        let (micros, overflow) = raw.subtractingReportingOverflow(unixEpochOffset)
        return Timestamp(unixMicroseconds: overflow ? .min : micros)
    }

    @inlinable public static func btsnoopValue(_ t: Timestamp) -> Int64 {
        t.nanoseconds / 1000 &+ unixEpochOffset
    }
}
