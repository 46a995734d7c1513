import BTWire
import BTCapture
import BTDecode

/// Follows LE connections on an air capture (`LLFrame`s from the decoder) into the same `Connection`s as HCI
/// gives, through a `ConnectionTracker` of its own: each link is seen from its central (`sent` = central →
/// peripheral), so the rules judge the central's behaviour as they judge a host's.
///
/// A link opens at its CONNECT_IND / AUX_CONNECT_REQ once the sniffer hears a packet of it (a request the
/// sniffer did not follow is counted, not kept), or — when the capture missed the request — once enough packets
/// on one access address show a connection (`implicitStart`, interval estimated from the events). Connection
/// events are counted from packet timing or the sniffer's event counter; updates, channel maps and PHYs change
/// the link at their instants; LL_TERMINATE_IND closes it with its reason, and a silence longer than the
/// supervision timeout closes it as lost (inferred). L2CAP PDUs the decoder reassembled go through the HCI path's
/// ATT, SMP and signalling tracking.
///
/// Memory: at most `maximumStates` access addresses at once, the least recently heard forgotten first.
final class AirTracker {
    /// Gap that starts a new connection event: the decoder's, which infers direction from it.
    static let eventGapNanoseconds = LLDecoder.eventGapNanoseconds
    /// A link's supervision timeout when the capture missed its CONNECT_IND: the longest the spec allows is
    /// 32 s; most links use a few seconds.
    static let unknownSupervisionTimeoutNanoseconds: Int64 = 10_000_000_000
    /// How often (capture time) links are checked for silence.
    static let sweepNanoseconds: Int64 = 250_000_000
    /// Evidence for a connection whose CONNECT_IND the capture missed: packets with a valid data header over
    /// distinct events. Noise and attack tools invent access addresses that rarely repeat; a sniffer that checked
    /// the CRC (it knew the link's CRCInit) vouches for the packets, so less is needed then.
    static let implicitPackets = 6
    static let implicitEvents = 3
    static let vouchedImplicitEvents = 2
    /// Events over which a missed link's interval is estimated (their shortest spacing).
    static let estimationEvents = 32
    static let maximumStates = 64
    /// A central that hears nothing from the peripheral in the first six connection events ends the link:
    /// Connection Failed to be Established (0x3E) [Core Vol 6 Part B §4.5.2].
    static let establishmentEvents = 6
    /// Unanswered events that must be heard to call it a failure: after one or two, a sniffer that lost the link
    /// at its start looks the same; by three it has followed the central and would have heard an answer.
    static let establishmentEvidenceEvents = 3
    /// Silence, in connection intervals, after which a link the peripheral never answered is taken as ended:
    /// the central sends in every event, so two missing events mean it stopped (or the sniffer lost it).
    static let establishmentSilenceIntervals: Int64 = 2
    static let slotNanoseconds = Int64(LLConnectionRequestData.slotMicroseconds) * 1000
    static let timeoutUnitNanoseconds = Int64(LLConnectionRequestData.timeoutUnitMicroseconds) * 1000
    /// Air links have no HCI handle: they are numbered in the 12 bits an ACL handle has.
    static let handleMask: UInt16 = 0x0FFF

    final class State {
        let accessAddress: UInt32
        /// The capture interface (pcapng) it was heard on: the same address on two sniffers is two links' worth
        /// of state, each with its sniffer's timing.
        let interface: UInt16
        @exclusivity(unchecked) var lastUse = 0
        @exclusivity(unchecked) var connection: Connection?
        /// The CONNECT_IND, until the first packet of the link opens it.
        @exclusivity(unchecked) var request: Request?
        /// Closed by LL_TERMINATE_IND: later packets on the address (acknowledgements, resends) belong to no
        /// link until a new CONNECT_IND, except that the rest of that event is counted for `terminated`.
        @exclusivity(unchecked) var ended = false
        @exclusivity(unchecked) var terminated: Connection?
        @exclusivity(unchecked) var intervalNanoseconds: Int64 = 0
        @exclusivity(unchecked) var timeoutNanoseconds: Int64 = AirTracker.unknownSupervisionTimeoutNanoseconds
        /// Unwrapped event counter of the current event (-1 before the first).
        @exclusivity(unchecked) var counter = -1
        /// Sniffer-clock times (`LLFrame.nanoseconds`) of the current event's start and of the last packet.
        @exclusivity(unchecked) var eventStart: Int64 = 0
        @exclusivity(unchecked) var lastNanoseconds: Int64 = 0
        @exclusivity(unchecked) var lastPacket: RecordRef?
        @exclusivity(unchecked) var lastChannel: UInt8?
        @exclusivity(unchecked) var snifferCounter: UInt16?
        @exclusivity(unchecked) var eventHasData = false
        /// A packet from the peripheral was heard (whatever its CRC), or a packet's SN or NESN was not 0 (something
        /// was acknowledged): the link was established. The second holds whatever the container says of direction.
        @exclusivity(unchecked) var peripheralHeard = false
        @exclusivity(unchecked) var pendingUpdate: (instant: UInt16, parameters: ConnectionParameters, windowOffset: Int64)?
        @exclusivity(unchecked) var pendingChannelMap: (instant: UInt16, map: UInt64)?
        @exclusivity(unchecked) var pendingPHY: (instant: UInt16, centralToPeripheral: UInt8, peripheralToCentral: UInt8)?
        /// LL_LENGTH_REQ/RSP values: each side's MaxTxOctets and MaxRxOctets.
        @exclusivity(unchecked) var centralLength: (tx: UInt16, rx: UInt16)?
        @exclusivity(unchecked) var peripheralLength: (tx: UInt16, rx: UInt16)?
        /// Missed-CONNECT_IND evidence and interval estimation.
        @exclusivity(unchecked) var candidatePackets = 0
        @exclusivity(unchecked) var candidateEvents = 0
        @exclusivity(unchecked) var candidateFirst: RecordRef?
        @exclusivity(unchecked) var shortestEventGap = Int64.max
        @exclusivity(unchecked) var estimatedEvents = 0

        init(accessAddress: UInt32, interface: UInt16) {
            self.accessAddress = accessAddress
            self.interface = interface
        }
    }

    struct Request {
        var at: RecordRef
        var central: BDAddr
        var peripheral: BDAddr
        var centralRandom: Bool
        var peripheralRandom: Bool
        /// AUX_CONNECT_REQ on a secondary channel.
        var auxiliary: Bool
        var data: LLConnectionRequestData
    }

    @exclusivity(unchecked) var links: ConnectionTracker
    @exclusivity(unchecked) var states: [State] = []
    @exclusivity(unchecked) var lastState: State?
    @exclusivity(unchecked) var clock = 0
    @exclusivity(unchecked) var nextHandle: UInt16 = 0
    @exclusivity(unchecked) var nextSweep: Int64 = 0
    let eventLimit: Int
    /// CONNECT_INDs whose link the sniffer never heard.
    @exclusivity(unchecked) var unfollowedRequests = 0
    /// LE link-layer records seen.
    @exclusivity(unchecked) var records = 0

    init(options: TrackerOptions) {
        // Air links are judged when the capture ends: an air capture's links and HCI's are numbered together then.
        var linkOptions = options
        linkOptions.retirement = nil
        links = ConnectionTracker(options: linkOptions)
        eventLimit = options.maximumEventsPerConnection
    }

    // MARK: - Records

    func observe(_ frame: LLFrame, l2cap: L2CAPPDU?, at: RecordRef) {
        records += 1
        let time = at.timestamp.nanoseconds
        if time >= nextSweep { sweep(now: time) }
        if frame.isAdvertising {
            guard frame.crc != .bad, let pdu = frame.advertising,
                  case .connectRequest(let initA, let advA, let data) = pdu.body else { return }
            connectRequest(Request(at: at, central: initA, peripheral: advA, centralRandom: pdu.txRandom,
                                   peripheralRandom: pdu.rxRandom, auxiliary: frame.packet.isSecondaryChannel, data: data))
            return
        }
        guard frame.packet.pduClass != .isochronous else { return }
        let state = self.state(frame.packet.accessAddress, interface: at.controller, create: frame.crc != .bad)
        guard let state else { return }
        if state.ended {
            // The rest of the LL_TERMINATE_IND's event (the peer's acknowledgement) is still the link's radio time.
            if let c = state.terminated, !newEvent(state, frame, time: frame.nanoseconds) {
                packet(frame, l2cap: nil, at: at, state: state, on: c, closing: true)
            }
            return
        }
        if state.connection == nil {
            if state.request != nil {
                open(state, at: at)
            } else if !candidate(state, frame, at: at) {
                return
            }
        }
        guard let c = state.connection else { return }
        packet(frame, l2cap: l2cap, at: at, state: state, on: c)
    }

    /// A CONNECT_IND: the access address starts afresh (a new request for an address in use ends that link).
    func connectRequest(_ request: Request) {
        let state = self.state(request.data.accessAddress, interface: request.at.controller, create: true)!
        if let old = state.connection, old.isOpen { end(state, old, at: request.at) }
        reset(state)
        state.request = request
        state.intervalNanoseconds = Int64(request.data.intervalMicroseconds) * 1000
        state.timeoutNanoseconds = Int64(request.data.timeoutMicroseconds) * 1000
    }

    func reset(_ state: State) {
        state.connection = nil
        state.request = nil
        state.ended = false
        state.terminated = nil
        state.counter = -1
        state.lastPacket = nil
        state.lastChannel = nil
        state.snifferCounter = nil
        state.eventHasData = false
        state.peripheralHeard = false
        state.pendingUpdate = nil
        state.pendingChannelMap = nil
        state.pendingPHY = nil
        state.centralLength = nil
        state.peripheralLength = nil
        state.candidatePackets = 0
        state.candidateEvents = 0
        state.candidateFirst = nil
        state.shortestEventGap = .max
        state.estimatedEvents = 0
        state.intervalNanoseconds = 0
        state.timeoutNanoseconds = Self.unknownSupervisionTimeoutNanoseconds
    }

    /// The first packet of a requested link: it opens at its CONNECT_IND.
    func open(_ state: State, at: RecordRef) {
        guard let request = state.request else { return }
        state.request = nil
        guard let c = openLink(state, at: request.at, implicit: false, peer: request.peripheral) else { return }
        c.peerAddressType = request.peripheralRandom ? .random : .public
        c.air!.centralAddress = request.central
        c.air!.centralAddressIsRandom = request.centralRandom
        c.air!.auxiliaryRequest = request.auxiliary
        c.air!.channelMap = request.data.channelMap
        let parameters = ConnectionParameters(interval: request.data.interval, latency: request.data.latency,
                                              supervisionTimeout: request.data.timeout)
        c.initialParameters = parameters
        c.parameters = parameters
        c.beginPhase(at: request.at)
        c.append(TimelineEvent(at: request.at, kind: .connected(parameters: parameters)), limit: eventLimit)
    }

    func openLink(_ state: State, at: RecordRef, implicit: Bool, peer: BDAddr?) -> Connection? {
        let handle = nextHandle
        nextHandle = (nextHandle + 1) & Self.handleMask
        guard let c = links.openConnection(controller: at.controller, handle: handle, transport: .le, at: at,
                                           implicit: implicit, peer: peer)
        else { return nil }
        c.role = .central
        c.air = AirLink(accessAddress: state.accessAddress)
        state.connection = c
        return c
    }

    /// A data packet on an address without a CONNECT_IND: evidence for a connection the capture joined late.
    /// True once the link is open.
    func candidate(_ state: State, _ frame: LLFrame, at: RecordRef) -> Bool {
        guard frame.crc != .bad, let header = LLDataHeader(frame.packet.pdu), header.llid != .reserved else { return false }
        let time = frame.nanoseconds
        if state.candidateFirst == nil { state.candidateFirst = at }
        if newEvent(state, frame, time: time) {
            if state.candidateEvents > 0 { state.shortestEventGap = min(state.shortestEventGap, time - state.eventStart) }
            state.candidateEvents += 1
            state.eventStart = time
        }
        state.lastPacket = at
        state.lastNanoseconds = time
        state.lastChannel = frame.packet.channel
        if let counter = frame.packet.eventCounter { state.snifferCounter = counter }
        state.candidatePackets += 1
        // A sniffer that checked the CRC followed the link (it knew its CRCInit): one packet is enough.
        let vouched = frame.crc == .good && state.candidateEvents >= Self.vouchedImplicitEvents
        guard vouched || (state.candidatePackets >= Self.implicitPackets && state.candidateEvents >= Self.implicitEvents)
        else { return false }
        guard let first = state.candidateFirst,
              let c = openLink(state, at: first, implicit: true, peer: nil) else { return false }
        c.air!.intervalEstimated = true
        // This packet's event is the current one; the evidence before it counts as events only.
        state.counter = state.snifferCounter.map(Int.init) ?? state.candidateEvents - 1
        state.eventHasData = false
        state.estimatedEvents = state.candidateEvents
        if state.shortestEventGap != .max { estimateInterval(state, c) }
        c.withAir { $0.events = state.candidateEvents }
        state.candidateFirst = nil
        return true
    }

    /// The shortest spacing of events, in whole 1.25 ms slots: the interval (events the sniffer missed only
    /// lengthen gaps).
    func estimateInterval(_ state: State, _ c: Connection) {
        let slots = max(Int64(LLConnectionRequestData.minimumInterval),
                        (state.shortestEventGap + Self.slotNanoseconds / 2) / Self.slotNanoseconds)
        state.intervalNanoseconds = slots * Self.slotNanoseconds
        let parameters = ConnectionParameters(interval: UInt16(clamping: slots), latency: 0, supervisionTimeout: 0)
        if c.parameters != parameters {
            c.parameters = parameters
            if c.initialParameters == nil { c.initialParameters = parameters }
            c.beginPhase(at: c.currentPhase?.start ?? c.start)
        }
    }

    // MARK: - Packets of a link

    /// `closing`: a packet in the event of the link's LL_TERMINATE_IND, after it: counted, not interpreted.
    func packet(_ frame: LLFrame, l2cap: L2CAPPDU?, at: RecordRef, state: State, on c: Connection, closing: Bool = false) {
        let time = frame.nanoseconds
        if !closing && newEvent(state, frame, time: time) { beginEvent(state, frame, c, at: at) }
        state.lastPacket = at
        state.lastNanoseconds = time
        state.lastChannel = frame.packet.channel
        if frame.direction == .peripheralToCentral { state.peripheralHeard = true }
        if frame.crc == .bad {
            c.withAir { $0.crcErrors += 1 }
            return
        }
        c.withAir {
            $0.packets += 1
            // 0 dBm is what sniffers write without a reading (WHAD's PHDR, SweynTooth's nRF firmware): no
            // receiver hears a link at 0 dBm.
            if let rssi = frame.packet.rssi, rssi != 0 { $0.rssi(rssi) }
        }
        if let header = LLDataHeader(frame.packet.pdu) {
            if header.sn != 0 || header.nesn != 0 { state.peripheralHeard = true }
            let peripheral = frame.direction == .peripheralToCentral
            c.withAir {
                if peripheral {
                    $0.peripheralPackets += 1
                    $0.peripheralPayloadBytes += header.length
                } else {
                    $0.centralPackets += 1
                    $0.centralPayloadBytes += header.length
                }
            }
        }
        if frame.isRetransmission {
            c.withAir { $0.retransmissions += 1 }
            return
        }
        guard let pdu = frame.data else { return }
        if pdu.header.isEmpty {
            c.withAir { $0.emptyPDUs += 1 }
            return
        }
        if !state.eventHasData {
            state.eventHasData = true
            c.withAir { $0.eventsWithData += 1 }
        }
        if frame.isEncrypted {
            c.withAir { $0.encryptedPDUs += 1 }
            return
        }
        guard !closing else { return }
        let direction: Direction = switch frame.direction {
        case .centralToPeripheral: .sent
        case .peripheralToCentral: .received
        case .unknown: .unknown
        }
        if let control = pdu.control {
            self.control(control, direction: frame.direction, at: at, state: state, on: c)
        } else if let l2cap {
            ConnectionTracker.acl(pdu: LinkPDU(l2cap), direction: direction, at: at, on: c, limit: eventLimit)
        }
    }

    /// Whether `frame` starts a new connection event: the sniffer's event counter moved, or (without one) the
    /// channel changed or the packets paused longer than an event lasts.
    func newEvent(_ state: State, _ frame: LLFrame, time: Int64) -> Bool {
        guard state.lastPacket != nil else { return true }
        if let counter = frame.packet.eventCounter, let previous = state.snifferCounter { return counter != previous }
        if let channel = frame.packet.channel, let previous = state.lastChannel, channel != previous { return true }
        return time - state.lastNanoseconds > Self.eventGapNanoseconds
    }

    func beginEvent(_ state: State, _ frame: LLFrame, _ c: Connection, at: RecordRef) {
        let time = frame.nanoseconds
        let previousStart = state.eventStart
        let steps: Int
        if let counter = frame.packet.eventCounter {
            steps = state.snifferCounter.map { Int(counter &- $0) } ?? (state.counter < 0 ? Int(counter) + 1 : 1)
            state.snifferCounter = counter
        } else if state.counter < 0 {
            steps = 1
        } else {
            steps = eventsSince(state, elapsed: time - previousStart)
        }
        state.counter += max(1, steps)
        state.eventStart = time
        state.eventHasData = false
        if c.air!.intervalEstimated && state.estimatedEvents < Self.estimationEvents && state.counter > 0 {
            state.estimatedEvents += 1
            if steps == 1, previousStart > 0 {
                state.shortestEventGap = min(state.shortestEventGap, time - previousStart)
                estimateInterval(state, c)
            }
        }
        applyInstants(state, c, at: at)
        c.withAir { $0.events += 1 }
    }

    /// Connection events between the previous event's start and now, at the interval (and the new interval after
    /// a pending update's instant).
    func eventsSince(_ state: State, elapsed: Int64) -> Int {
        let interval = max(state.intervalNanoseconds, Self.slotNanoseconds)
        if let update = state.pendingUpdate {
            let toInstant = Int(update.instant &- UInt16(truncatingIfNeeded: state.counter))
            let span = Int64(toInstant) * interval
            if toInstant > 0 && toInstant < Int(Int16.max) && elapsed > span - interval / 2 {
                let newInterval = max(Int64(update.parameters.interval) * Self.slotNanoseconds, Self.slotNanoseconds)
                let after = max(0, elapsed - span - update.windowOffset)
                return toInstant + Int((after + newInterval / 2) / newInterval)
            }
        }
        return Int((elapsed + interval / 2) / interval)
    }

    /// Whether the current event is at or past `instant` (16-bit counters, compared across the wrap).
    static func reached(_ instant: UInt16, counter: Int) -> Bool {
        Int16(bitPattern: UInt16(truncatingIfNeeded: counter) &- instant) >= 0
    }

    func applyInstants(_ state: State, _ c: Connection, at: RecordRef) {
        if let update = state.pendingUpdate, Self.reached(update.instant, counter: state.counter) {
            state.pendingUpdate = nil
            // Known parameters from here on: nothing left to estimate.
            state.estimatedEvents = Self.estimationEvents
            if UInt16(truncatingIfNeeded: state.counter) != update.instant { c.air!.lateInstants += 1 }
            state.intervalNanoseconds = Int64(update.parameters.interval) * Self.slotNanoseconds
            state.timeoutNanoseconds = Int64(update.parameters.supervisionTimeout) * Self.timeoutUnitNanoseconds
            c.parameters = update.parameters
            c.beginPhase(at: at)
            c.append(TimelineEvent(at: at, kind: .parametersChanged(update.parameters)), limit: eventLimit)
        }
        if let change = state.pendingChannelMap, Self.reached(change.instant, counter: state.counter) {
            state.pendingChannelMap = nil
            c.air!.channelMap = change.map
            c.withAir { $0.channelMapChanges += 1 }
        }
        if let phy = state.pendingPHY, Self.reached(phy.instant, counter: state.counter) {
            state.pendingPHY = nil
            if phy.centralToPeripheral != 0 { c.txPHY = Self.phyNumber(phy.centralToPeripheral) }
            if phy.peripheralToCentral != 0 { c.rxPHY = Self.phyNumber(phy.peripheralToCentral) }
            c.beginPhase(at: at)
            c.append(TimelineEvent(at: at, kind: .phyChanged(tx: c.txPHY, rx: c.rxPHY)), limit: eventLimit)
        }
    }

    /// LL PHY bit (bit 0 1M, bit 1 2M, bit 2 Coded) → the HCI PHY number (1 1M, 2 2M, 3 Coded).
    static func phyNumber(_ bits: UInt8) -> UInt8 {
        bits & 0x02 != 0 ? 2 : bits & 0x04 != 0 ? 3 : 1
    }

    // MARK: - Control procedures

    func control(_ pdu: LLControlPDU, direction: LLDirection, at: RecordRef, state: State, on c: Connection) {
        let byCentral = direction != .peripheralToCentral
        var summary = LLControlSummary.plain
        /// What the PDU changed, after the PDU in the timeline.
        var change: TimelineEvent?
        switch pdu.body {
        case .connectionUpdate(_, let offset, let interval, let latency, let timeout, let instant):
            let parameters = ConnectionParameters(interval: interval, latency: latency, supervisionTimeout: timeout)
            state.pendingUpdate = (instant, parameters, Int64(offset) * Self.slotNanoseconds)
            summary = .connectionUpdate(parameters, instant: instant)
        case .channelMap(let map, let instant):
            state.pendingChannelMap = (instant, map)
            summary = .channelMap(used: LLChannelMap.usedChannels(map), instant: instant)
        case .phyUpdate(let cp, let pc, let instant):
            state.pendingPHY = (instant, cp, pc)
            summary = .phyUpdate(centralToPeripheral: cp == 0 ? 0 : Self.phyNumber(cp),
                                 peripheralToCentral: pc == 0 ? 0 : Self.phyNumber(pc), instant: instant)
        case .error(let status):
            if pdu.opcode == .terminateInd {
                terminate(state, c, reason: status, byCentral: byCentral, at: at)
                return
            }
            summary = .rejected(opcode: nil, reason: status)
        case .rejectExtended(let opcode, let status):
            summary = .rejected(opcode: opcode, reason: status)
        case .unknownResponse(let opcode):
            summary = .rejected(opcode: opcode, reason: nil)
        case .features(let features):
            summary = .features(features)
        case .version(let number, let company, let subversion):
            summary = .version(versionNumber: number, companyID: company, subversion: subversion)
        case .connectionParameters(let lo, let hi, let latency, let timeout, _, _):
            let range = ConnectionParameterRange(intervalMin: lo, intervalMax: hi, latency: latency, supervisionTimeout: timeout)
            summary = .parameterRange(range)
            if pdu.opcode == .connectionParamReq {
                c.append(TimelineEvent(at: at, kind: .parametersRequested(range, source: byCentral ? .host : .remoteRequest),
                                       byHost: byCentral), limit: eventLimit)
            }
        case .dataLength(let maxRx, _, let maxTx, _):
            summary = .dataLength(maxRxOctets: maxRx, maxTxOctets: maxTx)
            if byCentral { state.centralLength = (maxTx, maxRx) } else { state.peripheralLength = (maxTx, maxRx) }
            if pdu.opcode == .lengthRsp, let central = state.centralLength, let peripheral = state.peripheralLength {
                // Each direction carries what its sender may send and its receiver may take [§4.5.10].
                let tx = max(LinkLayerTraffic.minimumOctets, Int(min(central.tx, peripheral.rx)))
                let rx = max(LinkLayerTraffic.minimumOctets, Int(min(peripheral.tx, central.rx)))
                // Both sides may run the procedure: a change is one only when the lengths do change.
                if tx != c.maxTxOctets || rx != c.maxRxOctets {
                    c.maxTxOctets = tx
                    c.maxRxOctets = rx
                    change = TimelineEvent(at: at, kind: .dataLengthChanged(maxTxOctets: UInt16(tx), maxRxOctets: UInt16(rx)))
                }
            }
        case .phys(let tx, let rx):
            summary = .phys(tx: tx, rx: rx)
        default:
            break
        }
        c.append(TimelineEvent(at: at, kind: .linkLayerControl(opcode: pdu.opcode, summary: summary), byHost: byCentral),
                 limit: eventLimit)
        if let change { c.append(change, limit: eventLimit) }
        if pdu.opcode == .startEncReq {
            // The peripheral's LL_START_ENC_REQ is the last plaintext step: the link is encrypted from here.
            c.encrypted = true
            c.append(TimelineEvent(at: at, kind: .encryptionChanged(enabled: true, status: .success)), limit: eventLimit)
        } else if pdu.opcode == .pauseEncRsp && byCentral {
            c.encrypted = false
        }
    }

    func terminate(_ state: State, _ c: Connection, reason: HCIStatus, byCentral: Bool, at: RecordRef) {
        if byCentral { c.disconnectRequestedLocally = true }
        links.close(c, at: at, reason: reason, event: .disconnected(reason: reason, locallyRequested: byCentral))
        state.connection = nil
        state.ended = true
        state.terminated = c
    }

    // MARK: - Silence

    /// Closes links silent for longer than their supervision timeout, and links the peripheral never answered
    /// once the central has stopped. A CONNECT_IND waits for its first packet however late it comes: the
    /// sniffer may miss the first events, and a random 32-bit access address heard later is that link's.
    func sweep(now: Int64) {
        nextSweep = now + Self.sweepNanoseconds
        for state in states {
            guard let c = state.connection, c.isOpen, let last = state.lastPacket else { continue }
            let silence = now - last.timestamp.nanoseconds
            if silence > allowedSilence(state) {
                end(state, c, at: nil)
            } else if silence > Self.establishmentSilenceIntervals * max(state.intervalNanoseconds, Self.slotNanoseconds),
                      failedToEstablish(state, c) {
                fail(state, c)
            }
        }
    }

    /// How long a link may stay silent before it is lost: its supervision timeout, or — with a connection update
    /// pending — until the update's instant and the new timeout after it (the new parameters, a longer interval
    /// and timeout, apply from the instant on: a gap the old timeout would not allow is not a loss then).
    func allowedSilence(_ state: State) -> Int64 {
        guard let update = state.pendingUpdate else { return state.timeoutNanoseconds }
        let toInstant = Int64(Int16(bitPattern: update.instant &- UInt16(truncatingIfNeeded: state.counter)))
        guard toInstant > 0 else { return state.timeoutNanoseconds }
        let interval = max(state.intervalNanoseconds, Self.slotNanoseconds)
        let newTimeout = Int64(update.parameters.supervisionTimeout) * Self.timeoutUnitNanoseconds
        return max(state.timeoutNanoseconds, toInstant &* interval &+ update.windowOffset &+ newTimeout)
    }

    /// A link that went silent, or whose address was taken over: a failed attempt if the peripheral never
    /// answered, otherwise lost.
    func end(_ state: State, _ c: Connection, at: RecordRef?) {
        if failedToEstablish(state, c) { fail(state, c) } else { lose(state, c, at: at) }
    }

    /// The CONNECT_IND's link heard only from its central, whose first PDU was never acknowledged (SN and NESN
    /// stayed 0), in enough events to tell, and no more than a central tries before it gives up. (A sniffer out
    /// of the peripheral's range would see the central go on past them.)
    func failedToEstablish(_ state: State, _ c: Connection) -> Bool {
        guard !state.peripheralHeard, !c.implicitStart, let air = c.air else { return false }
        return (Self.establishmentEvidenceEvents...Self.establishmentEvents).contains(air.totals.events)
    }

    /// What HCI reports as an LE Connection Complete with status 0x3E: an attempt, not a connection. It ran
    /// from the CONNECT_IND to the central's last packet.
    func fail(_ state: State, _ c: Connection) {
        links.withdraw(c)
        links.failed.append(FailedConnection(at: state.lastPacket ?? c.start, requested: c.start,
                                             status: .connectionFailedToBeEstablished, peerAddress: c.peerAddress,
                                             transport: .le))
        reset(state)
    }

    /// Ends a link that went silent: at its last packet plus the supervision timeout (no later than `at`).
    func lose(_ state: State, _ c: Connection, at: RecordRef?) {
        var end = state.lastPacket ?? c.start
        let silence = Duration.nanoseconds(state.timeoutNanoseconds)
        end.timestamp = Timestamp(nanoseconds: end.timestamp.nanoseconds &+ state.timeoutNanoseconds)
        if let at, at.timestamp < end.timestamp { end.timestamp = at.timestamp }
        c.air!.endInferred = true
        links.close(c, at: end, reason: nil, event: .linkLost(silence: silence))
        // Packets on the address later (a sniffer that found the link again) need evidence of a link anew.
        reset(state)
    }

    // MARK: - End

    func finish(at last: RecordRef?) -> (connections: [Connection], failed: [FailedConnection], dropped: Int) {
        if let last { sweep(now: last.timestamp.nanoseconds) }
        // The capture ended right after an attempt: one whose central made all its tries unanswered failed.
        for state in states {
            if let c = state.connection, c.isOpen, failedToEstablish(state, c),
               let air = c.air, air.totals.events >= Self.establishmentEvents {
                fail(state, c)
            }
        }
        for state in states where state.request != nil { unfollowedRequests += 1 }
        let result = links.finish(at: last)
        return (result.connections, result.failed, result.dropped)
    }

    // MARK: - Access addresses

    /// The state of `accessAddress` on `interface`; a new one (or the least recently used, reset) when `create`.
    func state(_ accessAddress: UInt32, interface: UInt16, create: Bool) -> State? {
        clock += 1
        if let last = lastState, last.accessAddress == accessAddress, last.interface == interface {
            last.lastUse = clock
            return last
        }
        for state in states where state.accessAddress == accessAddress && state.interface == interface {
            state.lastUse = clock
            lastState = state
            return state
        }
        guard create else { return nil }
        let state: State
        if states.count < Self.maximumStates {
            state = State(accessAddress: accessAddress, interface: interface)
            states.append(state)
        } else {
            var oldest = 0
            for i in states.indices where states[i].lastUse < states[oldest].lastUse { oldest = i }
            let old = states[oldest]
            if let c = old.connection, c.isOpen { end(old, c, at: nil) }
            if old.request != nil { unfollowedRequests += 1 }
            state = State(accessAddress: accessAddress, interface: interface)
            states[oldest] = state
        }
        state.lastUse = clock
        lastState = state
        return state
    }
}

extension Connection {
    /// The current phase's air statistics (a phase is opened at the link's start when none is yet).
    @inline(__always)
    func withAir(_ body: (inout AirLinkStatistics) -> Void) {
        if currentPhase == nil { currentPhase = LinkPhase(start: start, parameters: parameters, txPHY: txPHY, rxPHY: rxPHY) }
        guard let air else { return }
        body(&air.currentPhase)
    }
}
