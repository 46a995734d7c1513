import BTWire

/// One advertising report from an LE Advertising Report (0x02) or LE Extended Advertising Report (0x0D) event,
/// normalised to one shape. `data` is borrowed from the event.
public struct AdvertisingReport {
    /// Legacy `evt_type` (0 ADV_IND … 4 SCAN_RSP) or the extended 16-bit event type.
    public var eventType: UInt16
    public var isExtended: Bool
    public var addressType: AddressType
    public var address: BDAddr
    /// dBm; nil when the controller reports 127 (not available).
    public var rssi: Int8?
    public var txPower: Int8?
    public var primaryPHY: UInt8?
    public var secondaryPHY: UInt8?
    public var advertisingSID: UInt8?
    public var periodicAdvertisingInterval: UInt16?
    public var data: UnsafeRawBufferPointer

    public static let rssiNotAvailable: Int8 = 127

    /// Legacy event types (Core Vol 4 Part E §7.7.65.2).
    public enum LegacyType {
        public static let advInd: UInt16 = 0
        public static let advDirectInd: UInt16 = 1
        public static let advScanInd: UInt16 = 2
        public static let advNonconnInd: UInt16 = 3
        public static let scanRsp: UInt16 = 4
    }

    /// Extended event type bits (§7.7.65.13).
    public enum ExtendedTypeBits {
        public static let connectable: UInt16 = 0x01
        public static let scannable: UInt16 = 0x02
        public static let directed: UInt16 = 0x04
        public static let scanResponse: UInt16 = 0x08
        public static let legacy: UInt16 = 0x10
        public static let dataStatusShift: UInt16 = 5
        public static let dataStatusMask: UInt16 = 0x3
    }

    public var isConnectable: Bool {
        isExtended ? eventType & ExtendedTypeBits.connectable != 0
            : eventType == LegacyType.advInd || eventType == LegacyType.advDirectInd
    }

    public var isScanResponse: Bool {
        isExtended ? eventType & ExtendedTypeBits.scanResponse != 0 : eventType == LegacyType.scanRsp
    }

    /// 0 complete, 1 more to come, 2 truncated (extended reports only).
    public var dataStatus: UInt8 {
        isExtended ? UInt8((eventType >> ExtendedTypeBits.dataStatusShift) & ExtendedTypeBits.dataStatusMask) : 0
    }

    public var typeName: String {
        if isExtended {
            var parts: [String] = []
            if eventType & ExtendedTypeBits.legacy != 0 { parts.append("legacy") }
            if eventType & ExtendedTypeBits.connectable != 0 { parts.append("connectable") }
            if eventType & ExtendedTypeBits.scannable != 0 { parts.append("scannable") }
            if eventType & ExtendedTypeBits.directed != 0 { parts.append("directed") }
            if eventType & ExtendedTypeBits.scanResponse != 0 { parts.append("scan-response") }
            if dataStatus == 1 { parts.append("incomplete") }
            if dataStatus == 2 { parts.append("truncated") }
            return parts.isEmpty ? "non-connectable" : parts.joined(separator: ",")
        }
        switch eventType {
        case LegacyType.advInd: return "ADV_IND"
        case LegacyType.advDirectInd: return "ADV_DIRECT_IND"
        case LegacyType.advScanInd: return "ADV_SCAN_IND"
        case LegacyType.advNonconnInd: return "ADV_NONCONN_IND"
        case LegacyType.scanRsp: return "SCAN_RSP"
        default: return Hex.u8(UInt8(truncatingIfNeeded: eventType))
        }
    }
}

/// The sender and kind of one advertising report.
public struct AdvertisingSighting {
    public var address: BDAddr
    public var addressType: AddressType
    /// As `AdvertisingReport.eventType`.
    public var eventType: UInt16
    public var isExtended: Bool

    @inlinable init(address: BDAddr, addressType: AddressType, eventType: UInt16, isExtended: Bool) {
        self.address = address
        self.addressType = addressType
        self.eventType = eventType
        self.isExtended = isExtended
    }

    @inlinable public var isScanResponse: Bool {
        isExtended ? eventType & 0x08 != 0 : eventType == 4  // ExtendedTypeBits.scanResponse, LegacyType.scanRsp
    }
}

/// Who sent a report and what kind it was, in one word: bits 0–47 the address, 48–55 the address type, bit 56
/// set for a scan response, bit 57 for an extended report, bit 63 always set (so no sighting is 0). What
/// counting reports per device reads, small enough to hand to another thread (8 bytes a report instead of
/// the event's tens).
public struct PackedSighting: Sendable {
    public let rawValue: UInt64

    public static let scanResponseBit: UInt64 = 1 << 56
    public static let extendedBit: UInt64 = 1 << 57
    public static let alwaysSetBit: UInt64 = 1 << 63

    @inlinable @inline(__always) public init(rawValue: UInt64) { self.rawValue = rawValue }

    @inlinable @inline(__always) public init(_ s: AdvertisingSighting) {
        rawValue = Self.sender(address: s.address, type: s.addressType)
            | (s.isScanResponse ? Self.scanResponseBit : 0) | (s.isExtended ? Self.extendedBit : 0)
    }

    /// The sender's bits alone: the one definition of the layout, which the scan tracker's device keys share.
    @inlinable @inline(__always) public static func sender(address: BDAddr, type: AddressType) -> UInt64 {
        address.rawValue | UInt64(type.rawValue) << 48 | alwaysSetBit
    }

    /// 1 or 0, to be added without a branch.
    @inlinable public var scanResponse: Int { Int(truncatingIfNeeded: rawValue >> 56 & 1) }
    @inlinable public var extended: Int { Int(truncatingIfNeeded: rawValue >> 57 & 1) }
    /// The sender alone: address, address type and the always-set bit.
    @inlinable public var senderBits: UInt64 { rawValue & ~(Self.scanResponseBit | Self.extendedBit) }
}

/// Walks the reports of an LE (Extended) Advertising Report event without allocating. Legacy reports are read
/// sequentially, as BlueZ does (`evt_type, addr_type, addr, data_len, data, rssi` per report).
///
/// This runs for every report of a scanning capture (most of its records), so each report costs one bounds
/// check for its fixed part and one for its data, then plain loads at known offsets.
public struct AdvertisingReportIterator: IteratorProtocol, Sequence {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var position: Int
    @usableFromInline let extended: Bool
    public let declaredCount: Int
    @usableFromInline var produced = 0
    @usableFromInline var malformed = false
    /// Set when the event ended before `declaredCount` reports were read.
    public var isMalformed: Bool { malformed }

    /// Fixed part of an extended report before its data (§7.7.65.13).
    public static let extendedFixedLength = 24
    /// Fixed part of a legacy report: type, address type, address, data length, (data), RSSI.
    public static let legacyFixedLength = 10

    /// Offsets in a legacy report (§7.7.65.2, read per report).
    @usableFromInline enum Legacy {
        @usableFromInline static var eventType: Int { 0 }
        @usableFromInline static var addressType: Int { 1 }
        @usableFromInline static var address: Int { 2 }
        @usableFromInline static var dataLength: Int { 8 }
        static let data = 9
    }
    /// Offsets in an extended report (§7.7.65.13).
    @usableFromInline enum Extended {
        @usableFromInline static var eventType: Int { 0 }
        @usableFromInline static var addressType: Int { 2 }
        @usableFromInline static var address: Int { 3 }
        static let primaryPHY = 9, secondaryPHY = 10
        static let sid = 11, txPower = 12, rssi = 13, periodicInterval = 14
        @usableFromInline static var dataLength: Int { 23 }
        static let data = 24
    }

    /// - Parameter parameters: the subevent parameters (after the subevent code).
    @inlinable @inline(__always)
    public init(subevent: LESubevent, parameters: UnsafeRawBufferPointer) {
        bytes = parameters
        position = parameters.isEmpty ? 0 : 1
        extended = subevent == .extendedAdvertisingReport
        declaredCount = parameters.isEmpty ? 0 : Int(parameters[0])
        if parameters.isEmpty { malformed = true }
    }

    // Offsets are added with wrapping arithmetic: `position` never passes `bytes.count` (an event's parameters,
    // at most 255 bytes) and offsets stay inside the report's fixed part, so no sum can overflow, and the
    // overflow checks were a good part of a report's cost.

    /// The length of the report at `position`, or nil when it does not fit in the event.
    @inlinable @inline(__always) func reportLength() -> Int? {
        let available = bytes.count &- position
        let fixed = extended ? 24 : 10  // extendedFixedLength, legacyFixedLength
        guard available >= fixed else { return nil }
        let dataLength = Int(bytes[position &+ (extended ? Extended.dataLength : Legacy.dataLength)])
        guard available >= fixed &+ dataLength else { return nil }
        return fixed &+ dataLength
    }

    @inlinable @inline(__always) func u8(_ offset: Int) -> UInt8 { bytes[position &+ offset] }
    @inline(__always) func i8(_ offset: Int) -> Int8 { Int8(bitPattern: bytes[position &+ offset]) }
    @inlinable @inline(__always) func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: position &+ offset, as: UInt16.self))
    }
    /// The 6-byte address at `offset`; the fixed part always has 2 more bytes after it, so one 8-byte load.
    @inlinable @inline(__always) func address(_ offset: Int) -> BDAddr {
        BDAddr(rawValue: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position &+ offset, as: UInt64.self)))
    }

    /// Who sent the next report and what kind it was, without the rest: what counting reports per device
    /// needs, inlined into the scan tracker's loop.
    @inlinable @inline(__always) public mutating func nextSighting() -> AdvertisingSighting? {
        guard produced < declaredCount, !malformed else { return nil }
        guard let length = reportLength() else {
            malformed = true
            return nil
        }
        let sighting = extended
            ? AdvertisingSighting(address: address(Extended.address), addressType: AddressType(rawValue: u8(Extended.addressType)),
                                  eventType: u16(Extended.eventType), isExtended: true)
            : AdvertisingSighting(address: address(Legacy.address), addressType: AddressType(rawValue: u8(Legacy.addressType)),
                                  eventType: UInt16(u8(Legacy.eventType)), isExtended: false)
        position &+= length
        produced &+= 1
        return sighting
    }

    public mutating func next() -> AdvertisingReport? {
        guard produced < declaredCount, !malformed else { return nil }
        guard let length = reportLength() else {
            malformed = true
            return nil
        }
        let report = extended ? extendedReport(length: length) : legacyReport(length: length)
        position &+= length
        produced &+= 1
        return report
    }

    /// Steps over the next report without reading it: false at the end or when it does not fit.
    public mutating func skip() -> Bool {
        guard produced < declaredCount, !malformed else { return false }
        guard let length = reportLength() else {
            malformed = true
            return false
        }
        position &+= length
        produced &+= 1
        return true
    }

    @inline(__always) func legacyReport(length: Int) -> AdvertisingReport {
        let rssi = i8(length - 1)
        return AdvertisingReport(eventType: UInt16(u8(Legacy.eventType)), isExtended: false,
                                 addressType: AddressType(rawValue: u8(Legacy.addressType)), address: address(Legacy.address),
                                 rssi: rssi == AdvertisingReport.rssiNotAvailable ? nil : rssi, txPower: nil,
                                 primaryPHY: nil, secondaryPHY: nil, advertisingSID: nil,
                                 periodicAdvertisingInterval: nil,
                                 data: UnsafeRawBufferPointer(rebasing: bytes[position + Legacy.data ..< position + length - 1]))
    }

    @inline(__always) func extendedReport(length: Int) -> AdvertisingReport {
        let rssi = i8(Extended.rssi), tx = i8(Extended.txPower), sid = u8(Extended.sid)
        return AdvertisingReport(eventType: u16(Extended.eventType), isExtended: true,
                                 addressType: AddressType(rawValue: u8(Extended.addressType)), address: address(Extended.address),
                                 rssi: rssi == AdvertisingReport.rssiNotAvailable ? nil : rssi,
                                 txPower: tx == AdvertisingReport.rssiNotAvailable ? nil : tx,
                                 primaryPHY: u8(Extended.primaryPHY), secondaryPHY: u8(Extended.secondaryPHY),
                                 advertisingSID: sid == 0xFF ? nil : sid,
                                 periodicAdvertisingInterval: u16(Extended.periodicInterval),
                                 data: UnsafeRawBufferPointer(rebasing: bytes[position + Extended.data ..< position + length]))
    }
}

extension AdvertisingReport {
    /// A report built elsewhere than from an HCI event (an advertising PDU heard on the air).
    public init(eventType: UInt16, isExtended: Bool, addressType: AddressType, address: BDAddr, rssi: Int8?,
                data: UnsafeRawBufferPointer) {
        self.eventType = eventType
        self.isExtended = isExtended
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.data = data
    }
}
