import BTDecode
import BTWire
import Testing

/// Decodes `bytes` as one SMP PDU and hands it to `body` while the bytes are alive (the PDU borrows them).
private func smp<R>(_ bytes: [UInt8], _ body: (SMPPDU) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes { try body(SMPPDU($0)) }
}

private func value(_ fields: [DecodedField], _ name: String) -> String? {
    for f in fields {
        if f.name == name { return f.value }
        if let v = value(f.children, name) { return v }
    }
    return nil
}

/// 16 distinct bytes standing in for a key or confirm value.
private let key16: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                              0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]
private let key16Hex = "00112233445566778899aabbccddeeff"

@Suite("SMP PDU decoding")
struct SMPPDUTests {
    @Test func pairingRequest() {
        // 01 Pairing Request | 03 io NoInputNoOutput | 00 no OOB | 09 auth bonding + SC | 10 max key 16
        // 07 initiator keys enc,id,sign | 03 responder keys enc,id
        smp([0x01, 0x03, 0x00, 0x09, 0x10, 0x07, 0x03]) { pdu in
            guard case .pairingRequest(let f) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(f.ioCapability == .noInputNoOutput)
            #expect(!f.oobDataPresent)
            #expect(f.authReq.bonding && f.authReq.secureConnections)
            #expect(!f.authReq.mitm && !f.authReq.keypress && !f.authReq.ct2)
            #expect(f.maximumEncryptionKeySize == 16)
            #expect(f.initiatorKeyDistribution == [.encKey, .idKey, .signKey])
            #expect(f.responderKeyDistribution == [.encKey, .idKey])
            #expect(pdu.code == .pairingRequest)
            #expect(pdu.summary == "Pairing Request io NoInputNoOutput auth bonding,sc max key 16")
            #expect(value(pdu.fields, "IO Capability") == "NoInputNoOutput (0x03)")
            #expect(value(pdu.fields, "AuthReq") == "0x09 bonding,sc")
            #expect(value(pdu.fields, "MITM") == "no")
            #expect(value(pdu.fields, "Initiator Key Distribution") == "0x07 enc,id,sign")
            #expect(value(pdu.fields, "Responder Key Distribution") == "0x03 enc,id")
        }
    }

    @Test func pairingResponseAllAuthBits() {
        // 02 Pairing Response | 04 KeyboardDisplay | 01 OOB present | 3d bonding,mitm,sc,keypress,ct2 | 07 max key 7
        // 00 initiator none | 0f responder enc,id,sign,link
        smp([0x02, 0x04, 0x01, 0x3D, 0x07, 0x00, 0x0F]) { pdu in
            guard case .pairingResponse(let f) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(f.ioCapability == .keyboardDisplay)
            #expect(f.oobDataPresent)
            #expect(f.authReq.description == "bonding,mitm,sc,keypress,ct2")
            #expect(f.initiatorKeyDistribution.description == "none")
            #expect(f.responderKeyDistribution.description == "enc,id,sign,link")
            #expect(pdu.summary == "Pairing Response io KeyboardDisplay oob auth bonding,mitm,sc,keypress,ct2 max key 7")
        }
    }

    @Test func confirmAndRandom() {
        // 03 Pairing Confirm | 16-byte confirm value
        smp([0x03] + key16) { pdu in
            guard case .pairingConfirm(let confirm) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(confirm) == key16)
            #expect(pdu.summary == "Pairing Confirm")
            #expect(value(pdu.fields, "Confirm Value") == key16Hex)
        }
        // 04 Pairing Random | 16-byte random value
        smp([0x04] + key16) { pdu in
            guard case .pairingRandom(let random) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(random) == key16)
            #expect(value(pdu.fields, "Random Value") == key16Hex)
        }
    }

    @Test func pairingFailed() {
        // 05 Pairing Failed | 04 Confirm Value Failed
        smp([0x05, 0x04]) { pdu in
            guard case .pairingFailed(let reason) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(reason == .confirmValueFailed)
            #expect(pdu.summary == "Pairing Failed: Confirm Value Failed (0x04)")
            #expect(value(pdu.fields, "Reason") == "Confirm Value Failed (0x04)")
        }
        // 05 Pairing Failed | 7f reserved reason
        smp([0x05, 0x7F]) { pdu in #expect(pdu.summary == "Pairing Failed: Reserved (0x7f)") }
    }

    @Test func keyDistributionKeepsKeysOutOfSummaries() {
        // 06 Encryption Information | LTK
        smp([0x06] + key16) { pdu in
            guard case .encryptionInformation(let ltk) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(ltk) == key16)
            #expect(pdu.summary == "Encryption Information")
            #expect(!pdu.summary.contains("0011"))
            #expect(value(pdu.fields, "Long Term Key") == key16Hex)
        }
        // 07 Central Identification | 34 12 EDIV 0x1234 | 01…08 Rand 0x0807060504030201
        smp([0x07, 0x34, 0x12, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]) { pdu in
            guard case .centralIdentification(let ediv, let rand) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(ediv == 0x1234)
            #expect(rand == 0x0807_0605_0403_0201)
            #expect(pdu.summary == "Central Identification ediv 0x1234")
            #expect(value(pdu.fields, "Rand") == "0x0807060504030201")
        }
        // 08 Identity Information | IRK
        smp([0x08] + key16) { pdu in
            guard case .identityInformation(let irk) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(irk) == key16)
            #expect(pdu.summary == "Identity Information")
            #expect(value(pdu.fields, "Identity Resolving Key") == key16Hex)
        }
        // 09 Identity Address Information | 00 public | 66 55 44 33 22 11 = 11:22:33:44:55:66
        smp([0x09, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]) { pdu in
            guard case .identityAddressInformation(let type, let address) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(type == .public)
            #expect(address == BDAddr("11:22:33:44:55:66"))
            #expect(pdu.summary == "Identity Address Information public 11:22:33:44:55:66")
        }
        // 0a Signing Information | CSRK
        smp([0x0A] + key16) { pdu in
            guard case .signingInformation(let csrk) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(csrk) == key16)
            #expect(pdu.summary == "Signing Information")
        }
    }

    @Test func securityRequest() {
        // 0b Security Request | 05 bonding + MITM
        smp([0x0B, 0x05]) { pdu in
            guard case .securityRequest(let auth) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(auth.bonding && auth.mitm && !auth.secureConnections)
            #expect(pdu.summary == "Security Request auth bonding,mitm")
        }
    }

    @Test func secureConnectionsPDUs() {
        // 0c Pairing Public Key | X = 32 × 0x11 | Y = 32 × 0x22
        smp([0x0C] + [UInt8](repeating: 0x11, count: 32) + [UInt8](repeating: 0x22, count: 32)) { pdu in
            guard case .pairingPublicKey(let x, let y) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(x) == [UInt8](repeating: 0x11, count: 32))
            #expect(Array(y) == [UInt8](repeating: 0x22, count: 32))
            #expect(pdu.summary == "Pairing Public Key")
            #expect(value(pdu.fields, "Public Key Y") == String(repeating: "22", count: 32))
        }
        // 0d Pairing DHKey Check | 16 bytes
        smp([0x0D] + key16) { pdu in
            guard case .pairingDHKeyCheck(let check) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(Array(check) == key16)
            #expect(pdu.summary == "Pairing DHKey Check")
        }
        // 0e Pairing Keypress Notification | 01 passkey digit entered
        smp([0x0E, 0x01]) { pdu in
            guard case .pairingKeypressNotification(let type) = pdu else {
                Issue.record("decoded as \(pdu.summary)"); return
            }
            #expect(type == .passkeyDigitEntered)
            #expect(pdu.summary == "Pairing Keypress Notification passkey digit entered")
        }
    }

    @Test func unknownCode() {
        // 20 (not assigned) | aa bb
        smp([0x20, 0xAA, 0xBB]) { pdu in
            guard case .unknown(let code, let parameters) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(code.rawValue == 0x20)
            #expect(Array(parameters) == [0xAA, 0xBB])
            #expect(pdu.summary == "Unknown SMP 0x20 len 2")
        }
    }

    @Test(arguments: [
        // empty
        [],
        // 01 Pairing Request with 3 of 6 parameter bytes
        [0x01, 0x03, 0x00, 0x09],
        // 03 Pairing Confirm with 15 bytes
        [0x03] + [UInt8](repeating: 0xAB, count: 15),
        // 05 Pairing Failed without a reason
        [0x05],
        // 07 Central Identification with EDIV only
        [0x07, 0x34, 0x12],
        // 09 Identity Address Information with a 5-byte address
        [0x09, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05],
        // 0c Pairing Public Key with only X
        [0x0C] + [UInt8](repeating: 0x11, count: 32),
    ] as [[UInt8]])
    func malformed(_ input: [UInt8]) {
        smp(input) { pdu in
            guard case .malformed(let code, _) = pdu else { Issue.record("decoded as \(pdu.summary)"); return }
            #expect(code.rawValue == (input.first ?? 0))
            #expect(pdu.isMalformed)
            #expect(pdu.summary.hasPrefix("Malformed "))
        }
    }

    @Test func neverTraps() {
        var decoded = 0
        for code in 0...255 {
            for length in 0...70 {
                smp([UInt8(code)] + [UInt8](repeating: 0x5A, count: length)) { pdu in
                    _ = pdu.summary
                    _ = pdu.fields
                    decoded += 1
                }
            }
        }
        #expect(decoded == 256 * 71)
    }
}
