import BTWire

/// Wire values the scenarios need that BTWire has no named constant for (yet). Kept in one place, each with
/// its spec section, so moving them into BTWire later is a mechanical change.
public enum ScenarioCodes {
    // HCI commands (Core Vol 4 Part E §7.3, §7.4, §7.8).
    public static let setEventMask = HCIOpcode(rawValue: 0x0C01)
    public static let reset = HCIOpcode(rawValue: 0x0C03)
    public static let readLocalVersion = HCIOpcode(rawValue: 0x1001)
    public static let readBDAddr = HCIOpcode(rawValue: 0x1009)
    public static let leSetEventMask = HCIOpcode(rawValue: 0x2001)
    public static let leReadBufferSize = HCIOpcode(rawValue: 0x2002)
    public static let leSetRandomAddress = HCIOpcode(rawValue: 0x2005)
    public static let leLongTermKeyRequestReply = HCIOpcode(rawValue: 0x201A)

    // HCI status codes (Core Vol 1 Part F).
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)

    // ATT error codes not named in BTWire (Core Vol 3 Part F §3.4.1.1).
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
}

/// HCI and L2CAP framing constants (Core Vol 4 Part E §5.4, Vol 3 Part A §3).
public enum HCIFraming {
    public static let commandHeaderLength = 3
    public static let eventHeaderLength = 2
    public static let aclHeaderLength = 4
    public static let l2capHeaderLength = 4
    public static let maximumCommandParameters = 255
    public static let maximumEventParameters = 255
    /// A connection handle is 12 bits.
    public static let handleMask: UInt16 = 0x0FFF
    public static let packetBoundaryShift: UInt16 = 12
    public static let broadcastShift: UInt16 = 14
    /// LE's minimum ACL payload (the data length every LE controller supports, and Android's default).
    public static let leMinimumACLDataLength = 27
    /// LE Data Length Extension maximum (Core Vol 6 Part B §4.5.10).
    public static let leMaximumACLDataLength = 251
}

/// ACL Packet_Boundary_Flag values (Core Vol 4 Part E §5.4.2).
public enum PacketBoundary: UInt16, Sendable {
    /// First fragment, non-flushable: what LE hosts send.
    case firstNonFlushable = 0b00
    case continuation = 0b01
    /// First fragment, flushable: what controllers deliver to the host.
    case firstFlushable = 0b10
    case complete = 0b11
}

/// Values for HCI command parameters the scenarios set (Core Vol 4 Part E §7.8).
public enum LEParameter {
    public static let passiveScan: UInt8 = 0x00
    public static let activeScan: UInt8 = 0x01
    public static let disabled: UInt8 = 0x00
    public static let enabled: UInt8 = 0x01
    /// Scanning and initiator filter policy: accept all / accept list only.
    public static let acceptAll: UInt8 = 0x00
    public static let acceptListOnly: UInt8 = 0x01
    public static let publicAddress: UInt8 = 0x00
    public static let randomAddress: UInt8 = 0x01
    /// Role in LE Connection Complete.
    public static let centralRole: UInt8 = 0x00
    public static let peripheralRole: UInt8 = 0x01
    /// PHY bit masks (Set Ext Scan Parameters, Ext Create Connection, Set PHY).
    public static let phy1MBit: UInt8 = 0x01
    public static let phy2MBit: UInt8 = 0x02
    public static let phyCodedBit: UInt8 = 0x04
    /// PHY values (PHY Update Complete, extended reports).
    public static let phy1M: UInt8 = 0x01
    public static let phy2M: UInt8 = 0x02
    public static let phyCoded: UInt8 = 0x03
    /// Advertising channel map: all three primary channels.
    public static let allAdvertisingChannels: UInt8 = 0x07
    /// Legacy advertising types (LE Set Advertising Parameters).
    public static let advInd: UInt8 = 0x00
    public static let advNonconnInd: UInt8 = 0x03
    /// Ext Adv Data operation "complete data", fragment preference "may fragment".
    public static let completeData: UInt8 = 0x03
    public static let mayFragment: UInt8 = 0x00
    /// Ext Adv Data operations for data split across several commands.
    public static let intermediateFragment: UInt8 = 0x00
    public static let firstFragment: UInt8 = 0x01
    public static let lastFragment: UInt8 = 0x02
    /// Clock accuracy 0 = 500 ppm; controllers report 0 for the central's side.
    public static let clockAccuracy500ppm: UInt8 = 0x00
    /// "No preference" TX power for Set Ext Adv Parameters.
    public static let noTxPowerPreference: Int8 = 0x7F
    /// RSSI "not available".
    public static let rssiUnavailable: Int8 = 0x7F
    /// "No ADI" advertising SID in extended reports.
    public static let noSID: UInt8 = 0xFF
    /// Secondary PHY "none" in extended reports.
    public static let noSecondaryPHY: UInt8 = 0x00
}

/// Extended Advertising Report event-type bits (Core Vol 4 Part E §7.7.65.13).
public enum ExtendedReportType {
    public static let nonConnectable: UInt16 = 0x0000
    public static let connectable: UInt16 = 0x0001
    public static let scannable: UInt16 = 0x0002
    public static let directed: UInt16 = 0x0004
    public static let scanResponse: UInt16 = 0x0008
    public static let legacy: UInt16 = 0x0010
    public static let dataStatusShift: UInt16 = 5
    public static let dataComplete: UInt16 = 0
    public static let dataIncomplete: UInt16 = 1
    public static let dataTruncated: UInt16 = 2

    /// Legacy PDUs as extended reports show them.
    public static let legacyAdvInd: UInt16 = 0x13
    public static let legacyScanInd: UInt16 = 0x12
    public static let legacyNonconnInd: UInt16 = 0x10
    public static let legacyScanResponseToAdvInd: UInt16 = 0x1B
}

/// Legacy Advertising Report event types (Core Vol 4 Part E §7.7.65.2).
public enum LegacyReportType {
    public static let advInd: UInt8 = 0x00
    public static let directInd: UInt8 = 0x01
    public static let scanInd: UInt8 = 0x02
    public static let nonconnInd: UInt8 = 0x03
    public static let scanResponse: UInt8 = 0x04
}

/// Extended advertising event properties (LE Set Extended Advertising Parameters, §7.8.53).
public enum ExtendedAdvertisingProperties {
    public static let connectable: UInt16 = 0x0001
    public static let scannable: UInt16 = 0x0002
    public static let legacyPDU: UInt16 = 0x0010
    public static let includeTxPower: UInt16 = 0x0040
}
