/// An HCI command opcode: OGF (6 bits) and OCF (10 bits). Open: vendor and reserved opcodes are valid values.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt16, ocf: UInt16) { self.rawValue = ogf << 10 | (ocf & 0x3FF) }

    @inlinable public var ogf: UInt16 { rawValue >> 10 }
    @inlinable public var ocf: UInt16 { rawValue & 0x3FF }
    public var isVendorSpecific: Bool { ogf == Self.vendorOGF }

    @inlinable public static var vendorOGF: UInt16 { 0x3F }

    /// Spec name, "Vendor Specific 0x…" for OGF 0x3F opcodes not in the table, nil when unknown.
    public var name: String? {
        if let n = HCICommandNames.table[rawValue] { return n }
        if isVendorSpecific { return "Vendor Specific " + Hex.format(ocf, width: 3) }
        return nil
    }

    public var description: String { name ?? "Unknown " + Hex.u16(rawValue) }

    @inlinable public static var disconnect: HCIOpcode { HCIOpcode(rawValue: 0x0406) }
    @inlinable public static var reset: HCIOpcode { HCIOpcode(rawValue: 0x0C03) }
    @inlinable public static var createConnection: HCIOpcode { HCIOpcode(rawValue: 0x0405) }
    @inlinable public static var inquiry: HCIOpcode { HCIOpcode(rawValue: 0x0401) }
    @inlinable public static var inquiryCancel: HCIOpcode { HCIOpcode(rawValue: 0x0402) }
    @inlinable public static var sniffMode: HCIOpcode { HCIOpcode(rawValue: 0x0803) }
    @inlinable public static var writePageTimeout: HCIOpcode { HCIOpcode(rawValue: 0x0C18) }
    @inlinable public static var writeLocalName: HCIOpcode { HCIOpcode(rawValue: 0x0C13) }
    @inlinable public static var readLocalName: HCIOpcode { HCIOpcode(rawValue: 0x0C14) }
    @inlinable public static var writeScanEnable: HCIOpcode { HCIOpcode(rawValue: 0x0C1A) }
    @inlinable public static var writePageScanActivity: HCIOpcode { HCIOpcode(rawValue: 0x0C1C) }
    @inlinable public static var writeInquiryScanActivity: HCIOpcode { HCIOpcode(rawValue: 0x0C1E) }
    @inlinable public static var writeInquiryScanType: HCIOpcode { HCIOpcode(rawValue: 0x0C43) }
    @inlinable public static var writePageScanType: HCIOpcode { HCIOpcode(rawValue: 0x0C47) }
    @inlinable public static var readRSSI: HCIOpcode { HCIOpcode(rawValue: 0x1405) }
    @inlinable public static var leSetAdvertisingParameters: HCIOpcode { HCIOpcode(rawValue: 0x2006) }
    @inlinable public static var leSetAdvertisingData: HCIOpcode { HCIOpcode(rawValue: 0x2008) }
    @inlinable public static var leSetScanResponseData: HCIOpcode { HCIOpcode(rawValue: 0x2009) }
    @inlinable public static var leSetAdvertisingEnable: HCIOpcode { HCIOpcode(rawValue: 0x200A) }
    @inlinable public static var leSetScanParameters: HCIOpcode { HCIOpcode(rawValue: 0x200B) }
    @inlinable public static var leSetScanEnable: HCIOpcode { HCIOpcode(rawValue: 0x200C) }
    @inlinable public static var leCreateConnection: HCIOpcode { HCIOpcode(rawValue: 0x200D) }
    @inlinable public static var leCreateConnectionCancel: HCIOpcode { HCIOpcode(rawValue: 0x200E) }
    @inlinable public static var leConnectionUpdate: HCIOpcode { HCIOpcode(rawValue: 0x2013) }
    @inlinable public static var leReadRemoteFeatures: HCIOpcode { HCIOpcode(rawValue: 0x2016) }
    @inlinable public static var leEnableEncryption: HCIOpcode { HCIOpcode(rawValue: 0x2019) }
    @inlinable public static var leSetDataLength: HCIOpcode { HCIOpcode(rawValue: 0x2022) }
    @inlinable public static var leSetDefaultPHY: HCIOpcode { HCIOpcode(rawValue: 0x2031) }
    @inlinable public static var leSetPHY: HCIOpcode { HCIOpcode(rawValue: 0x2032) }
    @inlinable public static var leSetExtendedAdvertisingParameters: HCIOpcode { HCIOpcode(rawValue: 0x2036) }
    @inlinable public static var leSetExtendedAdvertisingData: HCIOpcode { HCIOpcode(rawValue: 0x2037) }
    @inlinable public static var leSetExtendedScanResponseData: HCIOpcode { HCIOpcode(rawValue: 0x2038) }
    @inlinable public static var leSetExtendedAdvertisingEnable: HCIOpcode { HCIOpcode(rawValue: 0x2039) }
    @inlinable public static var leSetExtendedScanParameters: HCIOpcode { HCIOpcode(rawValue: 0x2041) }
    @inlinable public static var leSetExtendedScanEnable: HCIOpcode { HCIOpcode(rawValue: 0x2042) }
    @inlinable public static var leExtendedCreateConnection: HCIOpcode { HCIOpcode(rawValue: 0x2043) }
}

/// HCI event codes (Core Vol 4 Part E §7.7).
public struct HCIEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var inquiryComplete: HCIEventCode { HCIEventCode(rawValue: 0x01) }
    @inlinable public static var connectionComplete: HCIEventCode { HCIEventCode(rawValue: 0x03) }
    @inlinable public static var disconnectionComplete: HCIEventCode { HCIEventCode(rawValue: 0x05) }
    @inlinable public static var encryptionChange: HCIEventCode { HCIEventCode(rawValue: 0x08) }
    @inlinable public static var commandComplete: HCIEventCode { HCIEventCode(rawValue: 0x0E) }
    @inlinable public static var commandStatus: HCIEventCode { HCIEventCode(rawValue: 0x0F) }
    @inlinable public static var roleChange: HCIEventCode { HCIEventCode(rawValue: 0x12) }
    @inlinable public static var numberOfCompletedPackets: HCIEventCode { HCIEventCode(rawValue: 0x13) }
    @inlinable public static var modeChange: HCIEventCode { HCIEventCode(rawValue: 0x14) }
    @inlinable public static var synchronousConnectionComplete: HCIEventCode { HCIEventCode(rawValue: 0x2C) }
    @inlinable public static var sniffSubrating: HCIEventCode { HCIEventCode(rawValue: 0x2E) }
    @inlinable public static var encryptionKeyRefreshComplete: HCIEventCode { HCIEventCode(rawValue: 0x30) }
    @inlinable public static var leMeta: HCIEventCode { HCIEventCode(rawValue: 0x3E) }
    @inlinable public static var encryptionChangeV2: HCIEventCode { HCIEventCode(rawValue: 0x59) }
    @inlinable public static var vendorSpecific: HCIEventCode { HCIEventCode(rawValue: 0xFF) }

    public var name: String? { HCIEventNames.events[rawValue] }
    public var description: String { name ?? "Unknown Event " + Hex.u8(rawValue) }
}

/// LE Meta event subevent codes (Core Vol 4 Part E §7.7.65).
public struct LESubevent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var connectionComplete: LESubevent { LESubevent(rawValue: 0x01) }
    @inlinable public static var advertisingReport: LESubevent { LESubevent(rawValue: 0x02) }
    @inlinable public static var connectionUpdateComplete: LESubevent { LESubevent(rawValue: 0x03) }
    @inlinable public static var readRemoteFeaturesComplete: LESubevent { LESubevent(rawValue: 0x04) }
    @inlinable public static var longTermKeyRequest: LESubevent { LESubevent(rawValue: 0x05) }
    @inlinable public static var remoteConnectionParameterRequest: LESubevent { LESubevent(rawValue: 0x06) }
    @inlinable public static var dataLengthChange: LESubevent { LESubevent(rawValue: 0x07) }
    @inlinable public static var enhancedConnectionComplete: LESubevent { LESubevent(rawValue: 0x0A) }
    @inlinable public static var directedAdvertisingReport: LESubevent { LESubevent(rawValue: 0x0B) }
    @inlinable public static var phyUpdateComplete: LESubevent { LESubevent(rawValue: 0x0C) }
    @inlinable public static var extendedAdvertisingReport: LESubevent { LESubevent(rawValue: 0x0D) }
    @inlinable public static var scanTimeout: LESubevent { LESubevent(rawValue: 0x11) }
    @inlinable public static var advertisingSetTerminated: LESubevent { LESubevent(rawValue: 0x12) }
    @inlinable public static var channelSelectionAlgorithm: LESubevent { LESubevent(rawValue: 0x14) }
    @inlinable public static var enhancedConnectionCompleteV2: LESubevent { LESubevent(rawValue: 0x29) }

    public var name: String? { HCIEventNames.leSubevents[rawValue] }
    public var description: String { name ?? "LE Unknown Subevent " + Hex.u8(rawValue) }
}

/// HCI status and error codes (Core Vol 1 Part F), used as command status and disconnection reason.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var success: HCIStatus { HCIStatus(rawValue: 0x00) }
    @inlinable public static var unknownConnectionIdentifier: HCIStatus { HCIStatus(rawValue: 0x02) }
    @inlinable public static var pageTimeout: HCIStatus { HCIStatus(rawValue: 0x04) }
    @inlinable public static var connectionTimeout: HCIStatus { HCIStatus(rawValue: 0x08) }
    /// LMP/LL Response Timeout: the peer stopped answering a link-layer procedure.
    @inlinable public static var lmpResponseTimeout: HCIStatus { HCIStatus(rawValue: 0x22) }
    @inlinable public static var remoteUserTerminatedConnection: HCIStatus { HCIStatus(rawValue: 0x13) }
    @inlinable public static var connectionTerminatedByLocalHost: HCIStatus { HCIStatus(rawValue: 0x16) }
    @inlinable public static var unknownAdvertisingIdentifier: HCIStatus { HCIStatus(rawValue: 0x42) }
    @inlinable public static var connectionFailedToBeEstablished: HCIStatus { HCIStatus(rawValue: 0x3E) }

    public var name: String? {
        Int(rawValue) < HCIErrorNames.names.count ? HCIErrorNames.names[Int(rawValue)] : nil
    }
    public var description: String { name ?? "Unknown Error " + Hex.u8(rawValue) }
}
