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
    /// Finished connections kept: the first this many; later ones are counted, not kept, so memory stays bounded
    /// on endless captures (live capture then stops reporting closed links).
    public var maximumConnections = 100_000
    /// Links up at once; traffic for further (controller, handle) pairs is ignored and the links counted as
    /// dropped. A controller holds at most a few dozen links: only a corrupt capture gets near this.
    public var maximumOpenConnections = 1024
    /// Build the advertiser table (every advertising report parsed per address). Only `btlens devices` shows
    /// it, and it is the most expensive part of tracking on scan-heavy captures, so the other commands skip it.
    public var trackAdvertisers = true

    public init() {}

    /// For commands that show connections, scans and findings but not the advertiser table.
    public static var withoutAdvertisers: TrackerOptions {
        var o = TrackerOptions()
        o.trackAdvertisers = false
        return o
    }
}

/// Everything the tracking layer learnt from a capture.
public struct CaptureModel: Sendable {
    public var connections: [Connection]
    public var failedConnections: [FailedConnection]
    public var scans: [ScanSession]
    public var advertisers: [Advertiser]
    public var ownAdvertising: [AdvertisingSession]
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
}

/// Turns decoded frames into connections, scans, advertisers, ATT transactions and GATT databases.
/// Holds per-connection state; memory is bounded by the number of live connections and advertisers.
public final class CaptureTracker {
    public let options: TrackerOptions
    var commands = CommandCorrelator()
    public internal(set) var connections: ConnectionTracker
    public internal(set) var scans = ScanTracker()
    public internal(set) var advertisers = AdvertiserTracker()
    public internal(set) var ownAdvertising = OwnAdvertisingTracker()
    var first: RecordRef?
    var last: RecordRef?
    var records = 0
    var controllerDebugLog = 0
    /// Where to report advertising events whose reports do not fit, when the decoder was told not to check
    /// them (`PacketDecoder.validatesAdvertisingReports`).
    public var issues: IssueLog?

    public init(options: TrackerOptions = TrackerOptions()) {
        self.options = options
        connections = ConnectionTracker(options: options)
    }

    /// Inlined into the reading loop: out of line, every frame (a few hundred bytes) is copied with `memcpy`.
    @inline(__always)
    public func observe(_ frame: DecodedFrame) {
        let at = RecordRef(frame.record)
        records += 1
        if first == nil { first = at }
        last = at
        guard let hci = frame.hci else {
            if frame.record.kind == .controllerRemoved {
                connections.controllerReset(at: at)
                scans.controllerReset(at: at)
                ownAdvertising.controllerReset(at: at)
            }
            return
        }
        switch hci {
        case .command(let command):
            commands.command(command, at: at)
            connections.command(command, at: at)
        case .event(let event):
            observeEvent(event, frame: frame, at: at)
        case .acl(let acl):
            if frame.isControllerDebugLog {
                controllerDebugLog += 1  // the controller's own log, on no link
            } else {
                connections.acl(acl, pdu: frame.l2cap, direction: frame.record.direction, at: at)
            }
        case .sco, .iso:
            break
        }
    }

    func observeEvent(_ event: HCIEventPacket, frame: DecodedFrame, at: RecordRef) {
        switch event.code {
        case .leMeta:
            guard let sub = event.subevent else { return }
            let p = event.subeventParameters
            switch sub {
            case .advertisingReport, .extendedAdvertisingReport:
                var reports = AdvertisingReportIterator(subevent: sub, parameters: p)
                let count = scans.advertisingReports(&reports, at: at)
                if options.trackAdvertisers {
                    // The advertiser table reads every report whole: a second walk over the same event.
                    var whole = AdvertisingReportIterator(subevent: sub, parameters: p)
                    while let report = whole.next() { advertisers.advertisingReport(report, at: at) }
                }
                if reports.isMalformed, let issues, frame.advertisingReports == 0 {
                    issues.report(.badParameters, record: at.number, offset: at.offset,
                                  "\(sub) declares \(reports.declaredCount) reports, \(count) fit in the event")
                }
            case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2:
                guard let complete = LEConnectionComplete(subevent: sub, p) else { return }
                if let connection = connections.leConnectionComplete(complete, at: at,
                                                                      scanning: scans.isScanning(controller: at.controller),
                                                                      advertising: ownAdvertising.isAdvertising(controller: at.controller)) {
                    scans.connectionCameUp(controller: at.controller, handle: connection.handle, at: at)
                    ownAdvertising.connectionCameUp(controller: at.controller, handle: connection.handle,
                                                    isPeripheral: !complete.isCentral, at: at)
                }
            case .scanTimeout:
                scans.scanTimeout(at: at)
            case .advertisingSetTerminated:
                ownAdvertising.advertisingSetTerminated(p, at: at)
            default:
                connections.leMeta(sub, parameters: p, at: at)
            }
        case .commandComplete:
            guard let cc = CommandComplete(event.parameters) else { return }
            if cc.opcode == .reset {
                // Every link, scan and advertising set of the controller is gone.
                connections.controllerReset(at: at)
                scans.controllerReset(at: at)
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
            connections.event(event, at: at)
        }
    }

    func route(_ pending: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {
        scans.commandCompleted(pending, status: status, at: at)
        ownAdvertising.commandCompleted(pending, status: status, at: at)
        connections.commandAnswered(pending, status: status, at: at)
    }

    /// Closes what is still open and returns the model.
    public func finish() -> CaptureModel {
        let result = connections.finish(at: last)
        return model(connections: result.connections, droppedConnections: result.dropped, scans: &scans,
                     advertisers: &advertisers, ownAdvertising: &ownAdvertising)
    }

    /// The model from finished links and the other trackers (the tracker's own, or copies for a snapshot).
    func model(connections all: [Connection], droppedConnections: Int, scans: inout ScanTracker,
               advertisers: inout AdvertiserTracker, ownAdvertising: inout OwnAdvertisingTracker) -> CaptureModel {
        var model = CaptureModel(connections: all, failedConnections: connections.failed, scans: scans.finish(at: last),
                                 advertisers: advertisers.finish(), ownAdvertising: ownAdvertising.finish(at: last),
                                 droppedConnections: droppedConnections, firstTimestamp: first?.timestamp,
                                 lastTimestamp: last?.timestamp, records: records)
        model.advertiserOverflow = advertisers.overflow
        model.abandonedAdvertisingChains = advertisers.abandonedChains
        model.controllerDebugLogPackets = controllerDebugLog
        return model
    }
}

/// The tracking pipeline over a whole capture, generic over the reader type.
public struct TrackingCollector: RecordSourceVisitor {
    public var options: TrackerOptions
    public var progress: ((Int64) -> Void)?

    public init(options: TrackerOptions = TrackerOptions(), progress: ((Int64) -> Void)? = nil) {
        self.options = options
        self.progress = progress
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> CaptureModel {
        var decoder = PacketDecoder(issues: source.issues)
        decoder.validatesAdvertisingReports = false  // the tracker walks the reports and reports bad layouts
        let tracker = CaptureTracker(options: options)
        tracker.issues = source.issues
        while let record = source.next() {
            tracker.observe(decoder.decode(record))
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
        }
        return tracker.finish()
    }
}
