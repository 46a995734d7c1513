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

/// Walks the reports of an LE (Extended) Advertising Report event without allocating. Legacy reports are read
/// sequentially, as BlueZ does (`evt_type, addr_type, addr, data_len, data, rssi` per report).
public struct AdvertisingReportIterator: IteratorProtocol, Sequence {
    var reader: ByteReader
    let extended: Bool
    public let declaredCount: Int
    var produced = 0
    /// Set when the event ended before `declaredCount` reports were read.
    public private(set) var isMalformed = false

    /// Fixed part of an extended report before its data (§7.7.65.13).
    public static let extendedFixedLength = 24
    /// Fixed part of a legacy report: type, address type, address, data length, (data), RSSI.
    public static let legacyFixedLength = 10

    /// - Parameter parameters: the subevent parameters (after the subevent code).
    public init(subevent: LESubevent, parameters: UnsafeRawBufferPointer) {
        reader = ByteReader(parameters)
        extended = subevent == .extendedAdvertisingReport
        declaredCount = Int(reader.readU8() ?? 0)
        if parameters.isEmpty { isMalformed = true }
    }

    public mutating func next() -> AdvertisingReport? {
        guard produced < declaredCount, !isMalformed else { return nil }
        let report = extended ? nextExtended() : nextLegacy()
        if report == nil { isMalformed = true } else { produced += 1 }
        return report
    }

    mutating func nextLegacy() -> AdvertisingReport? {
        guard let type = reader.readU8(), let addressType = reader.readU8(), let address = reader.readAddress(),
              let length = reader.readU8(), let data = reader.readBytes(Int(length)), let rssi = reader.readI8()
        else { return nil }
        return AdvertisingReport(eventType: UInt16(type), isExtended: false,
                                 addressType: AddressType(rawValue: addressType), address: address,
                                 rssi: rssi == AdvertisingReport.rssiNotAvailable ? nil : rssi, txPower: nil,
                                 primaryPHY: nil, secondaryPHY: nil, advertisingSID: nil,
                                 periodicAdvertisingInterval: nil, data: data)
    }

    mutating func nextExtended() -> AdvertisingReport? {
        guard let type = reader.readU16(), let addressType = reader.readU8(), let address = reader.readAddress(),
              let primary = reader.readU8(), let secondary = reader.readU8(), let sid = reader.readU8(),
              let tx = reader.readI8(), let rssi = reader.readI8(), let interval = reader.readU16(),
              reader.skip(7),  // direct address type + direct address
              let length = reader.readU8(), let data = reader.readBytes(Int(length))
        else { return nil }
        return AdvertisingReport(eventType: type, isExtended: true, addressType: AddressType(rawValue: addressType),
                                 address: address, rssi: rssi == AdvertisingReport.rssiNotAvailable ? nil : rssi,
                                 txPower: tx == AdvertisingReport.rssiNotAvailable ? nil : tx, primaryPHY: primary,
                                 secondaryPHY: secondary, advertisingSID: sid == 0xFF ? nil : sid,
                                 periodicAdvertisingInterval: interval, data: data)
    }
}
