/// An HCI command opcode: OGF (6 bits) and OCF (10 bits). Open: vendor and reserved opcodes are valid values.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt16, ocf: UInt16) { self.rawValue = ogf << 10 | (ocf & 0x3FF) }

    @inlinable public var ogf: UInt16 { rawValue >> 10 }
    @inlinable public var ocf: UInt16 { rawValue & 0x3FF }
    public var isVendorSpecific: Bool { ogf == Self.vendorOGF }

    public static let vendorOGF: UInt16 = 0x3F

    /// Spec name, "Vendor Specific 0x…" for OGF 0x3F opcodes not in the table, nil when unknown.
    public var name: String? {
        if let n = HCICommandNames.table[rawValue] { return n }
        if isVendorSpecific { return "Vendor Specific " + Hex.format(ocf, width: 3) }
        return nil
    }

    public var description: String { name ?? "Unknown " + Hex.u16(rawValue) }

    public static let disconnect = HCIOpcode(rawValue: 0x0406)
    public static let reset = HCIOpcode(rawValue: 0x0C03)
    public static let createConnection = HCIOpcode(rawValue: 0x0405)
    public static let readRSSI = HCIOpcode(rawValue: 0x1405)
    public static let leSetAdvertisingParameters = HCIOpcode(rawValue: 0x2006)
    public static let leSetAdvertisingData = HCIOpcode(rawValue: 0x2008)
    public static let leSetScanResponseData = HCIOpcode(rawValue: 0x2009)
    public static let leSetAdvertisingEnable = HCIOpcode(rawValue: 0x200A)
    public static let leSetScanParameters = HCIOpcode(rawValue: 0x200B)
    public static let leSetScanEnable = HCIOpcode(rawValue: 0x200C)
    public static let leCreateConnection = HCIOpcode(rawValue: 0x200D)
    public static let leCreateConnectionCancel = HCIOpcode(rawValue: 0x200E)
    public static let leConnectionUpdate = HCIOpcode(rawValue: 0x2013)
    public static let leReadRemoteFeatures = HCIOpcode(rawValue: 0x2016)
    public static let leEnableEncryption = HCIOpcode(rawValue: 0x2019)
    public static let leSetDataLength = HCIOpcode(rawValue: 0x2022)
    public static let leSetDefaultPHY = HCIOpcode(rawValue: 0x2031)
    public static let leSetPHY = HCIOpcode(rawValue: 0x2032)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(rawValue: 0x2036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(rawValue: 0x2037)
    public static let leSetExtendedScanResponseData = HCIOpcode(rawValue: 0x2038)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(rawValue: 0x2039)
    public static let leSetExtendedScanParameters = HCIOpcode(rawValue: 0x2041)
    public static let leSetExtendedScanEnable = HCIOpcode(rawValue: 0x2042)
    public static let leExtendedCreateConnection = HCIOpcode(rawValue: 0x2043)
}

/// HCI event codes (Core Vol 4 Part E §7.7).
public struct HCIEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionComplete = HCIEventCode(rawValue: 0x03)
    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    public static let encryptionChange = HCIEventCode(rawValue: 0x08)
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    public static let numberOfCompletedPackets = HCIEventCode(rawValue: 0x13)
    public static let synchronousConnectionComplete = HCIEventCode(rawValue: 0x2C)
    public static let encryptionKeyRefreshComplete = HCIEventCode(rawValue: 0x30)
    public static let leMeta = HCIEventCode(rawValue: 0x3E)
    public static let encryptionChangeV2 = HCIEventCode(rawValue: 0x59)
    public static let vendorSpecific = HCIEventCode(rawValue: 0xFF)

    public var name: String? { HCIEventNames.events[rawValue] }
    public var description: String { name ?? "Unknown Event " + Hex.u8(rawValue) }
}

/// LE Meta event subevent codes (Core Vol 4 Part E §7.7.65).
public struct LESubevent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionComplete = LESubevent(rawValue: 0x01)
    public static let advertisingReport = LESubevent(rawValue: 0x02)
    public static let connectionUpdateComplete = LESubevent(rawValue: 0x03)
    public static let readRemoteFeaturesComplete = LESubevent(rawValue: 0x04)
    public static let longTermKeyRequest = LESubevent(rawValue: 0x05)
    public static let remoteConnectionParameterRequest = LESubevent(rawValue: 0x06)
    public static let dataLengthChange = LESubevent(rawValue: 0x07)
    public static let enhancedConnectionComplete = LESubevent(rawValue: 0x0A)
    public static let directedAdvertisingReport = LESubevent(rawValue: 0x0B)
    public static let phyUpdateComplete = LESubevent(rawValue: 0x0C)
    public static let extendedAdvertisingReport = LESubevent(rawValue: 0x0D)
    public static let scanTimeout = LESubevent(rawValue: 0x11)
    public static let advertisingSetTerminated = LESubevent(rawValue: 0x12)
    public static let channelSelectionAlgorithm = LESubevent(rawValue: 0x14)
    public static let enhancedConnectionCompleteV2 = LESubevent(rawValue: 0x29)

    public var name: String? { HCIEventNames.leSubevents[rawValue] }
    public var description: String { name ?? "LE Unknown Subevent " + Hex.u8(rawValue) }
}

/// HCI status and error codes (Core Vol 1 Part F), used as command status and disconnection reason.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    public static let remoteUserTerminatedConnection = HCIStatus(rawValue: 0x13)
    public static let connectionTerminatedByLocalHost = HCIStatus(rawValue: 0x16)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)

    public var name: String? {
        Int(rawValue) < HCIErrorNames.names.count ? HCIErrorNames.names[Int(rawValue)] : nil
    }
    public var description: String { name ?? "Unknown Error " + Hex.u8(rawValue) }
}
