import BTWire

// Field types of SMP PDUs (Core Vol 3 Part H §3.5–3.6). Open RawRepresentable structs, like the BTWire codes,
// because reserved values do appear in captures and must still print.

/// IO Capability of a Pairing Request/Response (§3.5.1, Table 3.4): with the peer's, it picks the
/// association model (Just Works, Passkey Entry, Numeric Comparison).
public struct SMPIOCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let displayOnly = SMPIOCapability(rawValue: 0x00)
    public static let displayYesNo = SMPIOCapability(rawValue: 0x01)
    public static let keyboardOnly = SMPIOCapability(rawValue: 0x02)
    public static let noInputNoOutput = SMPIOCapability(rawValue: 0x03)
    public static let keyboardDisplay = SMPIOCapability(rawValue: 0x04)

    /// The spec's name, written as one word the way btmon and the Core tables print it.
    public var name: String? {
        switch rawValue {
        case 0x00: "DisplayOnly"
        case 0x01: "DisplayYesNo"
        case 0x02: "KeyboardOnly"
        case 0x03: "NoInputNoOutput"
        case 0x04: "KeyboardDisplay"
        default: nil
        }
    }
    public var description: String { name ?? "reserved " + Hex.u8(rawValue) }
}

/// AuthReq of Pairing Request/Response and Security Request (§3.5.1, Figure 3.3): bonding flags in bits 0–1
/// (01 = bonding), then MITM, SC (LE Secure Connections), Keypress and CT2 (h7 key derivation).
public struct SMPAuthReq: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bits 0–1: 0b00 no bonding, 0b01 bonding, others reserved.
    public var bondingFlags: UInt8 { rawValue & 0x03 }
    public var bonding: Bool { bondingFlags == 0x01 }
    public var mitm: Bool { rawValue & 0x04 != 0 }
    public var secureConnections: Bool { rawValue & 0x08 != 0 }
    public var keypress: Bool { rawValue & 0x10 != 0 }
    public var ct2: Bool { rawValue & 0x20 != 0 }
    /// Bits 6–7, reserved.
    public var reservedBits: UInt8 { rawValue & 0xC0 }

    /// The set flags: `bonding,mitm,sc,keypress,ct2`, or `none`.
    public var description: String {
        var parts: [String] = []
        switch bondingFlags {
        case 0x01: parts.append("bonding")
        case 0x00: break
        default: parts.append("bonding-flags " + Hex.u8(bondingFlags))
        }
        if mitm { parts.append("mitm") }
        if secureConnections { parts.append("sc") }
        if keypress { parts.append("keypress") }
        if ct2 { parts.append("ct2") }
        if reservedBits != 0 { parts.append("reserved " + Hex.u8(reservedBits)) }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}

/// Initiator/Responder Key Distribution (§3.6.1): which keys each side sends after encryption starts.
public struct SMPKeyDistribution: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// LTK + EDIV/Rand (legacy pairing; ignored with Secure Connections).
    public static let encKey = SMPKeyDistribution(rawValue: 0x01)
    /// IRK + identity address.
    public static let idKey = SMPKeyDistribution(rawValue: 0x02)
    /// CSRK.
    public static let signKey = SMPKeyDistribution(rawValue: 0x04)
    /// Derive the BR/EDR link key (cross-transport).
    public static let linkKey = SMPKeyDistribution(rawValue: 0x08)

    /// `enc,id,sign,link`, or `none`.
    public var description: String {
        var parts: [String] = []
        if contains(.encKey) { parts.append("enc") }
        if contains(.idKey) { parts.append("id") }
        if contains(.signKey) { parts.append("sign") }
        if contains(.linkKey) { parts.append("link") }
        if rawValue & 0xF0 != 0 { parts.append("reserved " + Hex.u8(rawValue & 0xF0)) }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}

/// Pairing Failed reason (§3.5.5); names come from `SMPCode.failureReasons`.
public struct SMPPairingFailedReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let confirmValueFailed = SMPPairingFailedReason(rawValue: 0x04)
    public static let pairingNotSupported = SMPPairingFailedReason(rawValue: 0x05)
    public static let unspecifiedReason = SMPPairingFailedReason(rawValue: 0x08)
    public static let repeatedAttempts = SMPPairingFailedReason(rawValue: 0x09)

    public var name: String? { SMPCode.failureReasons[rawValue] }
    /// `Confirm Value Failed (0x04)`.
    public var description: String { (name ?? "Reserved") + " (" + Hex.u8(rawValue) + ")" }
}

/// Keypress Notification type (§3.5.8), sent during Passkey Entry when both sides set the Keypress flag.
public struct SMPKeypressNotificationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let passkeyEntryStarted = SMPKeypressNotificationType(rawValue: 0x00)
    public static let passkeyDigitEntered = SMPKeypressNotificationType(rawValue: 0x01)
    public static let passkeyDigitErased = SMPKeypressNotificationType(rawValue: 0x02)
    public static let passkeyCleared = SMPKeypressNotificationType(rawValue: 0x03)
    public static let passkeyEntryCompleted = SMPKeypressNotificationType(rawValue: 0x04)

    public var name: String? {
        switch rawValue {
        case 0x00: "passkey entry started"
        case 0x01: "passkey digit entered"
        case 0x02: "passkey digit erased"
        case 0x03: "passkey cleared"
        case 0x04: "passkey entry completed"
        default: nil
        }
    }
    public var description: String { name ?? "reserved " + Hex.u8(rawValue) }
}

/// The six parameter bytes shared by Pairing Request (0x01) and Pairing Response (0x02) (§3.5.1–3.5.2).
public struct SMPPairingFeatures: Hashable, Sendable {
    public var ioCapability: SMPIOCapability
    /// 0x00 OOB data not present, 0x01 present; other values are reserved.
    public var oobDataFlag: UInt8
    public var authReq: SMPAuthReq
    /// 7–16 bytes.
    public var maximumEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: SMPKeyDistribution
    public var responderKeyDistribution: SMPKeyDistribution

    public init(ioCapability: SMPIOCapability, oobDataFlag: UInt8, authReq: SMPAuthReq,
                maximumEncryptionKeySize: UInt8, initiatorKeyDistribution: SMPKeyDistribution,
                responderKeyDistribution: SMPKeyDistribution) {
        self.ioCapability = ioCapability
        self.oobDataFlag = oobDataFlag
        self.authReq = authReq
        self.maximumEncryptionKeySize = maximumEncryptionKeySize
        self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }

    public var oobDataPresent: Bool { oobDataFlag == 0x01 }

    /// Size of the parameters on the wire.
    public static let length = 6
}
