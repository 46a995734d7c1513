import BTWire

/// SMP pairing on CID 6 (Core Vol 3 Part H §2.3, §C): the messages, in order, with encryption started where
/// the specification puts it. Keys are random bytes from the script's generator: the captures show the
/// exchange, not working cryptography.
extension HCIScript {
    /// LE legacy pairing, Just Works, with the central's host initiating. Returns the LTK the peripheral
    /// distributed (what a later reconnection would encrypt with).
    @discardableResult
    public func pairLegacyJustWorks(_ connection: LEConnection) -> [UInt8] {
        let initiator: Side = connection.isCentral ? .local : .remote
        let responder = initiator.other
        let keys = SMPValues.encryptionKey | SMPValues.identityKey
        smp(SMPPDU.pairingRequest(.init(ioCapability: SMPValues.noInputNoOutput, authRequirements: SMPValues.bonding,
                                        initiatorKeys: keys, responderKeys: keys)), connection, from: initiator)
        smp(SMPPDU.pairingResponse(.init(ioCapability: SMPValues.noInputNoOutput, authRequirements: SMPValues.bonding,
                                         initiatorKeys: SMPValues.identityKey, responderKeys: SMPValues.encryptionKey)),
            connection, from: responder)
        smp(SMPPDU.confirm(rng.bytes(SMPValues.keyLength)), connection, from: initiator)
        smp(SMPPDU.confirm(rng.bytes(SMPValues.keyLength)), connection, from: responder)
        smp(SMPPDU.random(rng.bytes(SMPValues.keyLength)), connection, from: initiator)
        smp(SMPPDU.random(rng.bytes(SMPValues.keyLength)), connection, from: responder)
        // Encrypt with the short-term key (EDIV and Rand are zero for an STK).
        startEncryption(connection, ltk: rng.bytes(SMPValues.keyLength), random: 0, ediv: 0)
        let ltk = rng.bytes(SMPValues.keyLength)
        smp(SMPPDU.encryptionInformation(ltk: ltk), connection, from: responder)
        smp(SMPPDU.centralIdentification(ediv: UInt16(truncatingIfNeeded: rng.next()), random: rng.next()),
            connection, from: responder)
        smp(SMPPDU.identityInformation(irk: rng.bytes(SMPValues.keyLength)), connection, from: initiator)
        smp(SMPPDU.identityAddressInformation(PeerAddress(controller.address, type: LEParameter.publicAddress)),
            connection, from: initiator)
        return ltk
    }

    /// LE Secure Connections, Numeric Comparison: public keys (65-byte PDUs, so fragmented at 27), confirm,
    /// randoms, DHKey checks, encryption with the derived LTK, then identity key distribution.
    public func pairSecureConnections(_ connection: LEConnection) {
        let initiator: Side = connection.isCentral ? .local : .remote
        let responder = initiator.other
        let auth = SMPValues.bonding | SMPValues.mitm | SMPValues.secureConnections
        smp(SMPPDU.pairingRequest(.init(ioCapability: SMPValues.keyboardDisplay, authRequirements: auth,
                                        initiatorKeys: SMPValues.identityKey, responderKeys: SMPValues.identityKey)),
            connection, from: initiator)
        smp(SMPPDU.pairingResponse(.init(ioCapability: SMPValues.displayYesNo, authRequirements: auth,
                                         initiatorKeys: SMPValues.identityKey, responderKeys: SMPValues.identityKey)),
            connection, from: responder)
        let coordinate = SMPValues.publicKeyCoordinateLength
        smp(SMPPDU.publicKey(x: rng.bytes(coordinate), y: rng.bytes(coordinate)), connection, from: initiator)
        smp(SMPPDU.publicKey(x: rng.bytes(coordinate), y: rng.bytes(coordinate)), connection, from: responder)
        smp(SMPPDU.confirm(rng.bytes(SMPValues.keyLength)), connection, from: responder)
        smp(SMPPDU.random(rng.bytes(SMPValues.keyLength)), connection, from: initiator)
        smp(SMPPDU.random(rng.bytes(SMPValues.keyLength)), connection, from: responder)
        // The user compares six digits on both screens.
        wait(seconds: 2)
        smp(SMPPDU.dhKeyCheck(rng.bytes(SMPValues.keyLength)), connection, from: initiator)
        smp(SMPPDU.dhKeyCheck(rng.bytes(SMPValues.keyLength)), connection, from: responder)
        startEncryption(connection, ltk: rng.bytes(SMPValues.keyLength), random: 0, ediv: 0)
        smp(SMPPDU.identityInformation(irk: rng.bytes(SMPValues.keyLength)), connection, from: responder)
        smp(SMPPDU.identityAddressInformation(connection.peer), connection, from: responder)
        smp(SMPPDU.identityInformation(irk: rng.bytes(SMPValues.keyLength)), connection, from: initiator)
        smp(SMPPDU.identityAddressInformation(PeerAddress(controller.address, type: LEParameter.publicAddress)),
            connection, from: initiator)
    }

    /// One SMP PDU from `side`, with the time it takes the other side to answer.
    public func smp(_ pdu: [UInt8], _ connection: LEConnection, from side: Side) {
        sendL2CAP(pdu, cid: .smp, on: connection, from: side)
        if side == .local {
            completeTransmission(on: connection)
            advance(airDelay(connection, events: 0...1))
        } else {
            pause(timing.hostReaction)
        }
    }
}
