import BTWire
import BTCapture
import BTDecode

/// A connection attempt that failed: a create command the controller refused, or a Connection Complete with a
/// non-zero status (0x02 after Create Connection Cancel, 0x3E failed to be established, …).
public struct FailedConnection: Sendable {
    public var at: RecordRef
    /// The create command's record, when the capture shows it: the attempt ran from there to `at`.
    public var requested: RecordRef?
    public var status: HCIStatus
    /// The peer asked for; nil when the attempt was to the accept list or the capture does not show it.
    public var peerAddress: BDAddr?
    public var transport: LinkTransport
    /// BR/EDR: the page timeout the controller had (Write Page Timeout; 5.12 s after a reset): it pages for that
    /// long at most, however late the Connection Complete comes.
    public var pageTimeoutSlots = FailedConnection.defaultPageTimeoutSlots
    /// Page Timeout's default (Core Vol 4 Part E §6.6): 0x2000 slots, 5.12 s.
    public static let defaultPageTimeoutSlots: UInt16 = 0x2000
    /// The create command asked for any device on the controller's accept list (initiator filter policy 1), as
    /// Android's auto-connect and iOS's pending connections do, rather than for one peer.
    public var toAcceptList = false
    /// The host withdrew the attempt (Create Connection Cancel): the controller then completes it with Unknown
    /// Connection Identifier (0x02), Core Vol 4 Part E §7.1.7 and §7.8.13. Not a radio failure.
    public var cancelledByHost: Bool { status == .unknownConnectionIdentifier && completed }
    /// Ended by a Connection Complete event (rather than refused by Command Status).
    var completed = true

    /// How long the attempt ran (a Page Timeout shows the page timeout, 5.12 s by default), when the capture
    /// shows the create command.
    public var attemptDuration: Duration? { requested.map { at.timestamp - $0.timestamp } }

    /// A BR/EDR attempt's paging: from the create command (or the event, when the capture does not show it) for
    /// the page timeout at most: a Connection Complete that comes later ends a wait, not a page train.
    public var paging: (start: Timestamp, end: Timestamp) {
        let from = requested?.timestamp ?? at.timestamp
        let longest = from.adding(nanoseconds: Int64(Double(pageTimeoutSlots) * BREDRAirTime.slotSeconds * 1e9))
        return (from, min(at.timestamp, longest))
    }
}

/// A create-connection command waiting for its Connection Complete: whom it asked for, and when.
struct PendingAttempt<Target> {
    var target: Target
    var requested: RecordRef
}

/// Whom an LE create-connection command asked for.
enum ConnectionTarget {
    case peer(BDAddr)
    case acceptList
}

extension FailedConnection {
    /// An LE attempt to `target` (nil: the capture does not show the create command), with the address the
    /// controller reported.
    init(at: RecordRef, status: HCIStatus, attempt: PendingAttempt<ConnectionTarget>?, reported: BDAddr?,
         completed: Bool) {
        self.init(at: at, requested: attempt?.requested, status: status, peerAddress: nil, transport: .le,
                  completed: completed)
        switch attempt?.target {
        case .peer(let peer): peerAddress = peer
        case .acceptList: toAcceptList = true
        // A failed attempt's event usually carries an all-zero address: only a real one names the peer.
        case nil: peerAddress = reported.flatMap { $0.rawValue == 0 ? nil : $0 }
        }
    }
}

/// Follows links per controller: LE Connection Complete (legacy, enhanced v1/v2), BR/EDR and synchronous
/// Connection Complete, Disconnection Complete, parameter/PHY/data-length/encryption changes, SMP, L2CAP
/// parameter requests, and each link's ATT session. A handle reused after a disconnect is a new connection; a
/// handle seen without its Connection Complete (the capture started mid-connection) gets an implicit one.
public struct ConnectionTracker {
    let options: TrackerOptions
    var open = OpenLinks()
    var finished: [Connection] = []
    /// Where judging finished links has got to, when `TrackerOptions.retirement` asks for it.
    var retiring = RetirementState()
    var failed: [FailedConnection] = []
    var nextID = 1
    var dropped = 0
    /// An air sniffer's records joined the capture (`airLinksJoin`).
    var airLinksJoined = false
    /// Links judged before then keep the numbers given here (`CaptureTracker.numberedAfter`).
    var judgedBeforeAirLinks: Bool { airLinksJoined && (options.retirement?.judged ?? 0) > 0 }
    /// Links closed past `maximumConnections`, and the latest of them: not part of the model, but a live view
    /// still reports them as they close. One record closes at most every open link, so keeping the last
    /// `maximumOpenConnections` (trimmed in halves, to copy rarely) covers every closure of the latest record.
    var closedPastLimit = 0
    var recentlyClosedPastLimit: [Connection] = []
    /// The link of the last ACL packet, while it is in `open` (which owns it): cleared whenever a link opens or
    /// closes.
    var lastLink: (key: UInt32, link: Unmanaged<Connection>)?
    /// Target of the last LE create-connection command, and peer of the last BR/EDR Create Connection, per
    /// controller, with the command's record: a failed attempt's Connection Complete does not say whom it was
    /// for, and a link's does not say when it was asked for.
    var pendingLE: [UInt16: PendingAttempt<ConnectionTarget>] = [:]
    var pendingBREDR: [UInt16: PendingAttempt<BDAddr?>] = [:]
    /// Each controller's page timeout (Write Page Timeout), where the capture set one.
    var pageTimeouts: [UInt16: UInt16] = [:]
    /// A Role Change that came before its link's Connection Complete (a role switch while connecting), by
    /// controller and peer: the link takes it when it opens.
    var earlyRoles: [PeerLinkKey: Bool] = [:]
    /// Links opened so far per controller, peer (nil: not shown) and transport, for `Connection.peerLink`.
    var peerLinks = GenerationalMap<PeerLinkKey, Int32>(generation: ConnectionTracker.peersNumbered)
    /// Peers whose links are numbered (`peerLinks`) per generation: the 8,192 to 16,384 peers connected to most
    /// recently are remembered, so memory stays bounded on a long capture of links to ever new addresses.
    static let peersNumbered = 8192

    struct PeerLinkKey: Hashable {
        var controller: UInt16
        var peer: BDAddr?
        var transport: LinkTransport
    }

    /// The links' peers, for what finished scan sessions keep of their device counts (`ScanDeviceKeeping`).
    var scanDevices: ScanDeviceKeeping

    init(options: TrackerOptions) {
        self.options = options
        scanDevices = ScanDeviceKeeping(listed: options.scanDevicesListed)
    }

    @inline(__always)
    static func key(_ controller: UInt16, _ handle: UInt16) -> UInt32 { UInt32(controller) << 16 | UInt32(handle) }

    /// Live links (for tests and live reporting).
    public var openConnections: [Connection] { open.values.sorted { $0.id < $1.id } }

    // MARK: - Lifecycle

    /// A new link, or nil past `maximumOpenConnections` (counted as dropped): a corrupt capture naming endless
    /// (controller, handle) pairs must not open endless links.
    mutating func openConnection(controller: UInt16, handle: UInt16, transport: LinkTransport, at: RecordRef,
                                 implicit: Bool, peer: BDAddr? = nil) -> Connection? {
        lastLink = nil
        if let previous = open[Self.key(controller, handle)] {
            // The handle came back without a Disconnection Complete in the capture: the old link is over.
            close(previous, at: at, reason: nil, event: .closedByReset)
        }
        guard open.count < options.maximumOpenConnections else {
            dropped += 1
            return nil
        }
        let c = Connection(id: nextID, controller: controller, handle: handle, transport: transport, start: at,
                           implicitStart: implicit, options: options)
        nextID += 1
        c.peerAddress = peer
        scanDevices.linkOpened(peer: peer)
        let link = PeerLinkKey(controller: controller, peer: peer, transport: transport)
        let numbered = peerLinks.find(link)
        c.peerLink = Int(numbered?.value ?? 0) + 1
        // A peer forgotten (`peersNumbered`) numbers its links from 1 again: a capture that reaches it connects
        // to a new address nearly every time (random peers), where the count says nothing anyway.
        peerLinks.set(link, Int32(clamping: c.peerLink), found: numbered)
        if let peer, let interest = options.retirement?.interest { rememberPeer(c, peer, interest) }
        open[Self.key(controller, handle)] = c
        return c
    }

    mutating func close(_ c: Connection, at: RecordRef?, reason: HCIStatus?, event: TimelineEvent.Kind?) {
        c.end = at
        c.disconnectReason = reason
        if let event, let at { c.append(TimelineEvent(at: at, kind: event), limit: options.maximumEventsPerConnection) }
        retire(c, at: at)
        c.compact()  // last: nothing is added to a finished link
    }

    /// Takes back an open link that turned out never to have existed (an air link whose peripheral never
    /// answered: a failed attempt, `AirTracker`): it leaves the open links without joining the finished ones,
    /// and the links numbered after it close the gap, so ids stay 1…n as HCI gives them.
    mutating func withdraw(_ c: Connection) {
        lastLink = nil
        open[Self.key(c.controller, c.handle)] = nil
        nextID -= 1
        for other in open.values where other.id > c.id { other.id -= 1 }
        for other in finished where other.id > c.id { other.id -= 1 }
        let link = PeerLinkKey(controller: c.controller, peer: c.peerAddress, transport: c.transport)
        if peerLinks[link] == Int32(clamping: c.peerLink) { peerLinks.set(link, Int32(clamping: c.peerLink - 1)) }
    }

    /// The capture's first air-sniffer record. The model numbers HCI and air links together by when they started
    /// once the capture is read (`CaptureTracker.merge`), so from here on no link is judged early: what judging
    /// writes (a finding's "connection #N", a report's record) names the link by its number. Links judged before
    /// keep theirs, and the air links are numbered after them.
    mutating func airLinksJoin() {
        airLinksJoined = true
    }

    /// Ends a link's ATT session and moves it from the open links to the finished ones (within the cap).
    /// `judging`: whether finished links may be judged early now (not at the capture's end, `finish`).
    mutating func retire(_ c: Connection, at: RecordRef?, judging: Bool = true) {
        c.session.finish(at: at, connection: c)
        lastLink = nil
        open[Self.key(c.controller, c.handle)] = nil
        // Links judged and let go (`LinkRetirement.letGo`) were the model's: its summaries, energy's rows.
        guard finished.count + (options.retirement?.letGo ?? 0) < options.maximumConnections else {
            dropped += 1
            closedPastLimit += 1
            // Not part of the model, but the per-link rules can still judge it.
            if let retirement = options.retirement {
                judgeEarly(c, retirement, kept: false)
                retiring.returning.remove(Int32(clamping: c.id))  // no summary of it is ever kept
                if retiring.boundariesReadUntil == nil, let interest = retirement.interest {
                    retiring.boundariesReadUntil = boundariesReadUntil(interest)
                }
            }
            if recentlyClosedPastLimit.count >= 2 * max(1, options.maximumOpenConnections) {
                recentlyClosedPastLimit.removeFirst(recentlyClosedPastLimit.count / 2)
            }
            recentlyClosedPastLimit.append(c)
            return
        }
        finished.append(c)
        if judging, !airLinksJoined, let retirement = options.retirement {
            // Its peer as it ended (an address resolved since it started is the one the rules group by).
            if let peer = c.peerAddress, let interest = retirement.interest { rememberPeer(c, peer, interest) }
            retiring.finished(c, at: finished.count - 1)
            judgeOldFinishedLinks(retirement, now: (at ?? c.start).timestamp.nanoseconds)
        }
    }

    /// The open connection for a handle, or an implicit one when the capture missed its start.
    mutating func connection(controller: UInt16, handle: UInt16, at: RecordRef, transport: LinkTransport = .unknown)
        -> Connection?
    {
        let key = Self.key(controller, handle)
        if let c = open[key] { return c }
        return openConnection(controller: controller, handle: handle, transport: transport, at: at, implicit: true)
    }

    mutating func leConnectionComplete(_ e: LEConnectionComplete, at: RecordRef, scanning: Bool, advertising: Bool)
        -> Connection?
    {
        // Our attempt ends here unless this is a link the peer made to us (peripheral role) meanwhile.
        let attempt = e.status == .success && !e.isCentral ? nil : pendingLE.removeValue(forKey: at.controller)
        guard e.status == .success else {
            failed.append(FailedConnection(at: at, status: e.status, attempt: attempt, reported: e.peerAddress,
                                           completed: true))
            return nil
        }
        guard let c = openConnection(controller: at.controller, handle: e.handle, transport: .le, at: at, implicit: false,
                                     peer: e.peerAddress)
        else { return nil }
        c.role = e.isCentral ? .central : .peripheral
        c.connectRequested = attempt?.requested
        c.peerAddressType = e.peerAddressType
        let parameters = ConnectionParameters(interval: e.connectionInterval, latency: e.peripheralLatency,
                                              supervisionTimeout: e.supervisionTimeout)
        c.initialParameters = parameters
        c.parameters = parameters
        c.beginPhase(at: at)
        c.scanningAtConnect = scanning
        c.advertisingAtConnect = advertising
        c.append(TimelineEvent(at: at, kind: .connected(parameters: parameters)), limit: options.maximumEventsPerConnection)
        return c
    }

    mutating func controllerReset(at: RecordRef) {
        pageTimeouts[at.controller] = nil
        for c in open.values.sorted(by: { $0.id < $1.id }) where c.controller == at.controller {
            close(c, at: at, reason: nil, event: .closedByReset)
        }
    }

    // MARK: - Commands

    mutating func command(opcode: HCIOpcode, parameters p: UnsafeRawBufferPointer, at: RecordRef) {
        switch opcode {
        case .disconnect:
            if let d = Disconnect(p), let c = open[Self.key(at.controller, d.handle)] { c.disconnectRequestedLocally = true }
        case .leConnectionUpdate:
            if let u = LEConnectionUpdate(p) {
                guard let c = connection(controller: at.controller, handle: u.handle, at: at, transport: .le) else { return }
                c.append(TimelineEvent(at: at, kind: .parametersRequested(u.parameters, source: .host)),
                         limit: options.maximumEventsPerConnection)
            }
        case .leCreateConnection:
            if let v = LECreateConnection(p) {
                pendingLE[at.controller] = PendingAttempt(target: Self.target(v.initiatorFilterPolicy, v.peerAddress),
                                                          requested: at)
            }
        case .leExtendedCreateConnection:
            if let v = LEExtendedCreateConnection(p) {
                pendingLE[at.controller] = PendingAttempt(target: Self.target(v.initiatorFilterPolicy, v.peerAddress),
                                                          requested: at)
            }
        case .createConnection:
            var r = ByteReader(p)
            pendingBREDR[at.controller] = PendingAttempt(target: r.readAddress(), requested: at)
        case .writePageTimeout:
            var r = ByteReader(p)
            if let slots = r.readU16(), slots > 0 { pageTimeouts[at.controller] = slots }
        case .sniffMode:
            // handle, max interval, min interval, attempt, timeout: the attempt holds once Mode Change says sniff.
            var r = ByteReader(p)
            guard let handle = r.readU16(), r.readU16() != nil, r.readU16() != nil, let attempt = r.readU16(),
                  let c = open[Self.key(at.controller, handle & 0x0FFF)], c.classicMode != nil
            else { return }
            c.classicMode?.attemptSlots = attempt
        default:
            break
        }
    }

    mutating func commandAnswered(opcode: HCIOpcode, status: HCIStatus, at: RecordRef) {
        guard status != .success else { return }
        switch opcode {
        case .createConnection:
            // Refused outright (Command Status with an error): no Connection Complete will follow.
            let attempt = pendingBREDR.removeValue(forKey: at.controller)
            failedPage(FailedConnection(at: at, requested: attempt?.requested, status: status, peerAddress: attempt?.target,
                                        transport: .brEdr, completed: false))
        case .leCreateConnection, .leExtendedCreateConnection:
            failed.append(FailedConnection(at: at, status: status, attempt: pendingLE.removeValue(forKey: at.controller),
                                           reported: nil, completed: false))
        default:
            break
        }
    }

    /// A BR/EDR attempt that failed, with the page timeout its controller had then (it paged that long at most).
    mutating func failedPage(_ attempt: FailedConnection) {
        var f = attempt
        f.pageTimeoutSlots = pageTimeouts[f.at.controller] ?? FailedConnection.defaultPageTimeoutSlots
        failed.append(f)
    }

    /// Role Changes waiting for their link's Connection Complete, at most.
    static let earlyRolesKept = 64

    /// Connection Complete's link type of an ACL link (Core Vol 4 Part E §7.7.3).
    static let aclLinkType: UInt8 = 1

    /// A BR/EDR link's mode from `at`: a phase of its own, and baseband packets counted at the size an ACL link is
    /// priced with (`BREDRAirTime.aclPacket`).
    static func becomesClassic(_ c: Connection, mode: ClassicLinkMode, at: RecordRef) {
        if c.classicMode == nil {
            c.maxTxOctets = BREDRAirTime.aclPacketPayload
            c.maxRxOctets = BREDRAirTime.aclPacketPayload
        }
        c.classicMode = mode
        c.beginPhase(at: at)
    }

    // MARK: - Events

    mutating func event(code: HCIEventCode, parameters p: UnsafeRawBufferPointer, at: RecordRef) {
        switch code {
        case .connectionComplete:
            guard let v = ConnectionComplete(p) else { return }
            // Our Create Connection ends here when the event names its peer; a link the peer paged us for
            // leaves it waiting.
            var attempt: PendingAttempt<BDAddr?>?
            if let pending = pendingBREDR[at.controller], pending.target == nil || pending.target == v.address {
                attempt = pendingBREDR.removeValue(forKey: at.controller)
            }
            guard v.status == .success else {
                failedPage(FailedConnection(at: at, requested: attempt?.requested, status: v.status, peerAddress: v.address,
                                            transport: .brEdr))
                return
            }
            // Link type 1 is ACL; 0 (SCO) and 2 (eSCO) are synchronous links reported the old way.
            let acl = v.linkType == Self.aclLinkType
            guard let c = openConnection(controller: at.controller, handle: v.handle, transport: acl ? .brEdr : .sco, at: at,
                                         implicit: false, peer: v.address)
            else { return }
            c.connectRequested = attempt?.requested
            c.peerAddressType = .public
            c.encrypted = v.encryptionEnabled
            var mode = ClassicLinkMode()
            // Who paged is the central (master) unless a Role Change said otherwise while it connected.
            mode.isCentral = earlyRoles.removeValue(forKey: PeerLinkKey(controller: at.controller, peer: v.address, transport: .brEdr))
                ?? (attempt != nil)
            if !acl { mode.synchronous = .legacySCO }
            Self.becomesClassic(c, mode: mode, at: at)
            c.append(TimelineEvent(at: at, kind: .connected(parameters: nil)), limit: options.maximumEventsPerConnection)
        case .synchronousConnectionComplete:
            // status, handle, bdaddr, link type: an SCO/eSCO link that Disconnection Complete will close.
            var r = ByteReader(p)
            guard let status = r.readU8(), let handle = r.readU16(), let address = r.readAddress(),
                  status == HCIStatus.success.rawValue
            else { return }
            guard let c = openConnection(controller: at.controller, handle: handle & 0x0FFF, transport: .sco, at: at,
                                         implicit: false, peer: address)
            else { return }
            var mode = ClassicLinkMode()
            mode.synchronous = SynchronousSlots(event: p) ?? .legacySCO
            Self.becomesClassic(c, mode: mode, at: at)
            c.append(TimelineEvent(at: at, kind: .connected(parameters: nil)), limit: options.maximumEventsPerConnection)
        case .modeChange:
            // status, handle, current mode, interval (slots).
            var r = ByteReader(p)
            guard let status = r.readU8(), status == HCIStatus.success.rawValue, let handle = r.readU16(),
                  let raw = r.readU8(), let interval = r.readU16(), let mode = ClassicLinkMode.Mode(rawValue: raw),
                  let c = open[Self.key(at.controller, handle & 0x0FFF)]
            else { return }
            // Only BR/EDR links change mode: a link the capture joined midway is one.
            if c.transport == .unknown { c.transport = .brEdr }
            var m = c.classicMode ?? ClassicLinkMode()
            m.mode = mode
            m.intervalSlots = mode == .active ? 0 : interval
            m.subrate = 1  // subrating applies to the sniff mode it was set in
            Self.becomesClassic(c, mode: m, at: at)
        case .sniffSubrating:
            // status, handle, max TX latency, max RX latency (slots), min remote and local timeouts.
            var r = ByteReader(p)
            guard let status = r.readU8(), status == HCIStatus.success.rawValue, let handle = r.readU16(),
                  let tx = r.readU16(), let rx = r.readU16(), let c = open[Self.key(at.controller, handle & 0x0FFF)],
                  var m = c.classicMode, m.mode == .sniff, m.intervalSlots > 0
            else { return }
            // The phone wakes at the more frequent of its transmit and receive anchors.
            m.subrate = max(1, min(tx, rx) / m.intervalSlots)
            Self.becomesClassic(c, mode: m, at: at)
        case .roleChange:
            // status, address, new role (0 central, 1 peripheral).
            var r = ByteReader(p)
            guard let status = r.readU8(), status == HCIStatus.success.rawValue, let address = r.readAddress(),
                  let role = r.readU8()
            else { return }
            let central = role == 0
            var found = false
            for c in open.values where c.controller == at.controller && c.transport == .brEdr && c.peerAddress == address {
                var m = c.classicMode ?? ClassicLinkMode()
                m.isCentral = central
                Self.becomesClassic(c, mode: m, at: at)
                found = true
            }
            // A switch during connection setup comes before Connection Complete: kept for it (a few at most).
            if !found, earlyRoles.count < Self.earlyRolesKept {
                earlyRoles[PeerLinkKey(controller: at.controller, peer: address, transport: .brEdr)] = central
            }
        case .disconnectionComplete:
            guard let d = DisconnectionComplete(p), d.status == .success else { return }
            guard let c = connection(controller: at.controller, handle: d.handle, at: at) else { return }
            close(c, at: at, reason: d.reason, event: .disconnected(reason: d.reason, locallyRequested: c.disconnectRequestedLocally))
        case .encryptionChange, .encryptionChangeV2:
            guard let v = EncryptionChange(p) else { return }
            guard let c = connection(controller: at.controller, handle: v.handle, at: at) else { return }
            if v.status == .success { c.encrypted = v.encryptionEnabled != 0 }
            c.append(TimelineEvent(at: at, kind: .encryptionChanged(enabled: v.encryptionEnabled != 0, status: v.status)),
                     limit: options.maximumEventsPerConnection)
        default:
            break
        }
    }

    mutating func leMeta(_ sub: LESubevent, parameters p: UnsafeRawBufferPointer, at: RecordRef) {
        switch sub {
        case .connectionUpdateComplete:
            guard let v = LEConnectionUpdateComplete(p), v.status == .success else { return }
            guard let c = connection(controller: at.controller, handle: v.handle, at: at, transport: .le) else { return }
            let parameters = ConnectionParameters(interval: v.connectionInterval, latency: v.peripheralLatency,
                                                  supervisionTimeout: v.supervisionTimeout)
            if c.initialParameters == nil { c.initialParameters = parameters }
            c.parameters = parameters
            c.beginPhase(at: at)
            c.append(TimelineEvent(at: at, kind: .parametersChanged(parameters)), limit: options.maximumEventsPerConnection)
        case .dataLengthChange:
            guard let v = LEDataLengthChange(p) else { return }
            guard let c = connection(controller: at.controller, handle: v.handle, at: at, transport: .le) else { return }
            c.maxTxOctets = max(LinkLayerTraffic.minimumOctets, Int(v.maxTxOctets))
            c.maxRxOctets = max(LinkLayerTraffic.minimumOctets, Int(v.maxRxOctets))
            c.append(TimelineEvent(at: at, kind: .dataLengthChanged(maxTxOctets: v.maxTxOctets, maxRxOctets: v.maxRxOctets)),
                     limit: options.maximumEventsPerConnection)
        case .phyUpdateComplete:
            guard let v = LEPHYUpdateComplete(p), v.status == .success else { return }
            guard let c = connection(controller: at.controller, handle: v.handle, at: at, transport: .le) else { return }
            c.txPHY = v.txPHY
            c.rxPHY = v.rxPHY
            c.beginPhase(at: at)
            c.append(TimelineEvent(at: at, kind: .phyChanged(tx: v.txPHY, rx: v.rxPHY)), limit: options.maximumEventsPerConnection)
        case .remoteConnectionParameterRequest:
            guard let v = LERemoteConnectionParameterRequest(p) else { return }
            guard let c = connection(controller: at.controller, handle: v.handle, at: at, transport: .le) else { return }
            let range = ConnectionParameterRange(intervalMin: v.intervalMin, intervalMax: v.intervalMax, latency: v.latency,
                                                 supervisionTimeout: v.timeout)
            c.append(TimelineEvent(at: at, kind: .parametersRequested(range, source: .remoteRequest)),
                     limit: options.maximumEventsPerConnection)
        case .subrateChange, .connectionRateChange:
            guard let v = LESubrateChange(subevent: sub, p), v.status == .success else { return }
            guard let c = connection(controller: at.controller, handle: v.handle, at: at, transport: .le) else { return }
            // A subrate change keeps the interval; a connection rate change sets it too, in 125 µs units.
            var parameters = c.parameters ?? ConnectionParameters(interval: 0, latency: 0, supervisionTimeout: 0)
            if let fine = v.fineInterval {
                parameters.fineInterval = fine
                parameters.interval = UInt16(clamping: (Int(fine) + Self.fineUnitsPerInterval / 2) / Self.fineUnitsPerInterval)
            }
            parameters.subrateFactor = max(1, v.subrateFactor)
            parameters.continuationNumber = v.continuationNumber
            parameters.latency = v.peripheralLatency
            parameters.supervisionTimeout = v.supervisionTimeout
            if c.initialParameters == nil { c.initialParameters = parameters }
            c.parameters = parameters
            c.beginPhase(at: at)
            c.append(TimelineEvent(at: at, kind: .parametersChanged(parameters)), limit: options.maximumEventsPerConnection)
        case .channelSoundingProcedureEnableComplete:
            guard let v = LEChannelSoundingProcedureEnable(p), v.status == .success,
                  let c = connection(controller: at.controller, handle: v.handle, at: at, transport: .le)
            else { return }
            c.channelSoundingSubeventMicroseconds = v.state != 0 ? Int(v.subeventMicroseconds) : 0
        case .channelSoundingSubeventResult:
            // One result per subevent (its continues carry more steps of the same one).
            guard let handle = LEChannelSoundingSubeventResult.handle(p),
                  let c = connection(controller: at.controller, handle: handle, at: at, transport: .le)
            else { return }
            c.channelSoundingSubevent()
        default:
            break
        }
    }

    /// 125 µs units in a 1.25 ms interval unit.
    static let fineUnitsPerInterval = 10

    // MARK: - ACL

    mutating func acl(handle: UInt16, pdu: LinkPDU?, direction: Direction, at: RecordRef, cutShort: Bool = false) {
        let key = Self.key(at.controller, handle)
        if let last = lastLink, last.key == key {
            // Most ACL packets belong to the link of the one before. `open` keeps that link alive, so it is
            // borrowed without a reference-count round trip.
            let limit = options.maximumEventsPerConnection
            last.link._withUnsafeGuaranteedRef { Self.acl(pdu: pdu, direction: direction, at: at, on: $0, limit: limit, cutShort: cutShort) }
            return
        }
        // Another link's packet: borrowed from `open` too, which owns it (as `connection(controller:handle:at:)`
        // would give it, opening an implicit link for an unknown handle).
        let link: Unmanaged<Connection>
        if let found = open.borrowed(key) {
            link = found
        } else {
            guard let c = openConnection(controller: at.controller, handle: handle, transport: .unknown, at: at,
                                         implicit: true)
            else { return }
            link = Unmanaged.passUnretained(c)
        }
        lastLink = (key, link)
        let limit = options.maximumEventsPerConnection
        link._withUnsafeGuaranteedRef { Self.acl(pdu: pdu, direction: direction, at: at, on: $0, limit: limit, cutShort: cutShort) }
    }

    /// Static, with the one option it needs: a method would copy the whole tracker (a few hundred bytes) for
    /// every packet, since `self` lives in a class and the call could change it.
    static func acl(pdu: LinkPDU?, direction: Direction, at: RecordRef, on c: Connection, limit: Int, cutShort: Bool = false) {
        if direction == .sent { c.aclPacketsSent += 1 } else { c.aclPacketsReceived += 1 }
        if cutShort { c.aclPacketsCutShort += 1 }
        guard let pdu else { return }
        c.countLinkLayer(l2capBytes: pdu.payload.count + L2CAPPDU.headerLength, sent: direction == .sent)
        switch pdu.channel {
        case .att, .dynamicATT, .enhancedATT:
            if c.transport == .unknown && pdu.channel == .att { c.transport = .le }
            guard let bytes = pdu.attPayload, let opcode = bytes.first else { return }
            let sent = direction == .unknown ? Self.clientSends(ATTOpcode(rawValue: opcode)) : direction == .sent
            c.session.pdu(bytes, bearer: pdu.bearer, sent: sent, at: at, connection: c)
        case .smp:
            if c.transport == .unknown { c.transport = .le }
            let smp = SMPPDU(pdu.payload)
            if direction != .sent, case .identityAddressInformation(_, let address) = smp, address.rawValue != 0 {
                c.peerIdentityAddress = address
            }
            c.append(TimelineEvent(at: at, kind: .pairing(code: smp.code, sent: direction == .sent, detail: smp.summary)),
                     limit: limit)
        case .leSignaling:
            if c.transport == .unknown { c.transport = .le }
            let signal = L2CAPSignal(pdu.payload)
            switch signal.command {
            case .connectionParameterUpdateRequest(let min, let max, let latency, let timeout):
                let range = ConnectionParameterRange(intervalMin: min, intervalMax: max, latency: latency,
                                                     supervisionTimeout: timeout)
                c.append(TimelineEvent(at: at, kind: .parametersRequested(range, source: .l2capRequest)),
                         limit: limit)
            case .connectionParameterUpdateResponse(let result):
                c.append(TimelineEvent(at: at, kind: .parameterRequestAnswered(accepted: result == 0)),
                         limit: limit)
            default:
                let sent = direction == .unknown ? Self.hostSends(signal.command) : direction == .sent
                if let change = c.enhancedATT.signal(signal, sent: sent) ?? c.l2capChannels.signal(signal, sent: sent) {
                    c.append(TimelineEvent(at: at, kind: change.kind, byHost: change.byHost),
                             limit: limit)
                }
            }
        case .brEdrSignaling:
            // CID 0x0001 exists on BR/EDR links only; it may pack several commands.
            if c.transport == .unknown {
                c.transport = .brEdr
                // Joined midway: its mode is unknown until a Mode Change; taken as active.
                becomesClassic(c, mode: ClassicLinkMode(), at: at)
            }
            for signal in L2CAPSignal.commands(in: pdu.payload) {
                let sent = direction == .unknown ? Self.hostSends(signal.command) : direction == .sent
                if let change = c.l2capChannels.signal(signal, sent: sent) {
                    c.append(TimelineEvent(at: at, kind: change.kind, byHost: change.byHost),
                             limit: limit)
                }
            }
        case .unknownFixed:
            c.vendorFixedChannelPDUs += 1
        default:
            break
        }
    }

    /// Initiator filter policy 0 names one peer; 1 means the accept list (Core Vol 4 Part E §7.8.12).
    static func target(_ initiatorFilterPolicy: UInt8, _ peer: BDAddr) -> ConnectionTarget {
        initiatorFilterPolicy == 0 ? .peer(peer) : .acceptList
    }

    /// Without a direction (pcap linktype 187), channel requests are taken as the host's and their responses as
    /// the peer's, as for ATT: a request and its response then pair.
    static func hostSends(_ command: L2CAPSignal.Command) -> Bool {
        switch command {
        case .connectionRequest, .leCreditBasedConnectionRequest, .creditBasedConnectionRequest,
             .creditBasedReconfigureRequest: true
        default: false
        }
    }

    /// Without a direction (pcap linktype 187), requests and commands are taken as the host's (as client).
    static func clientSends(_ opcode: ATTOpcode) -> Bool {
        opcode.isRequest || opcode.isCommand || opcode == .handleValueConfirmation
    }

    // MARK: - End

    /// `summaries`: those of the judged links let go (`LinkRetirement.Keeping.summary`), nil unless kept.
    mutating func finish(at last: RecordRef?)
        -> (connections: [Connection], failed: [FailedConnection], dropped: Int, summaries: SetAsideArray<LinkSummary>?) {
        // Links still open are judged with the whole capture, not early: their end is the capture's, which
        // neither the judge nor its pricing (`PricedPhases`) knows.
        for c in open.values.sorted(by: { $0.id < $1.id }) { retire(c, at: last, judging: false) }
        var all = finished.sorted { $0.id < $1.id }
        Self.inheritGATT(&all)
        var summaries: SetAsideArray<LinkSummary>?
        if options.retirement?.keeping == .summary {
            for s in retiring.peersSummaries { retiring.summaries.append(s) }
            retiring.peers = GenerationalMap(generation: RetirementState.peersRemembered)
            summaries = retiring.summaries
            retiring.summaries = []  // the caller's copy is then the only one: it grows in place
        }
        return (all, failed, dropped, summaries)
    }

    /// The judged links let go without their summary (`LinkInterest`), by controller and start.
    mutating func takeLetGoLinks() -> [LetGoLink] {
        var links = retiring.letGoLinks
        retiring.letGoLinks = []
        LetGoLink.sortForModel(&links)
        return links
    }

    /// A scan boundary (`ScanBoundaries`) of `controller` at `t` (nanoseconds), when judged links are let go by
    /// what the rules read.
    mutating func scanBoundary(controller: UInt16, _ t: Int64) {
        guard let retirement = options.retirement, let interest = retirement.interest else { return }
        // Past the cap on finished links none joins the model: what the links still waiting can look at ends with them.
        if let until = retiring.boundariesReadUntil, t > until { return }
        retiring.scanBoundaries.insert(controller: controller, t)
        retirement.mostScanBoundaries = max(retirement.mostScanBoundaries, retiring.scanBoundaries.count)
        if retiring.scanBoundaries.count >= retiring.scanBoundariesPruned {
            forgetScanBoundaries(before: earliestAskedNotLetGo().minusSaturating(interest.scanEndAroundRequest.before))
        }
    }

    /// The latest scan boundary a link not yet let go can look at (`readsSummary`: around when it was asked for,
    /// while it was up), once no other link can join the model (`maximumConnections`): the finished links waiting
    /// are all that will be let go, and boundaries after them would only pile up.
    func boundariesReadUntil(_ interest: LinkInterest) -> Int64 {
        var latest = Int64.min
        for c in finished[retiring.examined...] { latest = max(latest, (c.end ?? c.start).timestamp.nanoseconds) }
        return latest.plusSaturating(interest.scanEndAroundRequest.after)
    }

    /// The earliest time a link not yet let go was asked for or started (the open links, the finished ones not
    /// yet examined, the pending requests): no link let go from now on looks at boundaries much before it.
    func earliestAskedNotLetGo() -> Int64 {
        func asked(_ c: Connection) -> Int64 { (c.connectRequested ?? c.start).timestamp.nanoseconds }
        var earliest = Int64.max
        for c in open.values { earliest = min(earliest, asked(c)) }
        for c in finished[retiring.examined...] { earliest = min(earliest, asked(c)) }
        for p in pendingLE.values { earliest = min(earliest, p.requested.timestamp.nanoseconds) }
        for p in pendingBREDR.values { earliest = min(earliest, p.requested.timestamp.nanoseconds) }
        return earliest
    }

    /// Forgets the scan boundaries no link let go from now on can look at (`LinkInterest`): those before
    /// `cutoff`, but for the latest one before it on each controller (a link starting after `cutoff` may come up
    /// after that boundary), and the first links after the boundaries forgotten. Keeps what is remembered of
    /// scans bounded by what is live, however many scans a capture holds.
    mutating func forgetScanBoundaries(before cutoff: Int64) {
        let anchors = retiring.scanBoundaries.forget(before: cutoff)
        if !anchors.isEmpty {
            retiring.firstAfterBoundary = retiring.firstAfterBoundary.filter { epoch, _ in
                anchors[epoch.controller].map { epoch.boundary >= $0 } ?? true
            }
        }
        retiring.scanBoundariesPruned = max(RetirementState.scanBoundariesKeptAtLeast, 2 * retiring.scanBoundaries.count)
    }

    /// Shares each peer's GATT database with its connections that did not discover it (`GATTKnowledge`).
    static func inheritGATT(_ connections: inout [Connection], receiver: (Connection) -> Connection = { $0 }) {
        GATTKnowledge.share(&connections, receiver: receiver)
    }
}
