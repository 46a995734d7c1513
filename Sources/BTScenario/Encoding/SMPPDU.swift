import BTWire

/// Security Manager PDUs on CID 6 (Core Vol 3 Part H §3.5, §3.6).
public enum SMPPDU {
    /// Pairing Request/Response fields.
    public struct PairingFeatures: Sendable {
        public var ioCapability: UInt8
        public var oobDataFlag: UInt8
        public var authRequirements: UInt8
        public var maxKeySize: UInt8
        public var initiatorKeys: UInt8
        public var responderKeys: UInt8

        public init(ioCapability: UInt8, oobDataFlag: UInt8 = 0, authRequirements: UInt8,
                    maxKeySize: UInt8 = SMPValues.maxKeySize, initiatorKeys: UInt8, responderKeys: UInt8) {
            self.ioCapability = ioCapability
            self.oobDataFlag = oobDataFlag
            self.authRequirements = authRequirements
            self.maxKeySize = maxKeySize
            self.initiatorKeys = initiatorKeys
            self.responderKeys = responderKeys
        }
    }

    public static func pairingRequest(_ f: PairingFeatures) -> [UInt8] { features(.pairingRequest, f) }
    public static func pairingResponse(_ f: PairingFeatures) -> [UInt8] { features(.pairingResponse, f) }

    static func features(_ code: SMPCode, _ f: PairingFeatures) -> [UInt8] {
        [code.rawValue, f.ioCapability, f.oobDataFlag, f.authRequirements, f.maxKeySize, f.initiatorKeys,
         f.responderKeys]
    }

    /// Pairing Confirm / Random: a 128-bit value.
    public static func confirm(_ value: [UInt8]) -> [UInt8] { [SMPCode.pairingConfirm.rawValue] + value }
    public static func random(_ value: [UInt8]) -> [UInt8] { [SMPCode.pairingRandom.rawValue] + value }
    /// Pairing Public Key: X and Y, 32 bytes each (LE Secure Connections).
    public static func publicKey(x: [UInt8], y: [UInt8]) -> [UInt8] { [SMPCode.pairingPublicKey.rawValue] + x + y }
    public static func dhKeyCheck(_ value: [UInt8]) -> [UInt8] { [SMPCode.pairingDHKeyCheck.rawValue] + value }
    /// Key distribution (legacy pairing): Encryption Information (LTK) and Central Identification.
    public static func encryptionInformation(ltk: [UInt8]) -> [UInt8] { [SMPCode.encryptionInformation.rawValue] + ltk }
    public static func centralIdentification(ediv: UInt16, random: UInt64) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(SMPCode.centralIdentification.rawValue)
            w.u16(ediv)
            w.u64(random)
        }
    }
    public static func identityInformation(irk: [UInt8]) -> [UInt8] { [SMPCode.identityInformation.rawValue] + irk }
    public static func identityAddressInformation(_ peer: PeerAddress) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(SMPCode.identityAddressInformation.rawValue)
            w.u8(peer.type)
            w.address(peer.address)
        }
    }
    public static func securityRequest(authRequirements: UInt8) -> [UInt8] {
        [SMPCode.securityRequest.rawValue, authRequirements]
    }
}

/// SMP field values (Core Vol 3 Part H §3.5.1).
public enum SMPValues {
    public static let displayYesNo: UInt8 = 0x01
    public static let noInputNoOutput: UInt8 = 0x03
    public static let keyboardDisplay: UInt8 = 0x04
    /// AuthReq bits: bonding, MITM, Secure Connections.
    public static let bonding: UInt8 = 0x01
    public static let mitm: UInt8 = 0x04
    public static let secureConnections: UInt8 = 0x08
    /// Key distribution bits: EncKey, IdKey, SignKey.
    public static let encryptionKey: UInt8 = 0x01
    public static let identityKey: UInt8 = 0x02
    public static let maxKeySize: UInt8 = 16
    public static let keyLength = 16
    public static let publicKeyCoordinateLength = 32
}
