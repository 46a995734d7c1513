import BTCapture
import BTDecode
import BTWire

/// ACL data the HCI stream carried on a link, waiting for the connection event that puts it on air.
struct AirData {
    var time: Int64
    /// Packet boundary "continuation": every LL fragment is LLID 1; otherwise the first is LLID 2.
    var continuation: Bool
    var bytes: [UInt8]
}

/// What the HCI stream says happened to a link, to be played on air around `time` (µs).
struct AirProcedure {
    enum Kind {
        /// LE Connection Update Complete: LL_CONNECTION_UPDATE_IND 6 events before the instant, which is the
        /// last event before the HCI event.
        case update(interval: UInt16, latency: UInt16, timeout: UInt16)
        /// LE PHY Update Complete (PHY 1 1M, 2 2M, 3 Coded).
        case phy(tx: UInt8, rx: UInt8, localInitiated: Bool)
        /// LE Data Length Change: LL_LENGTH_REQ/RSP in the last event before it.
        case dataLength(tx: UInt16, rx: UInt16, localInitiated: Bool)
        /// Encryption Change (on): LL_ENC_REQ/RSP, LL_START_ENC_REQ, LL_START_ENC_RSP × 2 over the 3 events
        /// before it.
        case encryption(random: UInt64, ediv: UInt16)
        /// Disconnection Complete without a Disconnect from our host: the peer's LL_TERMINATE_IND.
        case peerTerminate(reason: UInt8)
        /// Our host's Disconnect: our LL_TERMINATE_IND in the first event after the command.
        case localTerminate(reason: UInt8)
    }

    var time: Int64
    var kind: Kind
}

/// One side of a link: sequence numbers and what it has to send [Core Vol 6 Part B §4.5.9].
struct AirSide {
    var sn: UInt8 = 0
    var nesn: UInt8 = 0
    /// The PDU sent last and not acknowledged yet: sent again until it is.
    var unacked: AirPDU?
    /// The receiver refused `unacked` (planted), or was not listening (peripheral latency): its resend counts as
    /// a retransmission.
    var unackedRefused = false
    /// `unacked` went out with a good CRC already: sent again, it is a retransmission, not one more PDU.
    var unackedHeard = false
    var control: [AirPDU] = []
    var data: [AirPDU] = []
    var dataHead = 0
    /// Largest LL payload this side sends (27 until LL_LENGTH changes it).
    var maxTx = HCIFraming.leMinimumACLDataLength
    /// Sends encrypted PDUs (from its LL_START_ENC_RSP on).
    var encrypting = false
    /// Encryption is starting: only control PDUs go out until this side's LL_START_ENC_RSP.
    var dataPaused = false
    /// New encrypted PDUs sent: the CCM packet counter, which seeds the scrambled bytes.
    var cipherCounter: UInt64 = 0
    var rssi: Int8

    init(rssi: Int8) { self.rssi = rssi }

    var hasQueued: Bool { !control.isEmpty || (!dataPaused && dataHead < data.count) }

    /// Data (L2CAP) this side took and has not got across to `peer` yet: queued, or sent and not received (the
    /// peer's NESN still expects it).
    func hasPendingData(to peer: AirSide) -> Bool {
        if dataHead < data.count { return true }
        guard let u = unacked, u.llid != AirPDU.llidControl, !u.isEmpty else { return false }
        return peer.nesn == sn
    }

    /// The next PDU off the queues: control first.
    mutating func dequeue() -> AirPDU {
        if !control.isEmpty { return control.removeFirst() }
        guard !dataPaused, dataHead < data.count else { return .empty }
        let pdu = data[dataHead]
        dataHead += 1
        if dataHead >= 64 && dataHead * 2 >= data.count {
            data.removeFirst(dataHead)
            dataHead = 0
        }
        return pdu
    }

    /// `bytes` as LL PDUs of at most `maxTx` bytes: LLID 2 for the first unless it continues an HCI fragment.
    mutating func enqueue(_ d: AirData) {
        var offset = 0
        var first = true
        repeat {
            let n = min(maxTx, d.bytes.count - offset)
            let llid = first && !d.continuation ? AirPDU.llidStart : AirPDU.llidContinuation
            data.append(AirPDU(llid: llid, payload: Array(d.bytes[offset..<offset + n])))
            offset += n
            first = false
        } while offset < d.bytes.count
    }
}

/// One connection as a sniffer following it hears it: connection events every interval from the anchor, the
/// channel chosen by channel selection algorithm #1, the central sending first and the peripheral answering
/// T_IFS later, SN/NESN per §4.5.9, and the HCI stream's data and procedures placed in the events they took.
///
/// Its input runs ahead of its events by `lag` (8 intervals): an HCI event such as Connection Update Complete
/// reports what the air did several events before it, so the link plays an event only once the HCI stream
/// has passed it by that much.
final class AirLinkPlayer {
    let handle: UInt16
    let localIsCentral: Bool
    let accessAddress: UInt32
    let crcInit: UInt32
    let hop: UInt8
    var unmappedChannel: UInt8 = 0
    var intervalUnits: UInt16
    var latency: UInt16
    var timeout: UInt16
    var counter: UInt16 = 0
    var nextEvent: Int64
    /// 0 1M, 1 2M (the container's PHY coding).
    var phy: UInt8 = 0
    var pendingUpdate: (instant: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16)?
    var pendingPHY: (instant: UInt16, phy: UInt8)?
    var sides: [AirSide]
    var localData: [AirData] = []
    var localHead = 0
    var peerData: [AirData] = []
    var peerHead = 0
    var procedures: [AirProcedure] = []
    var scheduled: [(counter: UInt16, side: Int, pdu: AirPDU)] = []
    /// Disconnection Complete seen: the handle may be used again by a new link.
    var hciClosed = false
    var localTerminateRequested = false
    var encryptionParameters: (random: UInt64, ediv: UInt16) = (0, 0)
    /// Supervision timeout: no event at or after this time.
    var stopAt: Int64?
    var endAfterEvent = false
    private(set) var ended = false
    /// Events in a row the peripheral has slept through (peripheral latency).
    var skippedEvents: UInt16 = 0
    var rng: SplitMix64

    static let slotMicroseconds: Int64 = 1250
    static let interFrameSpace: Int64 = 150
    static let dataChannels: UInt8 = 37
    static let updateLeadEvents = 6
    /// Events a central sends to a peripheral that never answers before it gives up [Core Vol 6 Part B §4.5.2].
    static let establishmentEvents = 6
    static let encryptionLeadEvents = 2
    static let lagIntervals: Int64 = 8
    static let lagMargin: Int64 = 20_000
    static let micLength = 4
    /// What a bad CRC differs by from the right one.
    static let crcDamage: UInt32 = 0x80_0401

    init(handle: UInt16, localIsCentral: Bool, accessAddress: UInt32, crcInit: UInt32, hop: UInt8,
         interval: UInt16, latency: UInt16, timeout: UInt16, firstEvent: Int64, rng: SplitMix64) {
        self.handle = handle
        self.localIsCentral = localIsCentral
        self.accessAddress = accessAddress
        self.crcInit = crcInit
        self.hop = hop
        self.intervalUnits = interval
        self.latency = latency
        self.timeout = timeout
        self.nextEvent = firstEvent
        self.rng = rng
        sides = [AirSide(rssi: Int8(self.rng.int(in: -72...(-42)))), AirSide(rssi: Int8(self.rng.int(in: -72...(-42))))]
    }

    var interval: Int64 { Int64(intervalUnits) * Self.slotMicroseconds }
    var localIndex: Int { localIsCentral ? 0 : 1 }
    var peerIndex: Int { localIsCentral ? 1 : 0 }
    /// How far behind the HCI stream the link plays its events.
    var lag: Int64 { max(interval, Int64(pendingUpdate?.interval ?? 0) * Self.slotMicroseconds) * Self.lagIntervals + Self.lagMargin }
    var isEnded: Bool { ended }

    func addData(_ d: AirData, fromLocal: Bool) {
        if fromLocal { localData.append(d) } else { peerData.append(d) }
    }

    /// Plays every event that starts at or before `time`.
    func run(until time: Int64, into sink: AirSink) {
        while !ended && nextEvent <= time { runEvent(into: sink) }
    }

    // MARK: One connection event

    func runEvent(into sink: AirSink) {
        let e = nextEvent
        if let stop = stopAt, e >= stop {
            ended = true
            return
        }
        if let u = pendingUpdate, u.instant == counter {
            intervalUnits = u.interval
            latency = u.latency
            timeout = u.timeout
            pendingUpdate = nil
        }
        if let p = pendingPHY, p.instant == counter {
            phy = p.phy
            pendingPHY = nil
        }
        // Channel selection algorithm #1 with every channel used [Core Vol 6 Part B §4.5.8.2].
        unmappedChannel = (unmappedChannel + hop) % Self.dataChannels
        let channel = unmappedChannel
        takeInput(at: e)
        startProcedures(at: e)

        var t = e
        if peripheralSleeps() {
            // Peripheral latency [Core Vol 6 Part B §4.5.1]: an idle peripheral skips the event. The central
            // still sends; nobody acknowledges it, so it sends the same PDU again next time.
            skippedEvents += 1
            let (central, fresh) = transmit(0, sink: sink)
            _ = emit(0, central, fresh: fresh, time: t, channel: channel, crcOK: true, sink: sink)
            sides[0].unackedRefused = true
            sink.tally.connectionEvents += 1
            counter &+= 1
            nextEvent = e + interval
            return
        }
        skippedEvents = 0
        let end = e + interval - Self.interFrameSpace
        repeat {
            // The central opens each exchange.
            let (central, centralFresh) = transmit(0, sink: sink)
            let centralHeader = header(0, central)
            let corrupt = centralFresh && sink.chance(sink.options.impairments.crcErrorRate, &rng)
            t = emit(0, central, header: centralHeader, fresh: centralFresh, time: t, channel: channel, crcOK: !corrupt,
                     sink: sink) + Self.interFrameSpace
            if corrupt {
                // The peripheral did not get it either: no answer; the central closes the event and resends.
                sink.tally.crcErrors += 1
                break
            }
            receive(central, header: centralHeader, by: 1, sink: sink)
            let (peripheral, peripheralFresh) = transmit(1, sink: sink)
            let peripheralHeader = header(1, peripheral)
            t = emit(1, peripheral, header: peripheralHeader, fresh: peripheralFresh, time: t, channel: channel, crcOK: true,
                     sink: sink) + Self.interFrameSpace
            receive(peripheral, header: peripheralHeader, by: 0, sink: sink)
            if endAfterEvent { break }
            let more = sides[0].hasQueued || sides[1].hasQueued || sides[0].unacked != nil
            guard more, t + 2 * sink.airTime(octets: 2 + sides[0].maxTx + Self.micLength, phy: phy)
                + 2 * Self.interFrameSpace <= end else { break }
        } while true
        sink.tally.connectionEvents += 1

        if endAfterEvent {
            ended = true
            return
        }
        counter &+= 1
        nextEvent = e + interval
        if let u = pendingUpdate, u.instant == counter {
            // The instant's event opens at the old anchor + transmitWindowDelay + WinOffset (0) [§5.1.1].
            nextEvent += Self.slotMicroseconds
        }
    }

    /// Writes side `index`'s current PDU; returns when it ends on air. A resend of a PDU already heard with a good
    /// CRC is a retransmission: the tally counts the PDU once, as `stats` does.
    func emit(_ index: Int, _ pdu: AirPDU, header: UInt8? = nil, fresh: Bool, time: Int64, channel: UInt8, crcOK: Bool,
              sink: AirSink) -> Int64 {
        let resend = !fresh && sides[index].unackedHeard
        let end = sink.emitData(self, side: index, pdu: pdu, header: header ?? self.header(index, pdu), time: time,
                                channel: channel, crcOK: crcOK, resend: resend)
        sides[index].unackedHeard = (sides[index].unackedHeard && !fresh) || crcOK
        return end
    }

    /// The peripheral may sleep through this event: the link has latency left, neither side has anything to send
    /// (the central only its unacknowledged empty PDU), nothing is due at this event's instant, and the link is
    /// not ending.
    func peripheralSleeps() -> Bool {
        guard skippedEvents < latency, !endAfterEvent, stopAt == nil, !localTerminateRequested else { return false }
        guard !sides[0].hasQueued, !sides[1].hasQueued, sides[0].unacked?.isEmpty ?? true,
              sides[1].unacked?.isEmpty ?? true, procedures.isEmpty, scheduled.isEmpty else { return false }
        if let u = pendingUpdate, Int16(bitPattern: u.instant &- counter) <= 1 { return false }
        if let p = pendingPHY, Int16(bitPattern: p.instant &- counter) <= 1 { return false }
        return true
    }

    /// What side `index` sends now: its unacknowledged PDU again, or the next one (then fresh).
    func transmit(_ index: Int, sink: AirSink) -> (AirPDU, fresh: Bool) {
        if let u = sides[index].unacked {
            if sides[index].unackedRefused {
                sides[index].unackedRefused = false
                sink.tally.retransmissions += 1
            }
            return (u, false)
        }
        var pdu = sides[index].dequeue()
        if pdu.effect == .startEncryption {
            sides[index].encrypting = true
            sides[index].dataPaused = false
        }
        if sides[index].encrypting && !pdu.isEmpty {
            pdu.cipher = scramble(pdu.payload, side: index, counter: sides[index].cipherCounter)
            sides[index].cipherCounter += 1
        }
        sides[index].unacked = pdu
        return (pdu, true)
    }

    /// The header byte of side `index`'s current PDU: LLID, NESN, SN, MD.
    func header(_ index: Int, _ pdu: AirPDU) -> UInt8 {
        let s = sides[index]
        let md: UInt8 = s.hasQueued ? 0x10 : 0
        return pdu.llid | s.nesn << 2 | s.sn << 3 | md
    }

    /// Side `index` receives `pdu` (its header `h`): a new PDU is accepted unless a planted refusal says
    /// otherwise; a NESN that differs from this side's SN acknowledges what it sent last.
    func receive(_ pdu: AirPDU, header h: UInt8, by index: Int, sink: AirSink) {
        let sn = h >> 3 & 1, nesn = h >> 2 & 1
        let sender = 1 - index
        if sn == sides[index].nesn {
            if sink.chance(sink.options.impairments.retransmissionRate, &rng) {
                sides[sender].unackedRefused = true
            } else {
                sides[index].nesn ^= 1
                accepted(pdu, by: index)
            }
        }
        if nesn != sides[index].sn, sides[index].unacked != nil {
            sides[index].unacked = nil
            sides[index].unackedRefused = false
            sides[index].sn ^= 1
        }
    }

    func accepted(_ pdu: AirPDU, by index: Int) {
        switch pdu.effect {
        case .none: break
        case .terminate: endAfterEvent = true
        case .startEncryption:
            sides[index].encrypting = true
            sides[index].dataPaused = false
        }
        if let reply = pdu.reply { sides[index].control.append(AirPDU(llid: AirPDU.llidControl, payload: reply)) }
    }

    /// Deterministic stand-in for AES-CCM: the payload XORed with a keystream from the link, the direction
    /// and the packet counter, then a 4-byte MIC from the same stream.
    func scramble(_ payload: [UInt8], side: Int, counter: UInt64) -> [UInt8] {
        var stream = SplitMix64(seed: UInt64(accessAddress) << 32 ^ counter << 1 ^ UInt64(side) ^ 0x43_434D)
        var out = payload
        for i in out.indices { out[i] ^= UInt8(truncatingIfNeeded: stream.next()) }
        for _ in 0..<Self.micLength { out.append(UInt8(truncatingIfNeeded: stream.next())) }
        return out
    }

    // MARK: Input

    /// Host data sent by now goes out in this event; peer data delivered before the next event came in this one.
    /// Both in the HCI stream's order, which is cause and effect (a response follows its request): an item waits
    /// while an earlier one of the other side cannot go yet, and once the peripheral has something in this event
    /// the central's later items wait for the next one, since the central speaks first in every event.
    func takeInput(at e: Int64) {
        var peripheralTook = false
        while true {
            let local = localHead < localData.count ? localData[localHead] : nil
            let peer = peerHead < peerData.count ? peerData[peerHead] : nil
            let takeLocal: Bool
            switch (local, peer) {
            case (nil, nil): takeLocal = false
            case (.some, nil): takeLocal = true
            case (nil, .some): takeLocal = false
            case (let l?, let p?): takeLocal = l.time <= p.time
            }
            guard let item = takeLocal ? local : peer else { break }
            guard item.time <= (takeLocal ? e : e + interval) else { break }
            let index = takeLocal ? localIndex : peerIndex
            if index == 0 && peripheralTook { break }
            // What the other side sent earlier and has not got across (CRC errors, refusals, a long SDU) comes
            // first: a response must not overtake the end of its request on the air.
            if sides[1 - index].hasPendingData(to: sides[index]) { break }
            sides[index].enqueue(item)
            if index == 1 { peripheralTook = true }
            if takeLocal { localHead += 1 } else { peerHead += 1 }
        }
        if localHead >= 64 && localHead * 2 >= localData.count {
            localData.removeFirst(localHead)
            localHead = 0
        }
        if peerHead >= 64 && peerHead * 2 >= peerData.count {
            peerData.removeFirst(peerHead)
            peerHead = 0
        }
        var i = 0
        while i < scheduled.count {
            if Int16(bitPattern: scheduled[i].counter &- counter) <= 0 {
                sides[scheduled[i].side].control.append(scheduled[i].pdu)
                scheduled.remove(at: i)
            } else {
                i += 1
            }
        }
    }

    /// Events after the one at `e` that start before `time`.
    func eventsBefore(_ time: Int64, from e: Int64) -> Int {
        guard time > e else { return 0 }
        return Int((time - e + interval - 1) / interval) - 1
    }

    func startProcedures(at e: Int64) {
        var i = 0
        while i < procedures.count {
            let p = procedures[i]
            let ahead = eventsBefore(p.time, from: e)
            if start(p, eventsAhead: ahead, at: e) {
                procedures.remove(at: i)
            } else {
                i += 1
            }
        }
    }

    /// Data the HCI stream had exchanged before `time` that is not across yet (waiting its turn, queued, or not
    /// received): a disconnect follows what the host saw of the link, so it waits for it.
    func dataInFlight(before time: Int64) -> Bool {
        if localHead < localData.count && localData[localHead].time <= time { return true }
        if peerHead < peerData.count && peerData[peerHead].time <= time { return true }
        return sides[0].hasPendingData(to: sides[1]) || sides[1].hasPendingData(to: sides[0])
    }

    /// Starts `p` if this event is the one it begins in; false to wait.
    func start(_ p: AirProcedure, eventsAhead ahead: Int, at e: Int64) -> Bool {
        switch p.kind {
        case .update(let newInterval, let newLatency, let newTimeout):
            guard ahead <= Self.updateLeadEvents, pendingUpdate == nil, pendingPHY == nil else { return false }
            let instant = counter &+ UInt16(max(1, ahead))
            sides[0].control.append(AirControl.connectionUpdate(windowSize: 1, windowOffset: 0, interval: newInterval,
                                                                latency: newLatency, timeout: newTimeout,
                                                                instant: instant))
            pendingUpdate = (instant, newInterval, newLatency, newTimeout)
        case .phy(let tx, let rx, let localInitiated):
            guard ahead <= Self.updateLeadEvents, pendingUpdate == nil, pendingPHY == nil else { return false }
            let bits = { (phy: UInt8) -> UInt8 in phy == 0 ? 0 : 1 << (min(phy, 3) - 1) }
            let centralTx = localIsCentral ? tx : rx, peripheralTx = localIsCentral ? rx : tx
            let instant = counter &+ UInt16(max(2, ahead))
            let update = AirControl.phyUpdate(centralToPeripheral: bits(centralTx), peripheralToCentral: bits(peripheralTx),
                                              instant: instant)
            if localInitiated == localIsCentral {
                // The central asks, the peripheral answers, the central decides.
                sides[0].control.append(AirControl.phyRequest(bits(centralTx) | bits(peripheralTx), reply: true))
                sides[0].control.append(update)
            } else {
                sides[1].control.append(AirControl.phyRequest(bits(centralTx) | bits(peripheralTx), reply: false))
                scheduled.append((counter &+ 1, 0, update))
            }
            pendingPHY = (instant, tx == 2 && rx == 2 ? 1 : 0)
        case .dataLength(let tx, let rx, let localInitiated):
            guard ahead == 0 else { return false }
            let requester = localInitiated ? localIndex : peerIndex
            let requesterTx = localInitiated ? tx : rx, requesterRx = localInitiated ? rx : tx
            sides[requester].control.append(AirControl.length(requesterRx: requesterRx, requesterTx: requesterTx,
                                                              responderRx: requesterTx, responderTx: requesterRx))
            sides[localIndex].maxTx = Int(tx)
            sides[peerIndex].maxTx = Int(rx)
        case .encryption(let random, let ediv):
            guard ahead <= Self.encryptionLeadEvents else { return false }
            // Data waits while encryption starts [Core Vol 6 Part B §5.1.3.1].
            sides[0].dataPaused = true
            sides[1].dataPaused = true
            sides[0].control.append(AirControl.encryptionRequest(random: random, ediv: ediv, rng: &rng))
            scheduled.append((counter &+ 1, 1, AirControl.startEncryptionRequest))
            scheduled.append((counter &+ 2, 0, AirControl.startEncryptionResponse))
        case .peerTerminate(let reason):
            guard ahead == 0, !dataInFlight(before: p.time) else { return false }
            // After whatever the side still had to send.
            sides[peerIndex].data.append(AirControl.terminate(reason))
        case .localTerminate(let reason):
            guard p.time <= e, !dataInFlight(before: p.time) else { return false }
            sides[localIndex].data.append(AirControl.terminate(reason))
        }
        return true
    }
}
