import BTWire

/// LLData of a CONNECT_IND or AUX_CONNECT_REQ: everything a sniffer needs to follow the new connection
/// [Core Vol 6 Part B §2.3.3.1].
///
///     AA u32 · CRCInit u24 · WinSize u8 · WinOffset u16 · Interval u16 · Latency u16 · Timeout u16 ·
///     ChM 5 bytes · Hop:5 SCA:3
public struct LLConnectionRequestData: Equatable, Sendable {
    public static let length = 22
    /// Units of WinSize, WinOffset and Interval (1.25 ms) and of Timeout (10 ms), in µs.
    public static let slotMicroseconds = 1250
    public static let timeoutUnitMicroseconds = 10_000
    /// The shortest connection interval, in 1.25 ms units (7.5 ms) [Core Vol 6 Part B §4.5.1].
    public static let minimumInterval: UInt16 = 6
    static let hopMask: UInt8 = 0x1F
    static let scaShift: UInt8 = 5

    public var accessAddress: UInt32
    public var crcInit: UInt32
    public var windowSize: UInt8
    public var windowOffset: UInt16
    public var interval: UInt16
    public var latency: UInt16
    public var timeout: UInt16
    /// Bit i set = data channel i used (37 bits).
    public var channelMap: UInt64
    public var hop: UInt8
    /// Sleep clock accuracy, 0 (251–500 ppm) … 7 (0–20 ppm).
    public var sleepClockAccuracy: UInt8

    public init?(_ bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        guard bytes.count >= Self.length, let aa = r.readU32(), let crc = r.readU24(), let winSize = r.readU8(),
              let winOffset = r.readU16(), let interval = r.readU16(), let latency = r.readU16(),
              let timeout = r.readU16(), let map = r.readChannelMap(), let hopSCA = r.readU8()
        else { return nil }
        accessAddress = aa
        crcInit = crc
        windowSize = winSize
        windowOffset = winOffset
        self.interval = interval
        self.latency = latency
        self.timeout = timeout
        channelMap = map
        hop = hopSCA & Self.hopMask
        sleepClockAccuracy = hopSCA >> Self.scaShift
    }

    /// The connection interval in µs.
    public var intervalMicroseconds: Int { Int(interval) * Self.slotMicroseconds }
    public var timeoutMicroseconds: Int { Int(timeout) * Self.timeoutUnitMicroseconds }
}

/// Channel maps (ChM): 37 data channels, bit i = channel i.
public enum LLChannelMap {
    public static let length = 5
    public static let dataChannels = 37
    public static let validBits: UInt64 = (1 << 37) - 1

    public static func usedChannels(_ map: UInt64) -> Int { (map & validBits).nonzeroBitCount }
}

extension ByteReader {
    /// A 5-byte channel map as a bit set.
    mutating func readChannelMap() -> UInt64? {
        guard let bytes = readBytes(LLChannelMap.length) else { return nil }
        var map: UInt64 = 0
        for i in 0..<LLChannelMap.length { map |= UInt64(bytes[i]) << (8 * UInt64(i)) }
        return map
    }
}
