import BTWire

/// The common extended advertising payload's header [Core Vol 6 Part B §2.3.4]: length and AdvMode, then a
/// flags byte saying which fields follow, in this order: AdvA, TargetA, CTEInfo, ADI, AuxPtr, SyncInfo,
/// TxPower. What remains of the header is ACAD; AdvData fills the rest of the payload.
public struct LLExtendedHeader {
    static let lengthMask: UInt8 = 0x3F
    static let advModeShift: UInt8 = 6
    static let hasAdvA: UInt8 = 0x01
    static let hasTargetA: UInt8 = 0x02
    static let hasCTEInfo: UInt8 = 0x04
    static let hasADI: UInt8 = 0x08
    static let hasAuxPtr: UInt8 = 0x10
    static let hasSyncInfo: UInt8 = 0x20
    static let hasTxPower: UInt8 = 0x40
    static let syncInfoLength = 18

    /// AdvMode: 0 non-connectable and non-scannable, 1 connectable, 2 scannable.
    public var advMode: UInt8
    public var flags: UInt8
    public var advA: BDAddr?
    public var targetA: BDAddr?
    public var cteInfo: UInt8?
    public var adi: AdvertisingDataInfo?
    public var auxPtr: AuxiliaryPointer?
    public var syncInfo: SyncInfo?
    public var txPower: Int8?
    public var acad: UnsafeRawBufferPointer
    public var advData: UnsafeRawBufferPointer

    /// Advertising Data Info: data id (bits 0–11) and set id (12–15).
    public struct AdvertisingDataInfo: Equatable, Sendable {
        public var dataID: UInt16
        public var setID: UInt8
    }

    /// Where the auxiliary packet goes: channel, clock accuracy, offset and PHY.
    public struct AuxiliaryPointer: Equatable, Sendable {
        static let channelMask: UInt8 = 0x3F
        static let clockAccuracyBit: UInt8 = 0x40
        static let offsetUnitsBit: UInt8 = 0x80
        static let offsetMask: UInt16 = 0x1FFF
        static let phyShift: UInt16 = 13
        static let smallUnitMicroseconds = 30
        static let largeUnitMicroseconds = 300

        public var channel: UInt8
        /// CA: 0–50 ppm when set, 51–500 ppm otherwise.
        public var accurateClock: Bool
        public var offset: UInt16
        /// Units of `offset`, 30 or 300 µs.
        public var offsetUnitMicroseconds: Int
        public var phy: LLPHY

        public var offsetMicroseconds: Int { Int(offset) * offsetUnitMicroseconds }
    }

    /// A periodic advertising train to synchronise to.
    public struct SyncInfo: Equatable, Sendable {
        public var offset: UInt16
        public var interval: UInt16
        public var channelMap: UInt64
        public var sleepClockAccuracy: UInt8
        public var accessAddress: UInt32
        public var crcInit: UInt32
        public var eventCounter: UInt16
    }

    /// Parses the payload of an extended PDU (type 7 or 8); nil when a declared field runs past the payload.
    public init?(_ payload: UnsafeRawBufferPointer) {
        guard let first = payload.first else { return nil }
        let headerLength = Int(first & Self.lengthMask)
        advMode = first >> Self.advModeShift
        guard payload.count >= 1 + headerLength else { return nil }
        let header = UnsafeRawBufferPointer(rebasing: payload[1..<(1 + headerLength)])
        advData = UnsafeRawBufferPointer(rebasing: payload[(1 + headerLength)...])
        var r = ByteReader(header)
        flags = headerLength > 0 ? (r.readU8() ?? 0) : 0
        if flags & Self.hasAdvA != 0 { guard let a = r.readAddress() else { return nil }; advA = a }
        if flags & Self.hasTargetA != 0 { guard let a = r.readAddress() else { return nil }; targetA = a }
        if flags & Self.hasCTEInfo != 0 { guard let c = r.readU8() else { return nil }; cteInfo = c }
        if flags & Self.hasADI != 0 {
            guard let v = r.readU16() else { return nil }
            adi = AdvertisingDataInfo(dataID: v & 0x0FFF, setID: UInt8(v >> 12))
        }
        if flags & Self.hasAuxPtr != 0 {
            guard let b = r.readU8(), let v = r.readU16() else { return nil }
            typealias P = AuxiliaryPointer
            auxPtr = P(channel: b & P.channelMask, accurateClock: b & P.clockAccuracyBit != 0, offset: v & P.offsetMask,
                       offsetUnitMicroseconds: b & P.offsetUnitsBit != 0 ? P.largeUnitMicroseconds : P.smallUnitMicroseconds,
                       phy: LLPHY(rawValue: UInt8(truncatingIfNeeded: v >> P.phyShift)) ?? .unknown)
        }
        if flags & Self.hasSyncInfo != 0 {
            guard r.remaining >= Self.syncInfoLength, let offset = r.readU16(), let interval = r.readU16(),
                  let map = r.readChannelMap(), let aa = r.readU32(), let crc = r.readU24(), let counter = r.readU16()
            else { return nil }
            // The SCA shares the channel map's last byte (bits 5–7 of byte 4).
            syncInfo = SyncInfo(offset: offset, interval: interval, channelMap: map & LLChannelMap.validBits,
                                sleepClockAccuracy: UInt8(truncatingIfNeeded: map >> 37), accessAddress: aa,
                                crcInit: crc, eventCounter: counter)
        }
        if flags & Self.hasTxPower != 0 { guard let t = r.read(Int8.self) else { return nil }; txPower = t }
        acad = r.readRest()
    }
}
