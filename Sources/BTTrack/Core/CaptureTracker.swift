import BTWire
import BTCapture
import BTDecode

/// Options of the tracking layer. Thresholds are the protocol's (ATT's 30 s) or chosen to summarise timelines.
public struct TrackerOptions: Sendable {
    /// A request unanswered this long is an ATT timeout (Core Vol 3 Part F §3.3.3).
    public var attTimeout: Duration = .seconds(30)
    /// ATT operations of one kind on one handle closer than this form one run in the timeline.
    public var activityRunGap: Duration = .seconds(5)
    /// A gap without ATT traffic at least this long is shown as idle.
    public var idleGap: Duration = .seconds(10)
    /// Timeline events kept per connection; further events are counted, not kept.
    public var maximumEventsPerConnection = 20_000
    /// Activity series kept per connection (one per kind of operation, attribute and side): a link's series
    /// are as many as the attributes it uses, so only a corrupt or hostile capture gets near this. Each costs
    /// 112 bytes (its records to cite are its runs').
    public var maximumSeriesPerConnection = 4096
    /// Answered ATT requests kept per connection (`Connection.attTransactions`); 0 keeps none. Only the Perfetto
    /// export draws them one by one; further ones are counted (`droppedATTTransactions`).
    public var keptATTTransactions = 0
    /// Finished connections kept: the first this many; later ones are counted, not kept, so memory stays bounded
    /// on endless captures (live capture then stops reporting closed links).
    public var maximumConnections = 100_000
    /// Links up at once; traffic for further (controller, handle) pairs is ignored and the links counted as
    /// dropped. A controller holds at most a few dozen links: only a corrupt capture gets near this.
    public var maximumOpenConnections = 1024
    /// Build the advertiser table (every advertising report parsed per address). Only `btlens devices` shows
    /// it, and it is the most expensive part of tracking on scan-heavy captures, so the other commands skip it.
    public var trackAdvertisers = true
    /// When `TrackingCollector` tracks links and scans on a second thread while it reads records (`LinkFeed`).
    /// The model is the same either way.
    public var linkThread = LinkThreadPolicy.whenTwoProcessors
    /// Judge finished links while the capture is read and slim them (`LinkRetirement`): set by `btlens audit`,
    /// which needs no link's history after its per-link rules ran. nil keeps every finished link whole.
    public var retirement: LinkRetirement?
    /// How many of the connections that came up during each scan session keep their record
    /// (`ScanSession.connectionsWhileScanning`); every one is counted (`connectionsWhileScanningCount`). The
    /// timeline and `devices --json` list them all; the `devices` text shows the first three; the audit, `energy`
    /// and the exports only count them — a scan left on through a 10 GB capture sees 300,000.
    public var connectionsWhileScanningListed = Int.max
    /// How many devices of each finished scan session a report lists (`ScanSession.reportsPerDevice`, most reports
    /// first): a session that is one app scan alone keeps those and the counts of the links' peers
    /// (`ScanDeviceKeeping`); `Int.max` keeps every list whole (the timeline).
    public var scanDevicesListed = Int.max
    /// Build the app's scans (`CaptureModel.appScans`) from the scan sessions at the end. The scan rules and the
    /// timeline read them; `energy` and `devices` do not, and on a capture of many short scans they are one of
    /// the largest things the model holds.
    public var buildsAppScans = true
    /// Where scan and advertising sessions are set aside as they end (`ScanSessions`, `AdvertisingSessions`), and
    /// the app's scans as they are built (`AppScanList`): a capture of many thousand scans then holds a few bytes
    /// for each in memory. nil keeps them in memory (live views, tests).
    public var scanSessionSpillDirectory: String?
    /// Scan sessions (and app scans) held in memory before the oldest are set aside (when they are): twice this at
    /// most, as long as none of them is still open.
    public var scanSessionsKept = ScanSessions.recentKept

    public init() {}

    /// For commands that show connections, scans and findings but not the advertiser table.
    public static var withoutAdvertisers: TrackerOptions {
        var o = TrackerOptions()
        o.trackAdvertisers = false
        return o
    }
}

/// Whether tracking runs partly on a second thread.
public enum LinkThreadPolicy: Sendable {
    case never
    /// When the machine has a second processor to run it: on one, the handover would only cost.
    case whenTwoProcessors
    case always
}

/// Everything the tracking layer learnt from a capture.
public struct CaptureModel: Sendable {
    public var connections: [Connection]
    public var failedConnections: [FailedConnection]
    public var scans: ScanSessions
    public var advertisers: [Advertiser]
    public var ownAdvertising: AdvertisingSessions
    /// Connections dropped by `maximumConnections` or `maximumOpenConnections`.
    public var droppedConnections: Int
    public var firstTimestamp: Timestamp?
    public var lastTimestamp: Timestamp?
    /// Records observed.
    public var records: Int
    /// What the advertiser table counted but did not keep (beyond `AdvertiserTracker`'s cap).
    public var advertiserOverflow = AdvertiserOverflow()
    /// Chained extended advertisements dropped unfinished (too many chains in progress at once).
    public var abandonedAdvertisingChains = 0
    /// ACL packets that were a Qualcomm controller's debug log (`ACLPacket.isQualcommDebugLog`): no link's.
    public var controllerDebugLogPackets = 0
    /// The host's operating system, where the capture shows it.
    public var platform = PlatformEvidence()
    /// The controller's own activity counters, each time the stack read them (Android `0xFD59`).
    public var controllerActivity: [ControllerActivityReport] = []
    /// Bluetooth Quality Reports the controller sent (vendor event, sub-code 0x58), in capture order.
    public var qualityReports: [QualityReport] = []
    /// The BR/EDR page and inquiry scan settings the controller ran with (`ClassicScanTracker`), and from when each
    /// controller's were known: before, the capture does not say whether it listened.
    public var classicScans: [ClassicScanSpan] = []
    public var classicScansKnownFrom: [UInt16: Timestamp] = [:]
    /// BR/EDR inquiries the controller ran (`ClassicInquiryTracker`).
    public var inquiries: [ClassicInquirySpan] = []
    /// The name the host gave its controller or read from it (`LocalName`): often the phone's model.
    public var localName: String?
    /// The controller's chip, from its first answer to Read Local Version Information.
    public var controllerVersion: ControllerVersion?
    /// HCI events and ACL packets the controller delivered to the host: each wakes it.
    public var hostWakeups = HostWakeups()
    /// LE link-layer records (an air sniffer's): the capture shows the radio, not a host. Rules that need the
    /// host's HCI commands (scanning) have nothing to judge then.
    public var linkLayerRecords = 0
    /// CONNECT_INDs whose link the sniffer never heard (it followed another, or the connection failed to be
    /// established): counted, not made into connections.
    public var unfollowedConnectRequests = 0
    /// Android's scan clients (`ScanClient`), in the order they were added.
    public var scanClients: [ScanClient] = []
    /// HCI Resets and controllers removed, in order (at most `ScanClient.limit`): the stack starts its own scans
    /// as it brings a controller up.
    public var controllerResets: [RecordRef] = []
    /// The app's scans (`AppScan`): what the scan rules judge.
    public var appScans = AppScanList()
    /// Other clients' scanning on controllers whose clients can be told apart.
    public var backgroundScanning: [BackgroundScanning] = []
    /// Nanoseconds the controller scanned before its first scan client showed (whose scan cannot be told).
    public var unattributedScanning: Int64 = 0
    /// Which app each scan and link was, from the Android bug report the capture came with; nil without one.
    public var attribution: AppAttribution?
    /// Where work over every link or scan that memory should not hold whole (a capture-wide rule's sort) may be
    /// set aside: the tracker's directory (`TrackerOptions.scanSessionSpillDirectory`); nil keeps it in memory.
    public var scratchDirectory: String?

    /// Indexes into `scans` of the controller sessions programmed for the app's scans, in order.
    public var appScanSessions: [Int] { Array(Set(appScans.flatMap(\.programmed))).sorted() }

    /// The links the app's rules judge.
    public var appConnections: [Connection] {
        // Every link the app's (a link judged alone, per rule): the same array, not a copy.
        connections.allSatisfy(\.ownership.isApp) ? connections : connections.filter(\.ownership.isApp)
    }

    /// Every link's summary (in id order through `links`): set when links judged early were let go but for their
    /// summary (`LinkRetirement.Keeping.summary`), `connections` then holding only the links still read whole or
    /// slim. Set aside in a file as links are let go when the tracker was given a directory.
    public private(set) var summarizedLinks: SetAsideArray<LinkSummary>?
    /// Where each link in id order is among `summarizedLinks` (nil: they are in id order).
    var summaryOrder: [Int32]?
    /// What the capture-wide rules read of every link, in id order: the summaries, or made from `connections`.
    public var links: LinkSummaries { LinkSummaries(summaries: summarizedLinks, order: summaryOrder, connections: connections) }
    /// The links of the model (those let go but for their summary, and those let go entirely, included).
    public var linkCount: Int { (summarizedLinks?.count ?? connections.count) + letGoLinks.count }
    /// The judged links let go without their summary, as no capture-wide rule reads them (`LinkInterest`), by
    /// controller, start and id. Rules read them with the kept ones through `linkStarts`.
    public var letGoLinks: [LetGoLink] = []

    /// Whether the app's rules judge `link` (`LinkOwnership`).
    public func isAppLink(_ link: LinkSummary) -> Bool { link.ownership.isApp }

    /// Sets `summarizedLinks`: the summaries of the links let go (`letGo`) and of the model's links, by id — once
    /// the model decided its links' ownership.
    mutating func summarize(letGo: consuming SetAsideArray<LinkSummary>) {
        var links = consume letGo  // the only owner: appending grows it in place
        for c in connections { links.append(LinkSummary(c)) }
        summaryOrder = links.orderByID()
        summarizedLinks = links
    }

    /// What went wrong setting aside the model's scan sessions, the app's scans, the phone's advertising or the
    /// links' summaries in their files (a full disk), if anything: rules would read zeros for what was lost.
    public var setAsideFailure: String? {
        scans.failure ?? appScans.failure ?? ownAdvertising.failure ?? summarizedLinks?.failure
    }

    /// HCI packets and link-layer frames: what the audit judges. None means a capture of notes or nothing (snoop
    /// logging off or broken), which must not pass as a clean audit.
    public var judgedRecords = 0
    public var hasNothingToJudge: Bool { judgedRecords == 0 }

    /// Whether the app's rules judge `c` (`LinkOwnership`).
    public func isAppLink(_ c: Connection) -> Bool { c.ownership.isApp }

    /// A model of a few links alone, for rules that judge one link at a time (`LinkRetirement`).
    public static func links(_ connections: [Connection]) -> CaptureModel {
        CaptureModel(connections: connections, failedConnections: [], scans: [], advertisers: [], ownAdvertising: [],
                     droppedConnections: 0, firstTimestamp: connections.first?.start.timestamp,
                     lastTimestamp: connections.lazy.compactMap { $0.end?.timestamp }.max(), records: 0)
    }

    /// The model without the links judged before the capture ended (`Connection.isJudged`).
    public var withoutJudgedLinks: CaptureModel {
        var m = self
        m.connections = connections.filter { !$0.isJudged }
        m.summarizedLinks = nil
        m.summaryOrder = nil
        return m
    }

    /// An air capture: link-layer records and no HCI traffic to speak of.
    public var isAirCapture: Bool { linkLayerRecords > 0 && linkLayerRecords * 2 >= records }
}

/// Turns decoded frames into connections, scans, advertisers, ATT transactions and GATT databases.
/// Holds per-connection state; memory is bounded by the number of live connections and advertisers.
public final class CaptureTracker {
    public let options: TrackerOptions
    @exclusivity(unchecked) var commands = CommandCorrelator()
    @exclusivity(unchecked) public internal(set) var connections: ConnectionTracker
    @exclusivity(unchecked) public internal(set) var scans = ScanTracker()
    @exclusivity(unchecked) public internal(set) var advertisers = AdvertiserTracker()
    @exclusivity(unchecked) public internal(set) var ownAdvertising = OwnAdvertisingTracker()
    @exclusivity(unchecked) var first: RecordRef?
    @exclusivity(unchecked) var last: RecordRef?
    @exclusivity(unchecked) var records = 0
    /// HCI packets and link-layer frames seen (`CaptureModel.judgedRecords`).
    @exclusivity(unchecked) var judgedRecords = 0
    @exclusivity(unchecked) var controllerDebugLog = 0
    /// What the capture shows of the host's platform.
    @exclusivity(unchecked) public var platform = PlatformEvidence()
    @exclusivity(unchecked) var controllerActivity: [ControllerActivityReport] = []
    @exclusivity(unchecked) var qualityReports: [QualityReport] = []
    @exclusivity(unchecked) var classicScans = ClassicScanTracker()
    @exclusivity(unchecked) var inquiries = ClassicInquiryTracker()
    var localName: String?
    var controllerVersion: ControllerVersion?
    @exclusivity(unchecked) var hostWakeups = HostWakeups()
    /// Links followed on the air (LE link-layer sniffer records), created at the first such record.
    @exclusivity(unchecked) var air: AirTracker?
    /// Where to report advertising events whose reports do not fit, when the decoder was told not to check
    /// them (`PacketDecoder.validatesAdvertisingReports`).
    @exclusivity(unchecked) public var issues: IssueLog?
    /// Set while links are tracked on a second thread (`TrackingCollector`): what `connections` would be given
    /// goes there, and `connections` is taken back by `finish`.
    var linkFeed: LinkFeed? {
        didSet { borrowedLinkFeed = linkFeed.map(Unmanaged.passUnretained) }
    }
    /// `linkFeed` for every ACL packet and advertising event: borrowed, as a strong reference would cost a
    /// retain and a release.
    @exclusivity(unchecked) var borrowedLinkFeed: Unmanaged<LinkFeed>?

    public init(options: TrackerOptions = TrackerOptions()) {
        self.options = options
        connections = ConnectionTracker(options: options)
        scans.connectionsWhileScanningListed = options.connectionsWhileScanningListed
        scans.notesBoundaries = options.retirement?.interest != nil
        scans.trimsDevices = options.scanDevicesListed != Int.max
        if let directory = options.scanSessionSpillDirectory {
            scans.sessions = ScanSessions(spillingTo: directory, kept: options.scanSessionsKept)
            ownAdvertising.sessions = AdvertisingSessions(spillingTo: directory, kept: options.scanSessionsKept)
        }
    }

    /// Hands the scan boundaries the last record made (`ScanTracker.boundaries`) to the link tracker, before
    /// the next record's messages, and trims the device counts of the sessions that ended
    /// (`ScanTracker.deviceTrims`: on one thread, where the links' peers are known).
    @inline(never)
    func handScanBoundaries() {
        if !scans.deviceTrims.isEmpty { trimScanDevices() }
        for b in scans.boundaries {
            if let linkFeed {
                linkFeed.sendScanBoundary(controller: b.controller, b.time)
            } else {
                connections.scanBoundary(controller: b.controller, b.time)
            }
        }
        scans.boundaries.removeAll(keepingCapacity: true)
    }

    func trimScanDevices() {
        for t in scans.deviceTrims { scans.trimDevices(of: t.session, piece: t.piece, &connections.scanDevices) }
        scans.deviceTrims.removeAll(keepingCapacity: true)
    }

    /// Inlined into the reading loop: out of line, every frame (a few hundred bytes) is copied with `memcpy`.
    @inline(__always)
    public func observe(_ frame: DecodedFrame) {
        let at = RecordRef(frame.record)
        seen(at)
        guard let hci = frame.hci else {
            if frame.record.kind == .linkLayer { judgedRecords &+= 1 }
            if frame.record.kind == .controllerRemoved {
                linksControllerReset(at: at)
                ownAdvertising.controllerReset(at: at)
            } else if frame.record.kind == .controllerAdded, let linkFeed {
                linkFeed.send(linkFeed.message(.controllerAdded, at: at))  // the link thread's L2CAP decoder forgets it
            } else if frame.record.kind == .note {
                platform.note(frame.record)
            } else if frame.record.kind == .linkLayer, let ll = frame.linkLayer {
                airFrame(ll, l2cap: frame.l2cap, at: at)
            }
            return
        }
        judgedRecords &+= 1
        switch hci {
        case .command(let command):
            commands.command(command, at: at)
            platform.command(command.opcode)
            if let linkFeed {
                linkFeed.send(linkFeed.message(.command, at: at, code: command.opcode.rawValue), command.parameters)
            } else {
                connections.command(opcode: command.opcode, parameters: command.parameters, at: at)
            }
        case .event(let event):
            hostWakeups.delivered(at: at.timestamp.nanoseconds)
            // Advertising reports are most records of a scanning capture: handled here, inline, not through
            // `observeEvent`'s large frame.
            if let sub = event.subevent, sub == .advertisingReport || sub == .extendedAdvertisingReport {
                advertisingEvent(sub, event.subeventParameters, validated: frame.advertisingReports, at: at)
            } else {
                observeEvent(event, frame: frame, at: at)
            }
        case .acl(let acl):
            if frame.record.direction == .received { hostWakeups.delivered(at: at.timestamp.nanoseconds) }
            if frame.isControllerDebugLog {
                controllerDebugLog += 1  // the controller's own log, on no link
            } else if let feed = borrowedLinkFeed {
                feed._withUnsafeGuaranteedRef { $0.send(acl, cutShort: frame.record.isCutShort, direction: frame.record.direction, at: at) }
            } else {
                connections.acl(handle: acl.handle, pdu: frame.l2cap.map(LinkPDU.init), direction: frame.record.direction,
                                at: at, cutShort: frame.record.isCutShort)
            }
        case .sco, .iso:
            break
        }
    }

    /// Every record, before what it says is tracked.
    @inline(__always)
    func seen(_ at: RecordRef) {
        if !scans.boundaries.isEmpty || !scans.deviceTrims.isEmpty { handScanBoundaries() }
        records += 1
        if first == nil { first = at }
        last = at
    }

    /// A record the decoder only took apart (`PacketDecoder.plainPacket`), tracked as `observe` tracks its frame,
    /// while links are tracked on a second thread: the reading loop builds no frame for most records.
    @inline(__always)
    func observe(_ packet: PlainPacket, record: CaptureRecord, feed: Unmanaged<LinkFeed>) {
        let at = RecordRef(record)
        seen(at)
        judgedRecords &+= 1
        switch packet {
        case .advertisingReports(let sub, let p):
            hostWakeups.delivered(at: at.timestamp.nanoseconds)
            advertisingEvent(sub, p, validated: 0, at: at)
        case .acl(let acl):
            if record.direction == .received { hostWakeups.delivered(at: at.timestamp.nanoseconds) }
            feed._withUnsafeGuaranteedRef { $0.send(acl, cutShort: record.isCutShort, direction: record.direction, at: at) }
        }
    }

    /// An LE (Extended) Advertising Report event: its reports are counted by the scan tracker and, when wanted,
    /// added to the advertiser table. `validated`: the reports the decoder counted, when it walked them.
    @inline(__always)
    func advertisingEvent(_ sub: LESubevent, _ p: UnsafeRawBufferPointer, validated: Int, at: RecordRef) {
        // The scan tracker walks the reports on either path, so the decoder need not check them
        // (`PacketDecoder.validatesAdvertisingReports`): a bad layout is reported here.
        var reports = AdvertisingReportIterator(subevent: sub, parameters: p)
        let count = scans.advertisingReports(&reports, at: at)
        if reports.isMalformed, validated == 0 {
            reportBadAdvertisingEvent(sub, declared: reports.declaredCount, fit: count, at: at)
        }
        if options.trackAdvertisers { addToAdvertiserTable(sub, p, at: at) }
    }

    @inline(never)
    func reportBadAdvertisingEvent(_ sub: LESubevent, declared: Int, fit: Int, at: RecordRef) {
        issues?.report(.badParameters, record: at.number, offset: at.offset,
                       "\(sub) declares \(declared) reports, \(fit) fit in the event")
    }

    /// The advertiser table reads every report whole: a second walk over the same event.
    func addToAdvertiserTable(_ sub: LESubevent, _ p: UnsafeRawBufferPointer, at: RecordRef) {
        var whole = AdvertisingReportIterator(subevent: sub, parameters: p)
        while let report = whole.next() { advertisers.advertisingReport(report, at: at) }
    }

    func observeEvent(_ event: HCIEventPacket, frame: DecodedFrame, at: RecordRef) {
        switch event.code {
        case .leMeta:
            guard let sub = event.subevent else { return }
            let p = event.subeventParameters
            switch sub {
            case .advertisingReport, .extendedAdvertisingReport:
                // `observe` sends these there before this switch.
                advertisingEvent(sub, p, validated: frame.advertisingReports, at: at)
            case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2:
                guard let complete = LEConnectionComplete(subevent: sub, p) else { return }
                let scanning = scans.isScanning(controller: at.controller)
                let advertising = ownAdvertising.isAdvertising(controller: at.controller)
                if let linkFeed {
                    var m = linkFeed.message(.leConnectionComplete, at: at, byte: sub.rawValue)
                    m.flags = (scanning ? 1 : 0) | (advertising ? 2 : 0)
                    linkFeed.send(m, p)
                } else {
                    _ = connections.leConnectionComplete(complete, at: at, scanning: scanning, advertising: advertising)
                }
                // A link that came up, whether or not the link tracker keeps it (past `maximumOpenConnections`):
                // the other trackers do not wait for the link tracker, which may run on another thread.
                if complete.status == .success {
                    scans.connectionCameUp(controller: at.controller, handle: complete.handle, at: at)
                    ownAdvertising.connectionCameUp(controller: at.controller, handle: complete.handle,
                                                    isPeripheral: !complete.isCentral, at: at)
                }
            case .scanTimeout:
                scans.scanTimeout(at: at)
            case .advertisingSetTerminated:
                ownAdvertising.advertisingSetTerminated(p, at: at)
            default:
                if let linkFeed {
                    linkFeed.send(linkFeed.message(.leMeta, at: at, byte: sub.rawValue), p)
                } else {
                    connections.leMeta(sub, parameters: p, at: at)
                }
            }
        case .commandComplete:
            guard let cc = CommandComplete(event.parameters) else { return }
            if cc.opcode == ControllerActivityReport.opcode { activityReport(cc, at: at) }
            if cc.opcode == ControllerVersion.opcode, controllerVersion == nil {
                controllerVersion = ControllerVersion(returnParameters: cc.returnParameters, controller: at.controller)
            }
            if cc.opcode == .readLocalName, cc.status == .success, localName == nil {
                localName = LocalName.decode(cc.returnParameters.dropFirst())
            }
            if cc.opcode == .reset {
                // Every link, scan and advertising set of the controller is gone.
                linksControllerReset(at: at)
                ownAdvertising.controllerReset(at: at)
            }
            guard let pending = commands.answer(controller: at.controller, opcode: cc.opcode) else { return }
            route(pending, status: cc.status ?? .success, at: at)
        case .commandStatus:
            guard let cs = CommandStatus(event.parameters),
                  let pending = commands.answer(controller: at.controller, opcode: cs.opcode)
            else { return }
            route(pending, status: cs.status, at: at)
        default:
            if event.code == .vendorSpecific { qualityReport(event.parameters, at: at) }
            if event.code == .disconnectionComplete { scans.linkChanged(at: at) }
            if event.code == .inquiryComplete { inquiries.ended(controller: at.controller, at: at.timestamp) }
            if let linkFeed {
                linkFeed.send(linkFeed.message(.event, at: at, code: UInt16(event.code.rawValue)), event.parameters)
            } else {
                connections.event(code: event.code, parameters: event.parameters, at: at)
            }
        }
    }

    @inline(never)
    func activityReport(_ cc: CommandComplete, at: RecordRef) {
        guard controllerActivity.count < ControllerActivityReport.maximumKept,
              let report = ControllerActivityReport(returnParameters: cc.returnParameters, at: at)
        else { return }
        controllerActivity.append(report)
    }

    @inline(never)
    func qualityReport(_ p: UnsafeRawBufferPointer, at: RecordRef) {
        guard qualityReports.count < QualityReport.maximumKept,
              let report = BluetoothQualityReport(vendorEventParameters: p)
        else { return }
        qualityReports.append(QualityReport(at: at, report: report))
    }

    /// HCI Reset or the controller's removal, for the link and scan trackers.
    func linksControllerReset(at: RecordRef) {
        if let linkFeed {
            linkFeed.send(linkFeed.message(.controllerReset, at: at))
        } else {
            connections.controllerReset(at: at)
        }
        scans.controllerReset(at: at)
        classicScans.controllerReset(at: at)
        inquiries.ended(controller: at.controller, at: at.timestamp)
    }

    func route(_ pending: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {
        scans.commandCompleted(pending, status: status, at: at)
        ownAdvertising.commandCompleted(pending, status: status, at: at)
        if status == .success {
            classicScans.commandCompleted(pending, at: at)
            if pending.opcode == .inquiry || pending.opcode == .inquiryCancel { inquiries.commandAccepted(pending, at: at) }
            if pending.opcode == .writeLocalName, let name = LocalName.decode(pending.parameters) { localName = name }
        }
        guard status != .success else { return }  // the link tracker acts on refusals only
        if let linkFeed {
            linkFeed.send(linkFeed.message(.commandRefused, at: at, code: pending.opcode.rawValue, byte: status.rawValue))
        } else {
            connections.commandAnswered(opcode: pending.opcode, status: status, at: at)
        }
    }

    /// Closes what is still open and returns the model.
    public func finish() -> CaptureModel {
        // With a link feed, this asks it for the sessions' device counts. The sessions are taken from the scan
        // tracker only once those are in: a reference held while they are filled in would copy every session.
        _ = scans.finish(at: last)
        if !scans.deviceTrims.isEmpty { trimScanDevices() }
        if let linkFeed {
            let result = linkFeed.finish()
            connections = result.links
            scans.applyDeviceTallies(result.deviceTallies)
            issues?.merge(result.issues)
            self.linkFeed = nil
        }
        let sessions = scans.sessions
        var result = connections.finish(at: last)
        var summaries = result.summaries
        result.summaries = nil
        let letGo = connections.takeLetGoLinks()
        var airRecords = 0, unfollowed = 0
        if let air {
            let links = air.finish(at: last)
            // Links judged before the first air record keep their numbers (what judging wrote names them by); with
            // none judged, nothing was let go and every link is numbered by when it started.
            result.connections = connections.judgedBeforeAirLinks
                ? Self.numberedAfter(result.connections, links.connections, summaries: summaries, letGo: letGo)
                : Self.merge(result.connections, links.connections)
            result.dropped += links.dropped
            airRecords = air.records
            unfollowed = air.unfollowedRequests
        }
        var model = model(connections: result.connections, droppedConnections: result.dropped, scans: sessions,
                          advertisers: &advertisers, ownAdvertising: &ownAdvertising)
        model.letGoLinks = letGo
        model.linkLayerRecords = airRecords
        model.unfollowedConnectRequests = unfollowed
        if let links = summaries {
            summaries = nil  // `links` is then the array's only owner: it grows in place
            model.summarize(letGo: links)
        }
        return model
    }

    /// Failed attempts from HCI and, on an air capture, links whose peripheral never answered, in capture order.
    var failedConnections: [FailedConnection] {
        guard let air, !air.links.failed.isEmpty else { return connections.failed }
        guard !connections.failed.isEmpty else { return air.links.failed }
        return (connections.failed + air.links.failed).sorted { $0.at.number < $1.at.number }
    }

    /// The air links numbered after every HCI link, which keeps its number: links were judged before the capture's
    /// first air-sniffer record (`ConnectionTracker.airLinksJoin`), and what judging wrote names them by it.
    static func numberedAfter(_ hci: [Connection], _ air: [Connection], summaries: SetAsideArray<LinkSummary>?,
                              letGo: [LetGoLink]) -> [Connection] {
        let last = max(hci.last?.id ?? 0, summaries?.lazy.map(\.id).max() ?? 0, letGo.lazy.map { Int($0.id) }.max() ?? 0)
        for (k, c) in air.enumerated() { c.id = last + k + 1 }
        return hci + air
    }

    /// HCI links and air links in one list, numbered by when they started (each list is already in order).
    static func merge(_ hci: [Connection], _ air: [Connection]) -> [Connection] {
        guard !hci.isEmpty else { return air }
        guard !air.isEmpty else { return hci }
        let all = (hci + air).sorted { ($0.start.number, $0.id) < ($1.start.number, $1.id) }
        for (i, c) in all.enumerated() { c.id = i + 1 }
        return all
    }

    /// The model from finished links, scan sessions and the other trackers (the tracker's own, or copies for a
    /// snapshot).
    func model(connections all: [Connection], droppedConnections: Int, scans: ScanSessions,
               advertisers: inout AdvertiserTracker, ownAdvertising: inout OwnAdvertisingTracker) -> CaptureModel {
        var model = CaptureModel(connections: all, failedConnections: failedConnections, scans: scans,
                                 advertisers: advertisers.finish(), ownAdvertising: ownAdvertising.finish(at: last),
                                 droppedConnections: droppedConnections, firstTimestamp: first?.timestamp,
                                 lastTimestamp: last?.timestamp, records: records)
        model.advertiserOverflow = advertisers.overflow
        model.abandonedAdvertisingChains = advertisers.abandonedChains
        model.controllerDebugLogPackets = controllerDebugLog
        model.platform = platform
        model.controllerActivity = controllerActivity
        model.qualityReports = qualityReports
        model.classicScans = classicScans.spans
        model.classicScansKnownFrom = classicScans.firstKnown
        model.inquiries = inquiries.spans
        model.localName = localName
        model.controllerVersion = controllerVersion
        model.hostWakeups = hostWakeups
        model.judgedRecords = judgedRecords
        model.scratchDirectory = options.scanSessionSpillDirectory
        for c in all where !c.isJudged { c.classifyOwnership() }
        model.scanClients = self.scans.allClients
        model.controllerResets = self.scans.resets
        guard options.buildsAppScans else { return model }
        let controllers = Set(model.scanClients.map(\.controller))
        (model.appScans, model.backgroundScanning, model.unattributedScanning) = AppScans.build(
            sessions: scans, clients: model.scanClients, clientControllers: controllers,
            captureEnd: last?.timestamp,
            into: options.scanSessionSpillDirectory.map { AppScanList(spillingTo: $0, kept: options.scanSessionsKept) } ?? AppScanList())
        return model
    }
}

/// The tracking pipeline over a whole capture, generic over the reader type.
public struct TrackingCollector: RecordSourceVisitor {
    public var options: TrackerOptions
    public var progress: ((Int64) -> Void)?
    /// Sees every decoded frame after the tracker did (the Perfetto export samples advertisers' RSSI there);
    /// the frame's views are valid only during the call. Without L2CAP when links are tracked on a second thread.
    public var frameObserver: ((DecodedFrame) -> Void)?

    public init(options: TrackerOptions = TrackerOptions(), progress: ((Int64) -> Void)? = nil) {
        self.options = options
        self.progress = progress
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> CaptureModel {
        var decoder = PacketDecoder(issues: source.issues)
        let tracker = CaptureTracker(options: options)
        tracker.issues = source.issues
        tracker.platform.format(source.info.format)
        let twoThreads = options.linkThread == .always
            || (options.linkThread == .whenTwoProcessors && SecondThread.isWorthwhile)
        if twoThreads {
            let feed = LinkFeed(links: tracker.connections)
            tracker.linkFeed = feed
            tracker.scans.remoteTallies = feed.sightings  // the tracker keeps the feed alive
        }
        // The tracker walks every advertising event's reports on this thread and reports a bad layout, so
        // each report is read once by it (twice with the advertiser table, which reads every report whole).
        decoder.validatesAdvertisingReports = false
        if twoThreads, frameObserver == nil, let feed = tracker.borrowedLinkFeed {
            // The link thread decodes L2CAP; its issues are merged in by `finish`. Advertising events and ACL
            // packets, most records, are tracked from their parts: no frame is built for them.
            while let record = source.next() {
                if let packet = decoder.plainPacket(record) {
                    tracker.observe(packet, record: record, feed: feed)
                } else {
                    tracker.observe(decoder.decodeWithoutL2CAP(record))
                }
                if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            }
        } else if twoThreads {
            while let record = source.next() {
                let frame = decoder.decodeWithoutL2CAP(record)
                tracker.observe(frame)
                if let frameObserver { frameObserver(frame) }
                if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            }
        } else {
            while let record = source.next() {
                let frame = decoder.decode(record)
                tracker.observe(frame)
                if let frameObserver { frameObserver(frame) }
                if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            }
        }
        return tracker.finish()
    }
}
