import BTWire

/// The ATT bearer of one connection (CID 4): a client on one side, a simulated `GATTServer` on the other.
/// It moves PDUs over the script with the timing of the side that sends them: a remote server answers one
/// or two connection events later, the local host within a couple of milliseconds. Every host-sent PDU is
/// followed by its Number Of Completed Packets.
public final class ATTChannel {
    public let script: HCIScript
    public let connection: LEConnection
    public let server: GATTServer
    /// The side that runs the GATT client (sends requests, receives notifications).
    public let clientSide: Side
    public private(set) var mtu = ATTPDU.defaultMTU
    /// Requests sent and the responses they got, for callers that want to check what happened.
    public internal(set) var exchanges = 0
    /// The L2CAP channel the PDUs travel on.
    public private(set) var bearer = Bearer.unenhanced

    /// Unenhanced ATT (fixed CID 4), or an EATT channel (credit based, SPSM 0x0027) whose SDUs are cut into
    /// K-frames of at most `mps` bytes. Each side numbers its own end: PDUs to the local host travel on
    /// `localCID`, PDUs to the peer on `remoteCID`.
    public enum Bearer: Sendable, Equatable {
        case unenhanced
        case enhanced(localCID: UInt16, remoteCID: UInt16, mps: Int)
    }

    public init(script: HCIScript, connection: LEConnection, server: GATTServer, clientSide: Side) {
        self.script = script
        self.connection = connection
        self.server = server
        self.clientSide = clientSide
        server.linkEncrypted = connection.encrypted
    }

    public var serverSide: Side { clientSide.other }

    /// Sends `pdu` from `side` and, for the host, waits for its completion report.
    public func transmit(_ pdu: [UInt8], from side: Side) {
        switch bearer {
        case .unenhanced:
            script.sendL2CAP(pdu, cid: .att, on: connection, from: side)
        case .enhanced(let localCID, let remoteCID, let mps):
            let cid = L2CAPChannelID(rawValue: side == .local ? remoteCID : localCID)
            for (i, kFrame) in L2CAPFrame.kFrames(sdu: pdu, mps: mps).enumerated() {
                if i > 0 { script.advance(script.fragmentGap(from: side, on: connection)) }
                script.sendL2CAP(kFrame, cid: cid, on: connection, from: side)
            }
        }
        if side == .local { script.completeTransmission(on: connection) }
    }

    /// The local host opens an EATT bearer (L2CAP Credit Based Connection Request for SPSM 0x0027, Core Vol 3
    /// Part A §4.25) and the peer accepts it; later PDUs of this channel travel on it. Its MTU is the ATT MTU
    /// (EATT has no Exchange MTU).
    public func openEnhancedBearer(mtu: UInt16, mps: UInt16, localCID: UInt16 = L2CAPChannelID.firstDynamic,
                                   remoteCID: UInt16 = L2CAPChannelID.firstDynamic + 5, credits: UInt16 = 10) {
        let identifier = script.signalingIdentifier()
        script.sendL2CAP(L2CAPFrame.creditBasedConnectionRequest(identifier: identifier, spsm: .eatt, mtu: mtu, mps: mps,
                                                                 credits: credits, sourceCIDs: [localCID]),
                         cid: .leSignaling, on: connection, from: .local)
        script.completeTransmission(on: connection)
        script.advance(script.airDelay(connection))
        script.sendL2CAP(L2CAPFrame.creditBasedConnectionResponse(identifier: identifier, mtu: mtu, mps: mps,
                                                                  credits: credits, result: 0,
                                                                  destinationCIDs: [remoteCID]),
                         cid: .leSignaling, on: connection, from: .remote)
        bearer = .enhanced(localCID: localCID, remoteCID: remoteCID, mps: Int(mps))
        setMTU(Int(mtu))
        clientThinks()
    }

    /// Time from a PDU reaching `responder`'s side until its answer is on the wire.
    func reactionTime(of responder: Side, sentAt: Int64) -> Int64 {
        if responder == .local { return script.elapsed + script.delay(script.timing.hostReaction) }
        return sentAt + script.airDelay(connection)
    }

    /// A request from the client and the server's response; returns the response (an Error Response
    /// included). Returns nil when the server does not answer: the request then hangs for the ATT timeout.
    @discardableResult
    public func exchange(_ request: [UInt8]) -> [UInt8]? {
        server.linkEncrypted = connection.encrypted
        let sentAt = script.elapsed
        transmit(request, from: clientSide)
        exchanges += 1
        guard let response = server.respond(to: request) else { return nil }
        script.advance(toElapsed: reactionTime(of: serverSide, sentAt: sentAt))
        transmit(response, from: serverSide)
        clientThinks()
        return response
    }

    /// A request that never gets an answer (the peer stopped responding); ATT allows no further request on
    /// this bearer and the link is torn down 30 s later.
    public func sendUnanswered(_ request: [UInt8]) {
        let wasUnresponsive = server.unresponsive
        server.unresponsive = true
        _ = exchange(request)
        server.unresponsive = wasUnresponsive
    }

    /// A command from the client (Write Command): no response.
    public func command(_ pdu: [UInt8]) {
        server.linkEncrypted = connection.encrypted
        transmit(pdu, from: clientSide)
        _ = server.respond(to: pdu)
        clientThinks()
    }

    /// The gap before the client's next PDU: the local host's processing time, or for a remote client the
    /// wait for a later connection event.
    func clientThinks() {
        if clientSide == .local {
            script.pause(script.timing.hostReaction)
        } else {
            script.advance(script.airDelay(connection, events: 0...1))
        }
    }

    /// The server notifies `value` on the characteristic's value handle.
    public func notify(handle: UInt16, value: [UInt8]) {
        server.setValue(value, at: handle)
        transmit(ATTPDU.notification(handle: handle, value: Array(value.prefix(mtu - 3))), from: serverSide)
    }

    /// The server indicates `value`; the client's stack confirms it.
    public func indicate(handle: UInt16, value: [UInt8]) {
        server.setValue(value, at: handle)
        let sentAt = script.elapsed
        transmit(ATTPDU.indication(handle: handle, value: Array(value.prefix(mtu - 3))), from: serverSide)
        script.advance(toElapsed: reactionTime(of: clientSide, sentAt: sentAt))
        transmit(ATTPDU.confirmation, from: clientSide)
    }

    func setMTU(_ value: Int) {
        mtu = value
        server.mtu = value
    }
}
