import BTWire

/// Link setup, parameter changes and teardown, in the event order controllers produce
/// (Core Vol 4 Part E §7.8.12, §7.8.18, §7.8.66, §7.1.6).
extension HCIScript {
    /// A connection update takes effect at an instant at least 6 events ahead (Core Vol 6 Part B §5.1.1).
    public static let updateInstantEvents: Int64 = 6
    /// Time for the initiator to catch the peer's next advertisement.
    public static let establishDelay: ClosedRange<Int64> = 20_000...180_000

    /// How the central asks for a link.
    public enum ConnectMethod: Sendable {
        /// LE Create Connection → Command Status → LE Connection Complete.
        case legacy
        /// LE Extended Create Connection on the PHYs in the mask → Command Status → LE Enhanced Connection
        /// Complete.
        case extended(phyMask: UInt8)
    }

    /// The capturing host connects as central. The controller picks `chosenInterval`, or the largest allowed.
    /// `acceptList`: the initiator connects to whichever device on the accept list it hears first (Android's
    /// background connection to bonded devices). `whileInitiating` runs between the Command Status and the
    /// connection (Android re-programs its scan there).
    @discardableResult
    public func connect(to peer: PeerAddress, handle: UInt16, parameters: ConnectionParameters, scanInterval: UInt16,
                        scanWindow: UInt16, method: ConnectMethod = .legacy,
                        chosenInterval: UInt16? = nil, acceptList: Bool = false,
                        whileInitiating: (() -> Void)? = nil) -> LEConnection {
        let info = ConnectionCompleteInfo(handle: handle, role: LEParameter.centralRole, peer: peer,
                                          interval: chosenInterval ?? parameters.intervalMax,
                                          latency: parameters.latency,
                                          supervisionTimeout: parameters.supervisionTimeout)
        switch method {
        case .legacy:
            commandStatus(.leCreateConnection(peer: peer, scanInterval: scanInterval, scanWindow: scanWindow,
                                              parameters: parameters, useAcceptList: acceptList))
            whileInitiating?()
            pause(Self.establishDelay)
            emit(.leConnectionComplete(info))
        case .extended(let mask):
            commandStatus(.leExtendedCreateConnection(peer: peer, phyMask: mask, scanInterval: scanInterval,
                                                      scanWindow: scanWindow, parameters: parameters))
            whileInitiating?()
            pause(Self.establishDelay)
            emit(.leEnhancedConnectionComplete(info))
        }
        return opened(info)
    }

    /// A remote central connects to the capturing host while it advertises (no command on our side).
    @discardableResult
    public func acceptConnection(from peer: PeerAddress, handle: UInt16, interval: UInt16, latency: UInt16 = 0,
                                 supervisionTimeout: UInt16, enhanced: Bool) -> LEConnection {
        let info = ConnectionCompleteInfo(handle: handle, role: LEParameter.peripheralRole, peer: peer,
                                          interval: interval, latency: latency, supervisionTimeout: supervisionTimeout)
        emit(enhanced ? .leEnhancedConnectionComplete(info) : .leConnectionComplete(info))
        return opened(info)
    }

    func opened(_ info: ConnectionCompleteInfo) -> LEConnection {
        pause(timing.hostReaction)
        return LEConnection(handle: info.handle, peer: info.peer, role: info.role, interval: info.interval,
                            latency: info.latency, supervisionTimeout: info.supervisionTimeout)
    }

    /// The host disconnects: Disconnect → Command Status → Disconnection Complete. The local event carries
    /// 0x16 (terminated by local host) even though the peer is told `reason` (0x13 by default).
    public func disconnect(_ connection: LEConnection, reason: HCIStatus = .remoteUserTerminatedConnection) {
        commandStatus(.disconnect(handle: connection.handle, reason: reason))
        advance(airDelay(connection))
        emit(.disconnectionComplete(handle: connection.handle, reason: .connectionTerminatedByLocalHost))
        closed(connection)
    }

    /// The peer ends the link, or it is lost (reason 0x08 supervision timeout).
    public func peerDisconnects(_ connection: LEConnection, reason: HCIStatus = .remoteUserTerminatedConnection) {
        emit(.disconnectionComplete(handle: connection.handle, reason: reason))
        closed(connection)
    }

    func closed(_ connection: LEConnection) {
        connection.isOpen = false
        forgetCompletions(handle: connection.handle)
        pause(timing.hostReaction)
    }

    /// The central's host changes parameters: LE Connection Update → Command Status → (instant) →
    /// LE Connection Update Complete.
    public func updateConnection(_ connection: LEConnection, parameters: ConnectionParameters,
                                 chosenInterval: UInt16? = nil) {
        commandStatus(.leConnectionUpdate(handle: connection.handle, parameters: parameters))
        advance(connection.intervalMicroseconds * Self.updateInstantEvents + delay(timing.airJitter))
        applyUpdate(connection, interval: chosenInterval ?? parameters.intervalMax, parameters: parameters)
    }

    func applyUpdate(_ connection: LEConnection, interval: UInt16, parameters: ConnectionParameters) {
        emit(.leConnectionUpdateComplete(handle: connection.handle, interval: interval, latency: parameters.latency,
                                         supervisionTimeout: parameters.supervisionTimeout))
        connection.interval = interval
        connection.latency = parameters.latency
        connection.supervisionTimeout = parameters.supervisionTimeout
        pause(timing.hostReaction)
    }

    /// LL maximum transmission time for `octets` at 1M: (octets + 14) × 8 µs (Core Vol 6 Part B §4.5.10).
    public static func maxTime(octets: UInt16) -> UInt16 {
        let overheadBytes: UInt16 = 14
        let microsecondsPerByte: UInt16 = 8
        return (octets + overheadBytes) * microsecondsPerByte
    }

    /// The link layer renegotiated its payload size; optionally the host asked for it first
    /// (LE Set Data Length → Command Complete).
    public func changeDataLength(_ connection: LEConnection, txOctets: UInt16, rxOctets: UInt16, hostRequested: Bool) {
        if hostRequested {
            commandComplete(.leSetDataLength(handle: connection.handle, txOctets: txOctets,
                                             txTime: Self.maxTime(octets: txOctets)),
                            returning: ByteWriter.build { w in
                                w.u8(HCIStatus.success.rawValue)
                                w.u16(connection.handle)
                            })
        }
        advance(airDelay(connection))
        emit(.leDataLengthChange(handle: connection.handle, maxTxOctets: txOctets, maxTxTime: Self.maxTime(octets: txOctets),
                                 maxRxOctets: rxOctets, maxRxTime: Self.maxTime(octets: rxOctets)))
        connection.maxTxOctets = txOctets
        connection.maxRxOctets = rxOctets
        pause(timing.hostReaction)
    }

    /// LE Set PHY → Command Status → PHY Update Complete.
    public func setPHY(_ connection: LEConnection, phyBit: UInt8, resultingPHY: UInt8) {
        commandStatus(.leSetPHY(handle: connection.handle, txPHYs: phyBit, rxPHYs: phyBit))
        advance(connection.intervalMicroseconds * Self.updateInstantEvents + delay(timing.airJitter))
        emit(.lePHYUpdateComplete(handle: connection.handle, txPHY: resultingPHY, rxPHY: resultingPHY))
        pause(timing.hostReaction)
    }

    /// LE Read Remote Features → Command Status → Remote Features Complete.
    public func readRemoteFeatures(_ connection: LEConnection, features: UInt64) {
        commandStatus(.leReadRemoteFeatures(handle: connection.handle))
        advance(airDelay(connection))
        emit(.leRemoteFeaturesComplete(handle: connection.handle, features: features))
        pause(timing.hostReaction)
    }

    /// LE Read RSSI → Command Complete with the value.
    public func readRSSI(_ connection: LEConnection, rssi: Int8) {
        commandComplete(.readRSSI(handle: connection.handle), returning: ByteWriter.build { w in
            w.u8(HCIStatus.success.rawValue)
            w.u16(connection.handle)
            w.i8(rssi)
        })
    }

    /// Starts encryption with `ltk`. As central: LE Enable Encryption → Command Status → Encryption Change.
    /// As peripheral: LTK Request → LTK Request Reply → Command Complete → Encryption Change.
    public func startEncryption(_ connection: LEConnection, ltk: [UInt8], random: UInt64, ediv: UInt16) {
        if connection.isCentral {
            commandStatus(.leEnableEncryption(handle: connection.handle, random: random, ediv: ediv, ltk: ltk))
            advance(airDelay(connection, events: 2...3))
        } else {
            emit(.leLongTermKeyRequest(handle: connection.handle, random: random, ediv: ediv))
            pause(timing.hostReaction)
            commandComplete(.leLongTermKeyRequestReply(handle: connection.handle, ltk: ltk),
                            returning: ByteWriter.build { w in
                                w.u8(HCIStatus.success.rawValue)
                                w.u16(connection.handle)
                            })
            advance(airDelay(connection, events: 1...2))
        }
        emit(.encryptionChange(handle: connection.handle, enabled: true))
        connection.encrypted = true
        pause(timing.hostReaction)
    }
}
