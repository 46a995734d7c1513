import BTCapture
import BTDecode
import BTScenario
import BTTrack
import BTWire

/// Plays a script's HCI packets, as they are emitted, into two pipelines:
///
/// - `tracker`, the real `CaptureTracker`, as `btlens devices` runs it;
/// - the scan, advertiser and own-advertising trackers directly, routed the way `CaptureTracker` routes
///   them, except that every successful LE (Enhanced) Connection Complete counts as "a connection came up".
///   `CaptureTracker` makes that call only when its connection tracker reports the connection, so this
///   keeps these tests about scanning and advertising independent of the connection tracker.
///
/// `RoutingTests` checks that both pipelines agree on everything not involving connections.
final class TrackingHarness: PacketSink {
    let tracker = CaptureTracker()
    var decoder = PacketDecoder(issues: IssueLog())
    var commands = CommandCorrelator()
    var scans = ScanTracker()
    var advertisers = AdvertiserTracker()
    var own = OwnAdvertisingTracker()
    /// Controller index of the records (hciN).
    var controller: UInt16 = 0
    private(set) var recordCount = 0
    private(set) var last: RecordRef?
    /// Whether scanning/advertising was on as each connection came up, in order.
    private(set) var scanningAtConnection: [Bool] = []

    /// Runs `body` as a script (starting at `HCIScript.defaultStart`) and returns the harness.
    static func run(seed: UInt64 = 1, _ body: (HCIScript) -> Void) -> TrackingHarness {
        run(seed: seed) { script, _ in body(script) }
    }

    /// As `run(seed:_:)`, also handing the harness to the script (to switch `controller` midway).
    static func run(seed: UInt64 = 1, _ body: (HCIScript, TrackingHarness) -> Void) -> TrackingHarness {
        let harness = TrackingHarness()
        let script = HCIScript(sink: harness, controller: SampleDevices.phoneController, seed: seed, title: "test")
        body(script, harness)
        try? script.finish()
        return harness
    }

    /// Runs a named scenario.
    static func run(scenario name: String) throws -> TrackingHarness {
        let harness = TrackingHarness()
        guard let scenario = ScenarioRegistry.named(name) else { throw HarnessError.unknownScenario(name) }
        try scenario.run(into: harness)
        return harness
    }

    enum HarnessError: Error { case unknownScenario(String) }

    // MARK: PacketSink

    func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {}
    func note(_ text: String, timestamp: Timestamp) throws {}
    func finish() throws {}

    func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws {
        recordCount += 1
        let record = CaptureRecord(number: recordCount, offset: Int64(recordCount) * 100, timestamp: timestamp,
                                   direction: direction, kind: kind, controller: controller, sourceType: 0,
                                   originalLength: payload.count, payload: payload)
        let frame = decoder.decode(record)
        tracker.observe(frame)
        let at = RecordRef(record)
        last = at
        route(frame, at: at)
    }

    // MARK: Routing (as CaptureTracker.observeEvent)

    func route(_ frame: DecodedFrame, at: RecordRef) {
        guard let hci = frame.hci else { return }
        switch hci {
        case .command(let command):
            commands.command(command, at: at)
        case .event(let event):
            switch event.code {
            case .leMeta:
                guard let sub = event.subevent else { return }
                let p = event.subeventParameters
                switch sub {
                case .advertisingReport, .extendedAdvertisingReport:
                    var reports = AdvertisingReportIterator(subevent: sub, parameters: p)
                    _ = scans.advertisingReports(&reports, at: at)
                    var whole = AdvertisingReportIterator(subevent: sub, parameters: p)
                    while let report = whole.next() { advertisers.advertisingReport(report, at: at) }
                case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2:
                    guard let complete = LEConnectionComplete(subevent: sub, p), complete.status == .success else { return }
                    scanningAtConnection.append(scans.isScanning(controller: at.controller))
                    scans.connectionCameUp(controller: at.controller, handle: complete.handle, at: at)
                    own.connectionCameUp(controller: at.controller, handle: complete.handle,
                                         isPeripheral: !complete.isCentral, at: at)
                case .scanTimeout:
                    scans.scanTimeout(at: at)
                case .advertisingSetTerminated:
                    own.advertisingSetTerminated(p, at: at)
                default:
                    break
                }
            case .commandComplete:
                guard let cc = CommandComplete(event.parameters) else { return }
                if cc.opcode == .reset {
                    scans.controllerReset(at: at)
                    own.controllerReset(at: at)
                }
                guard let pending = commands.answer(controller: at.controller, opcode: cc.opcode) else { return }
                scans.commandCompleted(pending, status: cc.status ?? .success, at: at)
                own.commandCompleted(pending, status: cc.status ?? .success, at: at)
            case .commandStatus:
                guard let cs = CommandStatus(event.parameters),
                      let pending = commands.answer(controller: at.controller, opcode: cs.opcode)
                else { return }
                scans.commandCompleted(pending, status: cs.status, at: at)
                own.commandCompleted(pending, status: cs.status, at: at)
            default:
                break
            }
        default:
            break
        }
    }

    // MARK: Results

    func scanSessions() -> ScanSessions { scans.finish(at: last) }
    func advertiserList() -> [Advertiser] { advertisers.finish() }
    func advertisingSessions() -> AdvertisingSessions { own.finish(at: last) }

    func advertiser(named name: String) -> Advertiser? {
        advertiserList().first { $0.names.contains(name) }
    }

    func advertiser(_ address: BDAddr) -> Advertiser? {
        advertiserList().first { $0.address == address }
    }
}

/// Shorthands for hand-built scripts.
enum Build {
    static func random(_ raw: UInt64) -> PeerAddress { PeerAddress(BDAddr(rawValue: raw), type: LEParameter.randomAddress) }

    static let interval: UInt16 = 0x0050  // 50 ms
    static let window: UInt16 = 0x0030  // 30 ms

    /// A legacy ADV_IND report.
    static func legacy(_ peer: PeerAddress, _ structures: [ADStructure], rssi: Int8 = -60,
                       type: UInt8 = LegacyReportType.advInd) -> LegacyAdvertisingReport {
        LegacyAdvertisingReport(eventType: type, peer: peer, data: AdvertisingData(structures), rssi: rssi)
    }

    /// LE Scan Timeout (subevent 0x11, no parameters).
    static let scanTimeout = HCIEvent(le: .scanTimeout) { _ in }

    /// LE Advertising Set Terminated with any status.
    static func setTerminated(status: UInt8, handle: UInt8, connection: UInt16 = 0, events: UInt8 = 0) -> HCIEvent {
        HCIEvent(le: .advertisingSetTerminated) { w in
            w.u8(status)
            w.u8(handle)
            w.u16(connection)
            w.u8(events)
        }
    }
}
