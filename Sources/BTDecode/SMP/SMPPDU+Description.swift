import BTWire

/// One line and a field tree for `btlens decode`. Summaries never show key material (LTK, IRK, CSRK, confirm,
/// random, public key, DHKey check) so a summary listing can be shared; `fields` shows it in hex for debugging.
extension SMPPDU: PacketDescribing {
    /// e.g. `Pairing Request io NoInputNoOutput auth bonding,sc max key 16`,
    /// `Pairing Failed: Confirm Value Failed (0x04)`.
    public var summary: String {
        let name = code.description
        switch self {
        case .pairingRequest(let f), .pairingResponse(let f):
            return name + " io " + f.ioCapability.description + (f.oobDataPresent ? " oob" : "") + " auth "
                + f.authReq.description + " max key " + String(f.maximumEncryptionKeySize)
        case .pairingFailed(let reason):
            return name + ": " + reason.description
        case .centralIdentification(let ediv, _):
            return name + " ediv " + Hex.u16(ediv)
        case .identityAddressInformation(let type, let address):
            return name + " " + type.description + " " + address.description
        case .securityRequest(let auth):
            return name + " auth " + auth.description
        case .pairingKeypressNotification(let type):
            return name + " " + type.description
        case .pairingConfirm, .pairingRandom, .encryptionInformation, .identityInformation, .signingInformation,
            .pairingPublicKey, .pairingDHKeyCheck:
            return name
        case .unknown(_, let parameters):
            return name + " len " + String(parameters.count)
        case .malformed(_, let reason):
            return "Malformed " + name + ": " + reason
        }
    }

    public var fields: [DecodedField] {
        var out = [DecodedField("Code", PDUFieldText.named(code.name, code.rawValue))]
        switch self {
        case .pairingRequest(let f), .pairingResponse(let f):
            out.append(DecodedField("IO Capability", PDUFieldText.named(f.ioCapability.name, f.ioCapability.rawValue)))
            out.append(DecodedField("OOB Data Flag", Hex.u8(f.oobDataFlag) + Self.oobName(f.oobDataFlag)))
            out.append(DecodedField("AuthReq", Hex.u8(f.authReq.rawValue) + " " + f.authReq.description,
                                    children: Self.authReqFields(f.authReq)))
            out.append(DecodedField("Maximum Encryption Key Size", String(f.maximumEncryptionKeySize)))
            out.append(DecodedField("Initiator Key Distribution",
                                    Hex.u8(f.initiatorKeyDistribution.rawValue) + " " + f.initiatorKeyDistribution.description))
            out.append(DecodedField("Responder Key Distribution",
                                    Hex.u8(f.responderKeyDistribution.rawValue) + " " + f.responderKeyDistribution.description))
        case .pairingConfirm(let value):
            out.append(DecodedField("Confirm Value", PDUFieldText.hex(value)))
        case .pairingRandom(let value):
            out.append(DecodedField("Random Value", PDUFieldText.hex(value)))
        case .pairingFailed(let reason):
            out.append(DecodedField("Reason", reason.description))
        case .encryptionInformation(let ltk):
            out.append(DecodedField("Long Term Key", PDUFieldText.hex(ltk)))
        case .centralIdentification(let ediv, let rand):
            out.append(DecodedField("EDIV", Hex.u16(ediv)))
            out.append(DecodedField("Rand", Hex.format(rand, width: 16)))
        case .identityInformation(let irk):
            out.append(DecodedField("Identity Resolving Key", PDUFieldText.hex(irk)))
        case .identityAddressInformation(let type, let address):
            out.append(DecodedField("Address Type", type.description + " (" + Hex.u8(type.rawValue) + ")"))
            out.append(DecodedField("Identity Address", address.description))
        case .signingInformation(let csrk):
            out.append(DecodedField("Signature Key", PDUFieldText.hex(csrk)))
        case .securityRequest(let auth):
            out.append(DecodedField("AuthReq", Hex.u8(auth.rawValue) + " " + auth.description,
                                    children: Self.authReqFields(auth)))
        case .pairingPublicKey(let x, let y):
            out.append(DecodedField("Public Key X", PDUFieldText.hex(x)))
            out.append(DecodedField("Public Key Y", PDUFieldText.hex(y)))
        case .pairingDHKeyCheck(let check):
            out.append(DecodedField("DHKey Check", PDUFieldText.hex(check)))
        case .pairingKeypressNotification(let type):
            out.append(DecodedField("Notification Type", PDUFieldText.named(type.name, type.rawValue)))
        case .unknown(_, let parameters):
            out.append(DecodedField("Parameters", PDUFieldText.hex(parameters)))
        case .malformed(_, let reason):
            out.append(DecodedField("Malformed", reason))
        }
        return out
    }

    static func oobName(_ flag: UInt8) -> String {
        switch flag {
        case 0x00: " not present"
        case 0x01: " present"
        default: " reserved"
        }
    }

    static func authReqFields(_ auth: SMPAuthReq) -> [DecodedField] {
        [
            DecodedField("Bonding Flags", auth.bondingFlags == 1 ? "bonding" : auth.bondingFlags == 0 ? "no bonding"
                                                                    : "reserved " + Hex.u8(auth.bondingFlags)),
            DecodedField("MITM", auth.mitm ? "yes" : "no"),
            DecodedField("SC", auth.secureConnections ? "yes" : "no"),
            DecodedField("Keypress", auth.keypress ? "yes" : "no"),
            DecodedField("CT2", auth.ct2 ? "yes" : "no"),
        ]
    }
}
