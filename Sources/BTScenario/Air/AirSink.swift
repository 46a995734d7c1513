import BTCapture
import BTDecode
import BTWire

/// A scenario written as an LE air sniffer following its links would capture it (pcap, linktype 272, 256,
/// 251 or PPI). It translates the HCI stream the scenario produces into what the air carried:
/// - advertising reports → the advertiser's PDUs (ADV_IND, ADV_DIRECT_IND, ADV_NONCONN_IND, ADV_SCAN_IND; a
///   scan response as SCAN_REQ + SCAN_RSP; extended reports as ADV_EXT_IND + AUX_ADV_IND / AUX_CHAIN_IND) on a
///   primary channel, just before the report, with its RSSI;
/// - LE (Enhanced) Connection Complete → the peripheral's ADV_IND and the CONNECT_IND just before it, then
///   connection events (`AirLinkPlayer`) with ACL data as LL data PDUs, empty PDUs when idle;
/// - Connection Update / PHY Update / Data Length Change / Encryption Change / Disconnection Complete → the LL
///   procedures that led to them;
/// and plants `AirImpairments`. Everything not in the HCI stream comes from `options.seed`.
public final class AirSink: PacketSink {
    public let options: AirOptions
    let writer: LinkLayerRecordWriter
    var rng: SplitMix64
    /// Decides the packets the sniffer misses: a stream of its own, so that the other impairments plant the same
    /// damage with or without loss.
    var lossRNG: SplitMix64
    static let lossSeed: UInt64 = 0x4C4F_5353
    var localAddress: UInt64 = 0
    var links: [AirLinkPlayer] = []
    var heap = AirPacketHeap()
    var sequence: UInt64 = 0
    var lastTime: Int64 = 0
    var connections = 0
    /// Host LE Set Data Length commands not yet answered by Data Length Change, by handle.
    var dataLengthRequests: Set<UInt16> = []
    /// LE Enable Encryption / LTK Request parameters by handle.
    var encryptionParameters: [UInt16: (random: UInt64, ediv: UInt16)] = [:]
    /// Extended advertisers whose data continues in the next report (AUX_CHAIN_IND), by address.
    var openChains: Set<UInt64> = []
    var scratch: [UInt8] = []
    public internal(set) var tally = AirTally()
    /// The host's LE (Extended) Create Connection waiting for its Connection Complete.
    var pendingCreate: PendingCreate?

    /// What a create-connection command asked for: whom, and the parameters the controller would have chosen.
    struct PendingCreate {
        var time: Int64
        /// nil: any device on the accept list.
        var peer: UInt64?
        var peerRandom: Bool
        var interval: UInt16
        var latency: UInt16
        var timeout: UInt16
    }

    /// Advertising PDUs and the CONNECT_IND go on air at most this long before their HCI event.
    static let reportLeadMaximum: Int64 = 10_000
    /// How long (µs) packets are held back for a create-connection command that may still fail.
    static let attemptHoldMaximum: Int64 = 30_000_000
    static let fullChannelMap: UInt64 = (1 << 37) - 1
    static let primaryChannels: ClosedRange<Int> = 37...39
    static let firmwareClockOffset: ClosedRange<Int64> = 1_000_000...60_000_000

    public init(path: String, options: AirOptions = AirOptions()) throws {
        self.options = options
        rng = SplitMix64(seed: options.seed)
        lossRNG = SplitMix64(seed: options.seed ^ Self.lossSeed)
        writer = try LinkLayerRecordWriter(path: path, container: options.container)
        scratch.reserveCapacity(300)
    }

    /// Bytes written to the file so far.
    public var bytesWritten: Int64 { writer.bytesWritten }

    public func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {
        localAddress = controller.address.rawValue
        // The sniffer's firmware clock started a while before the capture.
        writer.encoder.firmwareEpoch = timestamp.microseconds - rng.int64(in: Self.firmwareClockOffset)
        lastTime = timestamp.microseconds
    }

    public func note(_ text: String, timestamp: Timestamp) throws {}

    public func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp,
                       payload: UnsafeRawBufferPointer) throws {
        let t = max(lastTime, timestamp.microseconds)
        lastTime = t
        switch kind {
        case .command: command(payload, at: t)
        case .event: event(payload, at: t)
        case .acl: acl(payload, sent: direction == .sent, at: t)
        default: break
        }
        var watermark = t - Self.reportLeadMaximum
        // A pending attempt may still fail: its packets would go on air from its command on. An attempt the HCI
        // stream never ends is let go after a while, so that the packets held back stay few.
        if let pending = pendingCreate {
            if t - pending.time > Self.attemptHoldMaximum { pendingCreate = nil } else { watermark = min(watermark, pending.time) }
        }
        var i = 0
        while i < links.count {
            let link = links[i]
            link.run(until: t - link.lag, into: self)
            if link.isEnded {
                links.remove(at: i)
                continue
            }
            watermark = min(watermark, link.nextEvent)
            i += 1
        }
        try flush(before: watermark)
    }

    public func finish() throws {
        for link in links {
            link.run(until: lastTime + link.interval, into: self)
        }
        links.removeAll()
        try flush(before: .max)
        try writer.finish()
    }

    // MARK: Output

    func flush(before time: Int64) throws {
        while let top = heap.top, top.time < time {
            let p = heap.pop()
            try p.bytes.withUnsafeBytes { try writer.write(p.info, packet: $0) }
            tally.packets += 1
        }
    }

    func push(_ info: LinkLayerRecordInfo, _ bytes: [UInt8]) {
        if !info.isAdvertising && chance(options.impairments.snifferLossRate, &lossRNG) {
            tally.snifferMissed += 1
            return
        }
        sequence += 1
        heap.push(AirPacket(time: info.microseconds, sequence: sequence, info: info, bytes: bytes))
    }

    /// Air time at 1M (8 µs per byte with the preamble) or 2M, of a packet whose PDU is `octets` long.
    func airTime(octets: Int, phy: UInt8) -> Int64 {
        LEAirTime.nanoseconds(bytes: 4 + octets + 3, phy: phy == 1 ? .le2M : .le1M) / 1000
    }

    func chance(_ rate: Double, _ rng: inout SplitMix64) -> Bool {
        guard rate > 0 else { return false }
        return Double(rng.next() >> 11) / Double(1 << 53) < rate
    }

    /// Access address, PDU (header and payload) and CRC.
    func llPacket(accessAddress: UInt32, pdu: [UInt8], crcInit: UInt32, crcPDU: [UInt8]? = nil, crcOK: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(pdu.count + 7)
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: accessAddress >> (8 * UInt32(i)))) }
        out.append(contentsOf: pdu)
        var crc = (crcPDU ?? pdu).withUnsafeBytes { LLCRC.compute($0, initialValue: crcInit) }
        if !crcOK { crc ^= AirLinkPlayer.crcDamage }
        for i in 0..<3 { out.append(UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i)))) }
        return out
    }

    /// Writes one data PDU of `link` from `side` (0 central) at `time`; returns when it ends on air. `resend`: the
    /// same PDU was heard before (a retransmission), so it is not tallied again.
    func emitData(_ link: AirLinkPlayer, side: Int, pdu: AirPDU, header: UInt8, time: Int64, channel: UInt8, crcOK: Bool,
                  resend: Bool = false) -> Int64 {
        let onAir = pdu.cipher ?? pdu.payload
        scratch.removeAll(keepingCapacity: true)
        scratch.append(header)
        scratch.append(UInt8(truncatingIfNeeded: onAir.count))
        scratch.append(contentsOf: onAir)
        // A PDU queued before its side started encrypting and resent after goes out as it was first sent: plaintext.
        let encryptedOnAir = pdu.cipher != nil || (link.sides[side].encrypting && pdu.isEmpty)
        let flagged = options.container != .leLL && options.container != .ppi
        let bytes: [UInt8]
        var encryption = LinkLayerRecordInfo.Encryption.plaintext
        if encryptedOnAir && flagged {
            encryption = options.decrypt ? .decrypted : .encrypted
        }
        if pdu.cipher != nil && flagged && options.decrypt {
            // The sniffer decrypted it: plaintext, the MIC gone, the CRC still that of the ciphertext (as nRF).
            let plain = [header, UInt8(truncatingIfNeeded: pdu.payload.count)] + pdu.payload
            bytes = llPacket(accessAddress: link.accessAddress, pdu: plain, crcInit: link.crcInit, crcPDU: scratch, crcOK: crcOK)
        } else {
            bytes = llPacket(accessAddress: link.accessAddress, pdu: scratch, crcInit: link.crcInit, crcOK: crcOK)
        }
        let air = airTime(octets: scratch.count, phy: link.phy)
        let rssi = Int8(clamping: Int(link.sides[side].rssi) + rng.int(in: -2...2))
        let info = LinkLayerRecordInfo(microseconds: time, channel: channel, rssi: rssi, isAdvertising: false,
                                       direction: side == 0 ? .centralToPeripheral : .peripheralToCentral,
                                       crcOK: crcOK, encryption: encryption, phy: link.phy,
                                       eventCounter: link.counter, airMicroseconds: air)
        push(info, bytes)
        if crcOK && !resend {
            if pdu.isEmpty { tally.emptyPDUs += 1 } else { tally.dataPDUs += 1 }
            if pdu.cipher != nil { tally.encryptedPDUs += 1 }
        }
        return time + air
    }

    /// An advertising-channel PDU: header (type, ChSel, TxAdd, RxAdd, Length) and payload.
    @discardableResult
    func emitAdvertising(type: UInt8, txAdd: Bool, rxAdd: Bool = false, payload: [UInt8], time: Int64, channel: UInt8,
                         rssi: Int8, phy: UInt8 = 0, auxiliaryType: UInt8? = nil, drop: Bool = false) -> Int64 {
        let header = type | (txAdd ? 0x40 : 0) | (rxAdd ? 0x80 : 0)
        let pdu = [header, UInt8(truncatingIfNeeded: payload.count)] + payload
        let air = airTime(octets: pdu.count, phy: phy)
        guard !drop else { return time + air }
        let bytes = llPacket(accessAddress: LLCapturedPacket.advertisingAccessAddress, pdu: pdu,
                             crcInit: LLCRC.advertisingInitialValue)
        push(LinkLayerRecordInfo(microseconds: time, channel: channel, rssi: rssi, isAdvertising: true,
                                 phy: phy, auxiliaryType: auxiliaryType, airMicroseconds: air), bytes)
        tally.advertisingPDUs += 1
        return time + air
    }

    // MARK: HCI input

    func link(_ handle: UInt16) -> AirLinkPlayer? {
        links.last { $0.handle == handle && !$0.hciClosed }
    }

    func command(_ p: UnsafeRawBufferPointer, at t: Int64) {
        guard p.count >= 3 else { return }
        let opcode = UInt16(p[0]) | UInt16(p[1]) << 8
        let params = UnsafeRawBufferPointer(rebasing: p[3...])
        let handle = params.count >= 2 ? (UInt16(params[0]) | UInt16(params[1]) << 8) & HCIFraming.handleMask : 0
        switch opcode {
        case HCIOpcode.disconnect.rawValue where params.count >= 3:
            guard let l = link(handle), !l.localTerminateRequested else { return }
            l.localTerminateRequested = true
            l.procedures.append(AirProcedure(time: t, kind: .localTerminate(reason: params[2])))
        case HCIOpcode.leEnableEncryption.rawValue where params.count >= 12:
            encryptionParameters[handle] = (u64(params, 2), u16(params, 10))
        case HCIOpcode.leSetDataLength.rawValue:
            dataLengthRequests.insert(handle)
        case HCIOpcode.leCreateConnection.rawValue where params.count >= 21:
            // Scan interval, window, filter policy, peer type and address, own type, interval min/max, latency,
            // timeout [Core Vol 4 Part E §7.8.12].
            pendingCreate = PendingCreate(time: t, peer: params[4] == 0 ? address(params, 6) : nil,
                                          peerRandom: params[5] & 1 == 1, interval: u16(params, 13),
                                          latency: u16(params, 17), timeout: u16(params, 19))
        case HCIOpcode.leExtendedCreateConnection.rawValue where params.count >= 22:
            // Filter policy, own type, peer type and address, PHYs, then the first PHY's scan interval, window,
            // interval min/max, latency, timeout [§7.8.66].
            pendingCreate = PendingCreate(time: t, peer: params[0] == 0 ? address(params, 3) : nil,
                                          peerRandom: params[2] & 1 == 1, interval: u16(params, 14),
                                          latency: u16(params, 18), timeout: u16(params, 20))
        default:
            break
        }
    }

    func event(_ p: UnsafeRawBufferPointer, at t: Int64) {
        guard p.count >= 2 else { return }
        let code = p[0]
        let params = UnsafeRawBufferPointer(rebasing: p[2...])
        switch code {
        case HCIEventCode.disconnectionComplete.rawValue where params.count >= 4 && params[0] == 0:
            guard let l = link(u16(params, 1) & HCIFraming.handleMask) else { return }
            l.hciClosed = true
            if l.localTerminateRequested { return }
            if params[3] == HCIStatus.connectionTimeout.rawValue {
                // The link was lost: silence for the supervision timeout, no LL_TERMINATE_IND.
                l.stopAt = t - Int64(l.timeout) * Int64(LLConnectionRequestData.timeoutUnitMicroseconds)
            } else {
                l.procedures.append(AirProcedure(time: t, kind: .peerTerminate(reason: params[3])))
            }
        case HCIEventCode.encryptionChange.rawValue, HCIEventCode.encryptionChangeV2.rawValue:
            guard params.count >= 4, params[0] == 0, params[3] != 0,
                  let l = link(u16(params, 1) & HCIFraming.handleMask), !l.sides[0].encrypting else { return }
            let e = encryptionParameters[l.handle] ?? (0, 0)
            l.procedures.append(AirProcedure(time: t, kind: .encryption(random: e.random, ediv: e.ediv)))
        case HCIEventCode.commandStatus.rawValue where params.count >= 4 && params[0] != HCIStatus.success.rawValue:
            // The controller refused the create command: no attempt on the air.
            let opcode = u16(params, 2)
            if opcode == HCIOpcode.leCreateConnection.rawValue || opcode == HCIOpcode.leExtendedCreateConnection.rawValue {
                pendingCreate = nil
            }
        case HCIEventCode.leMeta.rawValue where !params.isEmpty:
            leMeta(params[0], UnsafeRawBufferPointer(rebasing: params[1...]), at: t)
        default:
            break
        }
    }

    func leMeta(_ subevent: UInt8, _ p: UnsafeRawBufferPointer, at t: Int64) {
        switch subevent {
        case LESubevent.advertisingReport.rawValue:
            legacyReports(p, at: t)
        case LESubevent.extendedAdvertisingReport.rawValue:
            extendedReports(p, at: t)
        case LESubevent.connectionComplete.rawValue where p.count >= 18:
            connectionComplete(p, enhanced: false, at: t)
        case LESubevent.enhancedConnectionComplete.rawValue where p.count >= 30,
             LESubevent.enhancedConnectionCompleteV2.rawValue where p.count >= 30:
            connectionComplete(p, enhanced: true, at: t)
        case LESubevent.connectionUpdateComplete.rawValue where p.count >= 9 && p[0] == 0:
            guard let l = link(u16(p, 1) & HCIFraming.handleMask) else { return }
            l.procedures.append(AirProcedure(time: t, kind: .update(interval: u16(p, 3), latency: u16(p, 5), timeout: u16(p, 7))))
        case LESubevent.longTermKeyRequest.rawValue where p.count >= 12:
            encryptionParameters[u16(p, 0) & HCIFraming.handleMask] = (u64(p, 2), u16(p, 10))
        case LESubevent.dataLengthChange.rawValue where p.count >= 10:
            let handle = u16(p, 0) & HCIFraming.handleMask
            guard let l = link(handle) else { return }
            let local = dataLengthRequests.remove(handle) != nil
            l.procedures.append(AirProcedure(time: t, kind: .dataLength(tx: u16(p, 2), rx: u16(p, 6), localInitiated: local)))
        case LESubevent.phyUpdateComplete.rawValue where p.count >= 5 && p[0] == 0:
            guard let l = link(u16(p, 1) & HCIFraming.handleMask) else { return }
            l.procedures.append(AirProcedure(time: t, kind: .phy(tx: p[3], rx: p[4], localInitiated: true)))
        default:
            break
        }
    }

    func acl(_ p: UnsafeRawBufferPointer, sent: Bool, at t: Int64) {
        guard p.count >= 4 else { return }
        let word = u16(p, 0)
        guard let l = link(word & HCIFraming.handleMask) else { return }
        let length = min(Int(u16(p, 2)), p.count - 4)
        guard length > 0 else { return }
        let continuation = word >> HCIFraming.packetBoundaryShift & 3 == PacketBoundary.continuation.rawValue
        l.addData(AirData(time: t, continuation: continuation, bytes: Array(p[4..<4 + length])), fromLocal: sent)
    }

    // MARK: Connections

    /// CONNECT_IND just before the Connection Complete, and a new link whose first event follows the
    /// transmit window.
    func connectionComplete(_ p: UnsafeRawBufferPointer, enhanced: Bool, at t: Int64) {
        let localIsCentral = p[3] == LEParameter.centralRole
        let attempt = localIsCentral || p[0] != HCIStatus.success.rawValue ? pendingCreate : nil
        if attempt != nil { pendingCreate = nil }
        guard p[0] == HCIStatus.success.rawValue else {
            if p[0] == HCIStatus.connectionFailedToBeEstablished.rawValue, let attempt { failedToEstablish(attempt, at: t) }
            return
        }
        let handle = u16(p, 1) & HCIFraming.handleMask
        var peerRandom = p[4] & 1 == 1
        var peer = address(p, 5)
        var localRandom = false
        var local = localAddress
        var at = 11
        if enhanced {
            let localRPA = address(p, 11), peerRPA = address(p, 17)
            if localRPA != 0 { local = localRPA; localRandom = true }
            if peerRPA != 0 { peer = peerRPA; peerRandom = true }
            at = 23
        }
        let interval = u16(p, at), latency = u16(p, at + 2), timeout = u16(p, at + 4)
        connections += 1
        var linkRNG = SplitMix64(seed: options.seed ^ UInt64(connections) &* 0x9E37_79B9_7F4A_7C15)
        let aa = Self.accessAddress(&linkRNG)
        let crcInit = UInt32(truncatingIfNeeded: linkRNG.next()) & 0xFF_FFFF
        let hop = UInt8(linkRNG.int(in: 5...16))
        let windowSize = UInt8(min(2, max(1, Int(interval) - 1)))
        let windowOffset = UInt16(linkRNG.int(in: 0...max(0, Int(interval) - 1)))
        let sca = UInt8(linkRNG.int(in: 0...7))

        let (initA, initRandom, advA, advRandom) = localIsCentral ? (local, localRandom, peer, peerRandom)
                                                                  : (peer, peerRandom, local, localRandom)
        let channel = UInt8(rng.int(in: Self.primaryChannels))
        let connectAir = airTime(octets: 2 + 34, phy: 0)
        let connectAt = t - connectAir - rng.int64(in: 300...2_000)
        let peripheralRSSI = Int8(rng.int(in: -75...(-45)))
        let drop = options.impairments.missConnect && connections == 1
        connectRequest(initA: initA, initRandom: initRandom, advA: advA, advRandom: advRandom, accessAddress: aa,
                       crcInit: crcInit, windowSize: windowSize, windowOffset: windowOffset, interval: interval,
                       latency: latency, timeout: timeout, hop: hop, sca: sca, at: connectAt, channel: channel,
                       drop: drop, peripheralRSSI: peripheralRSSI)
        let slot = AirLinkPlayer.slotMicroseconds
        let windowStart = connectAt + connectAir + slot + Int64(windowOffset) * slot
        let firstEvent = windowStart + linkRNG.int64(in: 0...(Int64(windowSize) * slot - 300))
        let link = AirLinkPlayer(handle: handle, localIsCentral: localIsCentral, accessAddress: aa, crcInit: crcInit, hop: hop,
                           interval: interval, latency: latency, timeout: timeout, firstEvent: firstEvent, rng: linkRNG)
        link.sides[localIsCentral ? 1 : 0].rssi = peripheralRSSI
        links.append(link)
    }

    /// The peripheral's ADV_IND the initiator answered and, T_IFS after it, the CONNECT_IND at `at`.
    func connectRequest(initA: UInt64, initRandom: Bool, advA: UInt64, advRandom: Bool, accessAddress aa: UInt32,
                        crcInit: UInt32, windowSize: UInt8, windowOffset: UInt16, interval: UInt16, latency: UInt16,
                        timeout: UInt16, hop: UInt8, sca: UInt8, at connectAt: Int64, channel: UInt8, drop: Bool,
                        peripheralRSSI: Int8) {
        let advPayload = le48(advA) + [0x02, 0x01, 0x06]
        let advAt = connectAt - Int64(AirLinkPlayer.interFrameSpace) - airTime(octets: 2 + advPayload.count, phy: 0)
        emitAdvertising(type: LLAdvertisingPDUType.advInd.rawValue, txAdd: advRandom, payload: advPayload,
                        time: advAt, channel: channel, rssi: peripheralRSSI)
        let llData = ByteWriter.build { w in
            w.u32(aa)
            w.u24(crcInit)
            w.u8(windowSize)
            w.u16(windowOffset)
            w.u16(interval)
            w.u16(latency)
            w.u16(timeout)
            for i in 0..<5 { w.u8(UInt8(truncatingIfNeeded: Self.fullChannelMap >> (8 * UInt64(i)))) }
            w.u8(hop | sca << 5)
        }
        emitAdvertising(type: LLAdvertisingPDUType.connectInd.rawValue, txAdd: initRandom, rxAdd: advRandom,
                        payload: le48(initA) + le48(advA) + llData, time: connectAt, channel: channel,
                        rssi: Int8(rng.int(in: -75...(-45))), drop: drop)
        if drop { tally.connectRequestsDropped += 1 } else { tally.connectRequests += 1 }
    }

    /// Connection Failed to be Established (0x3E): the initiator heard the peer's ADV_IND and sent its
    /// CONNECT_IND, then the peripheral never answered: the central's empty PDU in each of the first six
    /// events (resent, as nothing acknowledged it), the last one an interval before the HCI event.
    func failedToEstablish(_ attempt: PendingCreate, at t: Int64) {
        tally.failedAttempts += 1
        // A seed of its own (not the links' count), so that the links after it keep their access addresses.
        var linkRNG = SplitMix64(seed: options.seed ^ UInt64(tally.failedAttempts) &* 0xC2B2_AE3D_27D4_EB4F)
        let aa = Self.accessAddress(&linkRNG)
        let crcInit = UInt32(truncatingIfNeeded: linkRNG.next()) & 0xFF_FFFF
        let hop = UInt8(linkRNG.int(in: 5...16))
        let peer = attempt.peer ?? (linkRNG.next() & 0x3FFF_FFFF_FFFF | 0xC000_0000_0000)  // a static random address
        let peerRandom = attempt.peer == nil || attempt.peerRandom
        let interval = max(attempt.interval, LLConnectionRequestData.minimumInterval)
        let slot = AirLinkPlayer.slotMicroseconds
        let intervalMicroseconds = Int64(interval) * slot
        let windowSize: UInt8 = 1
        let windowOffset: UInt16 = 0
        let connectAir = airTime(octets: 2 + 34, phy: 0)
        let setup = connectAir + slot + Int64(windowOffset) * slot
        let events = AirLinkPlayer.establishmentEvents
        let connectAt = max(attempt.time + 1_000, t - Int64(events) * intervalMicroseconds - setup)
        let player = AirLinkPlayer(handle: 0, localIsCentral: true, accessAddress: aa, crcInit: crcInit, hop: hop,
                                   interval: interval, latency: attempt.latency, timeout: attempt.timeout,
                                   firstEvent: connectAt + setup, rng: linkRNG)
        connectRequest(initA: localAddress, initRandom: false, advA: peer, advRandom: peerRandom, accessAddress: aa,
                       crcInit: crcInit, windowSize: windowSize, windowOffset: windowOffset, interval: interval,
                       latency: attempt.latency, timeout: attempt.timeout, hop: hop, sca: 0, at: connectAt,
                       channel: UInt8(rng.int(in: Self.primaryChannels)), drop: false,
                       peripheralRSSI: Int8(rng.int(in: -75...(-45))))
        var channel: UInt8 = 0
        for event in 0..<events {
            let time = player.nextEvent + Int64(event) * intervalMicroseconds
            guard time < t else { break }
            channel = (channel + hop) % AirLinkPlayer.dataChannels
            player.counter = UInt16(event)
            _ = emitData(player, side: 0, pdu: .empty, header: AirPDU.llidContinuation, time: time, channel: channel,
                         crcOK: true, resend: event > 0)
            tally.connectionEvents += 1
            if event > 0 { tally.retransmissions += 1 }
        }
    }

    /// A valid random access address [Core Vol 6 Part B §2.1.2]: not the advertising one nor one bit from it,
    /// no run of more than six equal bits, not four equal octets, at most 24 transitions, at least two in the
    /// six most significant bits.
    static func accessAddress(_ rng: inout SplitMix64) -> UInt32 {
        while true {
            let aa = UInt32(truncatingIfNeeded: rng.next())
            if isValidAccessAddress(aa) { return aa }
        }
    }

    public static func isValidAccessAddress(_ aa: UInt32) -> Bool {
        let adv = LLCapturedPacket.advertisingAccessAddress
        guard (aa ^ adv).nonzeroBitCount > 1 else { return false }
        let b0 = aa & 0xFF
        if aa == b0 | b0 << 8 | b0 << 16 | b0 << 24 { return false }
        var run = 1, transitions = 0, topTransitions = 0
        for i in 1..<32 {
            let same = (aa >> UInt32(i)) & 1 == (aa >> UInt32(i - 1)) & 1
            if same {
                run += 1
                if run > 6 { return false }
            } else {
                run = 1
                transitions += 1
                if i >= 27 { topTransitions += 1 }
            }
        }
        return transitions <= 24 && topTransitions >= 2
    }

    // MARK: Advertising reports

    func legacyReports(_ p: UnsafeRawBufferPointer, at t: Int64) {
        guard let count = p.first else { return }
        var o = 1
        for _ in 0..<count {
            guard o + 9 <= p.count else { return }
            let type = p[o], random = p[o + 1] & 1 == 1, adv = address(p, o + 2)
            let length = Int(p[o + 8])
            guard o + 9 + length + 1 <= p.count else { return }
            let data = Array(p[(o + 9)..<(o + 9 + length)])
            let rssi = Int8(bitPattern: p[o + 9 + length])
            o += 10 + length
            legacyPDU(reportType: type, random: random, address: adv, data: data, rssi: rssi, at: t)
        }
    }

    /// Legacy report event types 0–4 → PDU types ADV_IND, ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND, SCAN_RSP.
    func legacyPDU(reportType: UInt8, random: Bool, address: UInt64, data: [UInt8], rssi: Int8, at t: Int64) {
        let channel = UInt8(rng.int(in: Self.primaryChannels))
        let rssi = rssi == LEParameter.rssiUnavailable ? Int8(-60) : rssi
        let payload = le48(address) + data
        let type: LLAdvertisingPDUType
        switch reportType {
        case LegacyReportType.advInd: type = .advInd
        case LegacyReportType.directInd:
            let air = airTime(octets: 2 + 12, phy: 0)
            emitAdvertising(type: LLAdvertisingPDUType.advDirectInd.rawValue, txAdd: random,
                            payload: le48(address) + le48(localAddress),
                            time: t - air - rng.int64(in: 150...1_500), channel: channel, rssi: rssi)
            return
        case LegacyReportType.scanInd: type = .advScanInd
        case LegacyReportType.nonconnInd: type = .advNonconnInd
        case LegacyReportType.scanResponse:
            // Our scanner's SCAN_REQ, then the response T_IFS later.
            let responseAir = airTime(octets: 2 + payload.count, phy: 0)
            let responseAt = t - responseAir - rng.int64(in: 150...1_500)
            let requestAt = responseAt - Int64(AirLinkPlayer.interFrameSpace) - airTime(octets: 2 + 12, phy: 0)
            emitAdvertising(type: LLAdvertisingPDUType.scanReq.rawValue, txAdd: false, rxAdd: random,
                            payload: le48(localAddress) + le48(address), time: requestAt, channel: channel,
                            rssi: Int8(rng.int(in: -40...(-30))))
            emitAdvertising(type: LLAdvertisingPDUType.scanRsp.rawValue, txAdd: random, payload: payload,
                            time: responseAt, channel: channel, rssi: rssi)
            return
        default:
            return
        }
        let air = airTime(octets: 2 + payload.count, phy: 0)
        emitAdvertising(type: type.rawValue, txAdd: random, payload: payload, time: t - air - rng.int64(in: 150...1_500),
                        channel: channel, rssi: rssi)
    }

    func extendedReports(_ p: UnsafeRawBufferPointer, at t: Int64) {
        guard let count = p.first else { return }
        var o = 1
        for _ in 0..<count {
            guard o + 24 <= p.count else { return }
            let eventType = u16(p, o)
            let addressType = p[o + 2]
            let adv = address(p, o + 3)
            let secondaryPHY = p[o + 10], sid = p[o + 11]
            var rssi = Int8(bitPattern: p[o + 13])
            if rssi == LEParameter.rssiUnavailable { rssi = -60 }
            let length = Int(p[o + 23])
            guard o + 24 + length <= p.count else { return }
            let data = Array(p[(o + 24)..<(o + 24 + length)])
            o += 24 + length
            let random = addressType & 1 == 1 && addressType != 0xFF
            if eventType & ExtendedReportType.legacy != 0 {
                let legacyType: UInt8
                if eventType & ExtendedReportType.scanResponse != 0 {
                    legacyType = LegacyReportType.scanResponse
                } else if eventType & ExtendedReportType.directed != 0 {
                    legacyType = LegacyReportType.directInd
                } else if eventType & ExtendedReportType.connectable != 0 {
                    legacyType = LegacyReportType.advInd
                } else if eventType & ExtendedReportType.scannable != 0 {
                    legacyType = LegacyReportType.scanInd
                } else {
                    legacyType = LegacyReportType.nonconnInd
                }
                legacyPDU(reportType: legacyType, random: random, address: adv, data: data, rssi: rssi, at: t)
            } else {
                let status = eventType >> ExtendedReportType.dataStatusShift & 3
                extendedPDU(eventType: eventType, anonymous: addressType == 0xFF, random: random, address: adv,
                            sid: sid, secondaryPHY: secondaryPHY, data: data, rssi: rssi,
                            more: status == ExtendedReportType.dataIncomplete, at: t)
            }
        }
    }

    /// ADV_EXT_IND on a primary channel pointing to AUX_ADV_IND on a secondary one; a report that continues
    /// an incomplete one is its AUX_CHAIN_IND; a scan response is AUX_SCAN_RSP [Core Vol 6 Part B §2.3.4].
    func extendedPDU(eventType: UInt16, anonymous: Bool, random: Bool, address: UInt64, sid: UInt8, secondaryPHY: UInt8,
                     data: [UInt8], rssi: Int8, more: Bool, at t: Int64) {
        let phy: UInt8 = secondaryPHY == LEParameter.phy2M ? 1 : 0
        let adi = UInt16(sid & 0x0F) << 12 | UInt16(truncatingIfNeeded: address) & 0x0FFF
        let mode: UInt8 = eventType & ExtendedReportType.connectable != 0 ? 1
            : eventType & ExtendedReportType.scannable != 0 ? 2 : 0
        let secondary = UInt8(rng.int(in: 0...36))
        let auxOffsetUnits = UInt16(rng.int(in: 10...40))
        func auxPointer(_ channel: UInt8) -> [UInt8] {
            let offset = auxOffsetUnits | UInt16(phy) << 13
            return [channel & 0x3F, UInt8(truncatingIfNeeded: offset), UInt8(truncatingIfNeeded: offset >> 8)]
        }
        let chained = openChains.contains(address)
        if more { openChains.insert(address) } else { openChains.remove(address) }
        // The secondary PDU's extended header: AdvA (unless anonymous or a chain), ADI, AuxPtr when more follows.
        var flags: UInt8 = 0x08
        var fields: [UInt8] = []
        if !anonymous && !chained {
            flags |= 0x01
            fields += le48(address)
        }
        fields += [UInt8(truncatingIfNeeded: adi), UInt8(truncatingIfNeeded: adi >> 8)]
        if more {
            flags |= 0x10
            fields += auxPointer(UInt8(rng.int(in: 0...36)))
        }
        let secondaryPayload = [UInt8(1 + fields.count) | (chained ? 0 : mode << 6), flags] + fields
            + Array(data.prefix(255 - 2 - fields.count))
        let secondaryAir = airTime(octets: 2 + secondaryPayload.count, phy: phy)
        let secondaryAt = t - secondaryAir - rng.int64(in: 150...1_500)
        let scanResponse = eventType & ExtendedReportType.scanResponse != 0
        let type = LLAdvertisingPDUType.advExtInd.rawValue
        if chained {
            emitAdvertising(type: type, txAdd: false, payload: secondaryPayload, time: secondaryAt, channel: secondary,
                            rssi: rssi, phy: phy, auxiliaryType: 1)
            return
        }
        if scanResponse {
            let requestAt = secondaryAt - Int64(AirLinkPlayer.interFrameSpace) - airTime(octets: 2 + 12, phy: phy)
            emitAdvertising(type: LLAdvertisingPDUType.scanReq.rawValue, txAdd: false, rxAdd: random,
                            payload: le48(localAddress) + le48(address), time: requestAt, channel: secondary,
                            rssi: Int8(rng.int(in: -40...(-30))), phy: phy, auxiliaryType: 0)
            emitAdvertising(type: type, txAdd: random && !anonymous, payload: secondaryPayload, time: secondaryAt,
                            channel: secondary, rssi: rssi, phy: phy, auxiliaryType: 3)
            return
        }
        let primaryPayload: [UInt8] = [6 | mode << 6, 0x18, UInt8(truncatingIfNeeded: adi), UInt8(truncatingIfNeeded: adi >> 8)]
            + auxPointer(secondary)
        let primaryAt = secondaryAt - Int64(auxOffsetUnits) * 30
        emitAdvertising(type: type, txAdd: false, payload: primaryPayload, time: primaryAt,
                        channel: UInt8(rng.int(in: Self.primaryChannels)), rssi: rssi)
        emitAdvertising(type: type, txAdd: random && !anonymous, payload: secondaryPayload, time: secondaryAt,
                        channel: secondary, rssi: rssi, phy: phy, auxiliaryType: 0)
    }

    // MARK: Bytes

    func u16(_ p: UnsafeRawBufferPointer, _ o: Int) -> UInt16 { UInt16(p[o]) | UInt16(p[o + 1]) << 8 }

    func u64(_ p: UnsafeRawBufferPointer, _ o: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(p[o + $1]) << (8 * UInt64($1)) }
    }

    func address(_ p: UnsafeRawBufferPointer, _ o: Int) -> UInt64 {
        (0..<6).reduce(0) { $0 | UInt64(p[o + $1]) << (8 * UInt64($1)) }
    }

    func le48(_ a: UInt64) -> [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: a >> (8 * UInt64($0))) } }
}

/// A packet waiting for its turn: the sink writes in time order, and links play their events behind the HCI
/// stream, so packets are ordered here before they are written.
struct AirPacket {
    var time: Int64
    var sequence: UInt64
    var info: LinkLayerRecordInfo
    var bytes: [UInt8]

    @inline(__always) func precedes(_ other: AirPacket) -> Bool {
        time < other.time || (time == other.time && sequence < other.sequence)
    }
}

/// A binary min-heap by (time, sequence).
struct AirPacketHeap {
    var items: [AirPacket] = []

    var top: AirPacket? { items.first }

    mutating func push(_ p: AirPacket) {
        items.append(p)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].precedes(items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> AirPacket {
        let first = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count && items[l].precedes(items[m]) { m = l }
                if r < items.count && items[r].precedes(items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return first
    }
}
