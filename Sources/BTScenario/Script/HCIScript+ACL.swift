import BTWire

/// ACL data: L2CAP frames split to the data length each side uses, and the Number Of Completed Packets
/// events that return the host's buffer credits.
extension HCIScript {
    /// Sends `payload` on `cid` from `side`, fragmented. Host packets are owed a completion, which
    /// `reportCompletedPackets()` pays (the ATT and signaling helpers do that once the data has gone out).
    public func sendL2CAP(_ payload: [UInt8], cid: L2CAPChannelID, on connection: LEConnection, from side: Side) {
        let packets = aclPackets(payload, cid: cid, on: connection, from: side)
        for (i, packet) in packets.enumerated() {
            if i > 0 { advance(fragmentGap(from: side, on: connection)) }
            emitACL(packet, from: side)
        }
        if side == .local { owe(handle: connection.handle, packets: packets.count) }
    }

    /// The ACL packets (headers included) that carry `payload` on `cid` from `side`.
    public func aclPackets(_ payload: [UInt8], cid: L2CAPChannelID, on connection: LEConnection,
                           from side: Side) -> [[UInt8]] {
        let frame = L2CAPFrame.basic(cid: cid, payload: payload)
        return ACLFragmenter.packets(handle: connection.handle, frame: frame, fromHost: side == .local,
                                     dataLength: side == .local ? hostACLDataLength : controllerACLDataLength)
    }

    /// Sends several PDUs at once with their fragments interleaved round robin, as a controller serving
    /// several links delivers them (reassembly is per handle, so this is legal and a good decoder test).
    public func sendInterleaved(_ transfers: [(payload: [UInt8], cid: L2CAPChannelID, connection: LEConnection, side: Side)]) {
        var queues = transfers.map { t in
            (side: t.side, handle: t.connection.handle, packets: aclPackets(t.payload, cid: t.cid, on: t.connection, from: t.side))
        }
        var index = 0
        var first = true
        while queues.contains(where: { !$0.packets.isEmpty }) {
            if !queues[index].packets.isEmpty {
                if !first { pause(timing.fragmentGap) }
                first = false
                let packet = queues[index].packets.removeFirst()
                emitACL(packet, from: queues[index].side)
                if queues[index].side == .local { owe(handle: queues[index].handle, packets: 1) }
            }
            index = (index + 1) % queues.count
        }
    }

    /// Emits Number Of Completed Packets for every host packet not yet reported (one entry per handle).
    public func reportCompletedPackets() {
        guard !pendingCompletions.isEmpty else { return }
        emit(.numberOfCompletedPackets(pendingCompletions))
        pendingCompletions.removeAll()
    }

    /// Waits until the link's next connection event has carried the host's data, then reports completion.
    public func completeTransmission(on connection: LEConnection) {
        guard !pendingCompletions.isEmpty else { return }
        let interval = connection.intervalMicroseconds
        advance(rng.int64(in: interval / 4...max(interval / 4, interval - interval / 8)))
        reportCompletedPackets()
    }

    func owe(handle: UInt16, packets: Int) {
        let count = UInt16(clamping: packets)
        if let i = pendingCompletions.firstIndex(where: { $0.handle == handle }) {
            pendingCompletions[i].count &+= count
        } else {
            pendingCompletions.append((handle, count))
        }
    }

    /// A controller forgets packets of a link that closed; no completion is reported for them.
    func forgetCompletions(handle: UInt16) {
        pendingCompletions.removeAll { $0.handle == handle }
    }

    /// The time between two fragments `side` sends back to back: the host's processing, or the air time of
    /// one LL data PDU for the peer.
    func fragmentGap(from side: Side, on connection: LEConnection) -> Int64 {
        side == .local ? delay(timing.fragmentGap) : remoteFragmentGap(connection)
    }

    /// Air time of one LL data PDU of the link's size at 1M, so remote fragments are spaced realistically.
    func remoteFragmentGap(_ connection: LEConnection) -> Int64 {
        let bitsPerMicrosecond: Int64 = 1
        let overheadBytes: Int64 = 14  // preamble, access address, header, MIC-less CRC
        let interFrameSpace: Int64 = 150
        let onAir = (Int64(connection.maxRxOctets) + overheadBytes) * 8 / bitsPerMicrosecond
        return onAir + interFrameSpace * 2 + delay(timing.fragmentGap)
    }

    // MARK: LE signaling (CID 5)

    /// The peripheral asks the central for new parameters (L2CAP Connection Parameter Update Request on CID 5)
    /// and the central answers. When the capturing host is the central and accepts, it then runs
    /// LE Connection Update itself; when it is the peripheral, the central's controller applies the
    /// update and ours reports Connection Update Complete.
    public func requestConnectionParameters(_ parameters: ConnectionParameters, on connection: LEConnection,
                                            accept: Bool = true, chosenInterval: UInt16? = nil) {
        let identifier = signalingIdentifier()
        let peripheral: Side = connection.isCentral ? .remote : .local
        sendL2CAP(L2CAPFrame.connectionParameterUpdateRequest(identifier: identifier, parameters),
                  cid: .leSignaling, on: connection, from: peripheral)
        if peripheral == .local { completeTransmission(on: connection) }
        let responseAt = elapsed + airDelay(connection)
        if peripheral == .remote {
            pause(timing.hostReaction)
        } else {
            advance(toElapsed: responseAt)
        }
        sendL2CAP(L2CAPFrame.connectionParameterUpdateResponse(identifier: identifier, accepted: accept),
                  cid: .leSignaling, on: connection, from: peripheral.other)
        if peripheral == .remote { completeTransmission(on: connection) }
        guard accept else { return }
        if connection.isCentral {
            pause(timing.hostReaction)
            updateConnection(connection, parameters: parameters, chosenInterval: chosenInterval)
        } else {
            // The central's controller schedules the change at an instant 6+ events ahead.
            advance(connection.intervalMicroseconds * Self.updateInstantEvents + delay(timing.airJitter))
            applyUpdate(connection, interval: chosenInterval ?? parameters.intervalMax, parameters: parameters)
        }
    }
}
