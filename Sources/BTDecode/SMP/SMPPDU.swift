import BTWire

/// One Security Manager Protocol PDU (CID 0x0006 on LE, 0x0007 on BR/EDR; Core Vol 3 Part H §3.5–3.6;
/// FORMATS.md §6), decoded in place.
///
/// Keys, confirm and random values are slices **borrowed** from the input, so decoding copies and allocates
/// nothing; the PDU is valid only while those bytes are. Decoding never traps: a PDU shorter than its code's
/// fixed layout is `.malformed`, a code this decoder does not know is `.unknown`. Bytes after the fixed layout
/// are ignored (the spec fixes every SMP length, so a checker can compare `SMPPDU.parameterLength(of:)`).
public enum SMPPDU {
    /// 0x01: the initiator's IO capability, OOB flag, AuthReq, max key size and key distribution.
    case pairingRequest(SMPPairingFeatures)
    /// 0x02: the responder's answer, same layout.
    case pairingResponse(SMPPairingFeatures)
    /// 0x03: 16-byte confirm value (Mconfirm/Sconfirm).
    case pairingConfirm(confirmValue: UnsafeRawBufferPointer)
    /// 0x04: 16-byte random value (Mrand/Srand, or Na/Nb with Secure Connections).
    case pairingRandom(randomValue: UnsafeRawBufferPointer)
    /// 0x05: pairing stopped, with the reason.
    case pairingFailed(reason: SMPPairingFailedReason)
    /// 0x06: 16-byte Long Term Key (legacy pairing key distribution).
    case encryptionInformation(longTermKey: UnsafeRawBufferPointer)
    /// 0x07: EDIV and Rand that identify the LTK sent just before.
    case centralIdentification(ediv: UInt16, rand: UInt64)
    /// 0x08: 16-byte Identity Resolving Key.
    case identityInformation(identityResolvingKey: UnsafeRawBufferPointer)
    /// 0x09: the sender's identity address (public, or static random).
    case identityAddressInformation(addressType: AddressType, address: BDAddr)
    /// 0x0A: 16-byte Connection Signature Resolving Key.
    case signingInformation(signatureKey: UnsafeRawBufferPointer)
    /// 0x0B: the peripheral asks the central to start pairing or encryption.
    case securityRequest(authReq: SMPAuthReq)
    /// 0x0C: the P-256 public key, 32-byte X and Y coordinates (LE Secure Connections).
    case pairingPublicKey(x: UnsafeRawBufferPointer, y: UnsafeRawBufferPointer)
    /// 0x0D: 16-byte DHKey check value (Ea/Eb).
    case pairingDHKeyCheck(check: UnsafeRawBufferPointer)
    /// 0x0E: progress of passkey entry on the other side.
    case pairingKeypressNotification(type: SMPKeypressNotificationType)
    /// A code this decoder does not know; `parameters` are the bytes after the code.
    case unknown(code: SMPCode, parameters: UnsafeRawBufferPointer)
    /// The PDU is shorter than its code's layout.
    case malformed(code: SMPCode, reason: String)

    /// The fixed parameter length of a known code (after the code byte), or nil for an unknown code.
    public static func parameterLength(of code: SMPCode) -> Int? {
        switch code.rawValue {
        case 0x01, 0x02: SMPPairingFeatures.length
        case 0x03, 0x04, 0x06, 0x08, 0x0A, 0x0D: 16
        case 0x05, 0x0B, 0x0E: 1
        case 0x07: 10
        case 0x09: 7
        case 0x0C: 64
        default: nil
        }
    }

    /// Decodes one SMP PDU (code first). Never traps; empty input is `.malformed` with code 0x00.
    public init(_ bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        guard let raw = r.readU8() else {
            self = .malformed(code: SMPCode(rawValue: 0), reason: "empty PDU")
            return
        }
        let code = SMPCode(rawValue: raw)
        guard let length = Self.parameterLength(of: code) else {
            self = .unknown(code: code, parameters: r.readRest())
            return
        }
        guard r.remaining >= length else {
            self = .malformed(code: code, reason: "too short")
            return
        }
        self = Self.decodeParameters(code, &r) ?? .malformed(code: code, reason: "too short")
    }

    /// Decodes the parameters of a known code; the caller has checked the fixed length, so nil is unreachable
    /// in practice but keeps every read checked.
    private static func decodeParameters(_ code: SMPCode, _ r: inout ByteReader) -> SMPPDU? {
        switch code.rawValue {
        case 0x01, 0x02:
            guard let io = r.readU8(), let oob = r.readU8(), let auth = r.readU8(), let keySize = r.readU8(),
                let initiator = r.readU8(), let responder = r.readU8()
            else { return nil }
            let features = SMPPairingFeatures(
                ioCapability: SMPIOCapability(rawValue: io), oobDataFlag: oob, authReq: SMPAuthReq(rawValue: auth),
                maximumEncryptionKeySize: keySize, initiatorKeyDistribution: SMPKeyDistribution(rawValue: initiator),
                responderKeyDistribution: SMPKeyDistribution(rawValue: responder))
            return code.rawValue == 0x01 ? .pairingRequest(features) : .pairingResponse(features)
        case 0x03:
            return r.readBytes(16).map { .pairingConfirm(confirmValue: $0) }
        case 0x04:
            return r.readBytes(16).map { .pairingRandom(randomValue: $0) }
        case 0x05:
            return r.readU8().map { .pairingFailed(reason: SMPPairingFailedReason(rawValue: $0)) }
        case 0x06:
            return r.readBytes(16).map { .encryptionInformation(longTermKey: $0) }
        case 0x07:
            guard let ediv = r.readU16(), let rand = r.readU64() else { return nil }
            return .centralIdentification(ediv: ediv, rand: rand)
        case 0x08:
            return r.readBytes(16).map { .identityInformation(identityResolvingKey: $0) }
        case 0x09:
            guard let type = r.readU8(), let address = r.readAddress() else { return nil }
            return .identityAddressInformation(addressType: AddressType(rawValue: type), address: address)
        case 0x0A:
            return r.readBytes(16).map { .signingInformation(signatureKey: $0) }
        case 0x0B:
            return r.readU8().map { .securityRequest(authReq: SMPAuthReq(rawValue: $0)) }
        case 0x0C:
            guard let x = r.readBytes(32), let y = r.readBytes(32) else { return nil }
            return .pairingPublicKey(x: x, y: y)
        case 0x0D:
            return r.readBytes(16).map { .pairingDHKeyCheck(check: $0) }
        case 0x0E:
            return r.readU8().map { .pairingKeypressNotification(type: SMPKeypressNotificationType(rawValue: $0)) }
        default:
            return .unknown(code: code, parameters: r.readRest())
        }
    }

    /// The PDU's code (for `.malformed` and `.unknown`, the one on the wire).
    public var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .encryptionInformation: .encryptionInformation
        case .centralIdentification: .centralIdentification
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .signingInformation: .signingInformation
        case .securityRequest: .securityRequest
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .pairingKeypressNotification: .pairingKeypressNotification
        case .unknown(let code, _), .malformed(let code, _): code
        }
    }

    public var isMalformed: Bool {
        if case .malformed = self { return true }
        return false
    }
}
