/// L2CAP channel identifiers (Core Vol 3 Part A §2.1).
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    @inlinable public static var signaling: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0001) }
    @inlinable public static var connectionless: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0002) }
    @inlinable public static var ampManager: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0003) }
    @inlinable public static var att: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0004) }
    @inlinable public static var leSignaling: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0005) }
    @inlinable public static var smp: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0006) }
    @inlinable public static var brEdrSMP: L2CAPChannelID { L2CAPChannelID(rawValue: 0x0007) }
    /// First dynamically allocated CID.
    @inlinable public static var firstDynamic: UInt16 { 0x0040 }

    public var isDynamic: Bool { rawValue >= Self.firstDynamic }

    public var name: String? {
        switch rawValue {
        case 0x0001: "L2CAP Signaling"
        case 0x0002: "Connectionless"
        case 0x0003: "AMP Manager"
        case 0x0004: "ATT"
        case 0x0005: "LE Signaling"
        case 0x0006: "SMP"
        case 0x0007: "BR/EDR SMP"
        default: nil
        }
    }
    public var description: String { name ?? "CID " + Hex.u16(rawValue) }
}

/// L2CAP signaling command codes (Core Vol 3 Part A §4).
public struct L2CAPSignalCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var commandReject: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x01) }
    @inlinable public static var connectionRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x02) }
    @inlinable public static var connectionResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x03) }
    @inlinable public static var configurationRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x04) }
    @inlinable public static var configurationResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x05) }
    @inlinable public static var disconnectionRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x06) }
    @inlinable public static var disconnectionResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x07) }
    @inlinable public static var echoRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x08) }
    @inlinable public static var echoResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x09) }
    @inlinable public static var informationRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x0A) }
    @inlinable public static var informationResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x0B) }
    @inlinable public static var connectionParameterUpdateRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x12) }
    @inlinable public static var connectionParameterUpdateResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x13) }
    @inlinable public static var leCreditBasedConnectionRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x14) }
    @inlinable public static var leCreditBasedConnectionResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x15) }
    @inlinable public static var flowControlCreditIndication: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x16) }
    @inlinable public static var creditBasedConnectionRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x17) }
    @inlinable public static var creditBasedConnectionResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x18) }
    @inlinable public static var creditBasedReconfigureRequest: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x19) }
    @inlinable public static var creditBasedReconfigureResponse: L2CAPSignalCode { L2CAPSignalCode(rawValue: 0x1A) }

    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? "Unknown Signal " + Hex.u8(rawValue) }

    static let names: [UInt8: String] = [
        0x01: "Command Reject", 0x02: "Connection Request", 0x03: "Connection Response",
        0x04: "Configuration Request", 0x05: "Configuration Response", 0x06: "Disconnection Request",
        0x07: "Disconnection Response", 0x08: "Echo Request", 0x09: "Echo Response",
        0x0A: "Information Request", 0x0B: "Information Response", 0x0C: "Create Channel Request",
        0x0D: "Create Channel Response", 0x0E: "Move Channel Request", 0x0F: "Move Channel Response",
        0x10: "Move Channel Confirmation", 0x11: "Move Channel Confirmation Response",
        0x12: "Connection Parameter Update Request", 0x13: "Connection Parameter Update Response",
        0x14: "LE Credit Based Connection Request", 0x15: "LE Credit Based Connection Response",
        0x16: "Flow Control Credit Indication", 0x17: "Credit Based Connection Request",
        0x18: "Credit Based Connection Response", 0x19: "Credit Based Reconfigure Request",
        0x1A: "Credit Based Reconfigure Response",
    ]
}

/// Protocol/Service Multiplexers (Bluetooth Assigned Numbers §2.2).
public struct L2CAPPSM: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    @inlinable public static var sdp: L2CAPPSM { L2CAPPSM(rawValue: 0x0001) }
    @inlinable public static var rfcomm: L2CAPPSM { L2CAPPSM(rawValue: 0x0003) }
    /// ATT over BR/EDR.
    @inlinable public static var att: L2CAPPSM { L2CAPPSM(rawValue: 0x001F) }
    /// Enhanced ATT over credit-based channels.
    @inlinable public static var eatt: L2CAPPSM { L2CAPPSM(rawValue: 0x0027) }

    public var name: String? { Self.names[rawValue] }
    public var description: String { (name ?? "PSM") + " (" + Hex.u16(rawValue) + ")" }

    static let names: [UInt16: String] = [
        0x0001: "SDP", 0x0003: "RFCOMM", 0x0005: "TCS-BIN", 0x0007: "TCS-BIN-CORDLESS", 0x000F: "BNEP",
        0x0011: "HID Control", 0x0013: "HID Interrupt", 0x0015: "UPnP", 0x0017: "AVCTP", 0x0019: "AVDTP",
        0x001B: "AVCTP Browsing", 0x001D: "UDI C-Plane", 0x001F: "ATT", 0x0021: "3DSP", 0x0023: "IPSP",
        0x0025: "OTS", 0x0027: "EATT",
    ]
}

/// Security Manager Protocol codes (Core Vol 3 Part H §3.3).
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var pairingRequest: SMPCode { SMPCode(rawValue: 0x01) }
    @inlinable public static var pairingResponse: SMPCode { SMPCode(rawValue: 0x02) }
    @inlinable public static var pairingConfirm: SMPCode { SMPCode(rawValue: 0x03) }
    @inlinable public static var pairingRandom: SMPCode { SMPCode(rawValue: 0x04) }
    @inlinable public static var pairingFailed: SMPCode { SMPCode(rawValue: 0x05) }
    @inlinable public static var encryptionInformation: SMPCode { SMPCode(rawValue: 0x06) }
    @inlinable public static var centralIdentification: SMPCode { SMPCode(rawValue: 0x07) }
    @inlinable public static var identityInformation: SMPCode { SMPCode(rawValue: 0x08) }
    @inlinable public static var identityAddressInformation: SMPCode { SMPCode(rawValue: 0x09) }
    @inlinable public static var signingInformation: SMPCode { SMPCode(rawValue: 0x0A) }
    @inlinable public static var securityRequest: SMPCode { SMPCode(rawValue: 0x0B) }
    @inlinable public static var pairingPublicKey: SMPCode { SMPCode(rawValue: 0x0C) }
    @inlinable public static var pairingDHKeyCheck: SMPCode { SMPCode(rawValue: 0x0D) }
    @inlinable public static var pairingKeypressNotification: SMPCode { SMPCode(rawValue: 0x0E) }

    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? "Unknown SMP " + Hex.u8(rawValue) }

    static let names: [UInt8: String] = [
        0x01: "Pairing Request", 0x02: "Pairing Response", 0x03: "Pairing Confirm", 0x04: "Pairing Random",
        0x05: "Pairing Failed", 0x06: "Encryption Information", 0x07: "Central Identification",
        0x08: "Identity Information", 0x09: "Identity Address Information", 0x0A: "Signing Information",
        0x0B: "Security Request", 0x0C: "Pairing Public Key", 0x0D: "Pairing DHKey Check",
        0x0E: "Pairing Keypress Notification",
    ]

    /// Pairing Failed reasons (Core Vol 3 Part H §3.5.5).
    public static let failureReasons: [UInt8: String] = [
        0x01: "Passkey Entry Failed", 0x02: "OOB Not Available", 0x03: "Authentication Requirements",
        0x04: "Confirm Value Failed", 0x05: "Pairing Not Supported", 0x06: "Encryption Key Size",
        0x07: "Command Not Supported", 0x08: "Unspecified Reason", 0x09: "Repeated Attempts",
        0x0A: "Invalid Parameters", 0x0B: "DHKey Check Failed", 0x0C: "Numeric Comparison Failed",
        0x0D: "BR/EDR Pairing In Progress", 0x0E: "Cross-transport Key Derivation Not Allowed",
        0x0F: "Key Rejected",
    ]
}
