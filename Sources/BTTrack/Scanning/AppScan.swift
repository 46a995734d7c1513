import BTWire
import BTCapture

/// A scan the app asked for, as far as the capture can tell: what the scan rules judge.
///
/// On Android with offloaded filters (`ScanClient`), the controller's scan serves every client at once and is
/// re-programmed whenever one comes or goes; the app's scan is its client's time — the all-pass filter of an
/// unfiltered scan and the filtered clients it started with — while the controller scanned. A filtered client of
/// its own cannot be told from the OS's: it is not blamed on the app. Restarts that only re-program the controller for the same clients are then one scan, and the
/// scanning of other clients (the OS's filtered background scans) is not the app's. Elsewhere the capture
/// shows no clients: each controller scan session is taken as the app's.
public struct AppScan: Sendable {
    /// How the scan was attributed to the app.
    public enum Attribution: String, Sendable {
        /// Android's all-pass filter: a client scanning without filters.
        case allPassFilter = "all_pass_filter"
        /// A filtered client added right after the app's unfiltered one: the app started both together (say an
        /// unfiltered scan and one for a heart-rate strap).
        case startedWithAppScan = "started_with_app_scan"
        /// No scan clients in the capture: the controller's scan session.
        case controllerSession = "controller_session"
        /// A filtered client the bug report names as the app's (`AppFocus`).
        case bugReport = "bug_report"
    }

    public var controller: UInt16
    public var attribution: Attribution
    /// The app's filter (nil for `controllerSession`): held in a box, as most scans have none and a client takes
    /// about 170 bytes.
    public var client: ScanClient? {
        get { clientBox?.client }
        set { clientBox = newValue.map(ClientBox.init) }
    }
    private var clientBox: ClientBox?
    /// When the app's scan began: the later of its filter's add and the controller's scan start.
    public var start: RecordRef
    /// When it ended: the earlier of its filter's removal and the controller's scan end; nil while still
    /// scanning at the end of the capture.
    public var end: RecordRef?
    /// `end`'s time, or start + duration for an extended scan whose duration ran out.
    public var endTimestamp: Timestamp?
    /// Indexes into `CaptureModel.scans` of the controller sessions it covered.
    public var sessions: SessionIndexes
    /// Those programmed for it: started once its filter was in (all of them for `controllerSession`).
    public var programmed: SessionIndexes
    /// The parameters the controller was given for it (the sessions programmed after the app's filter came).
    public var isActive: Bool
    public var dutyCycle: Double
    public var parametersKnown: Bool
    public var filterDuplicates: Bool
    /// Reports delivered by the sessions that started while it ran.
    public var reports: Int
    /// Index into `CaptureModel.scans` of the session whose parameters price it (the highest duty cycle).
    public var pricedSession: Int
    /// What the host received while it ran, from its start to its end (a client's lifetime, not the whole of
    /// the sessions it overlapped): reports, scan responses, and the distinct devices that reported — exact when
    /// every session it covered lies within it, otherwise an upper bound (`devicesIsUpperBound`).
    public var received = Received()
    /// When each of its pieces started: one scan restarted by the stack (Android's duty schedule, a parameter
    /// change) or re-added by the same client within `restartGap` is one scan of several pieces.
    public var pieceStarts: PieceStarts = []

    init(controller: UInt16, attribution: Attribution, client: ScanClient?, start: RecordRef, end: RecordRef?,
         endTimestamp: Timestamp?, sessions: SessionIndexes, programmed: SessionIndexes, isActive: Bool, dutyCycle: Double,
         parametersKnown: Bool, filterDuplicates: Bool, reports: Int, pricedSession: Int) {
        self.controller = controller
        self.attribution = attribution
        clientBox = client.map(ClientBox.init)
        self.start = start
        self.end = end
        self.endTimestamp = endTimestamp
        self.sessions = sessions
        self.programmed = programmed
        self.isActive = isActive
        self.dutyCycle = dutyCycle
        self.parametersKnown = parametersKnown
        self.filterDuplicates = filterDuplicates
        self.reports = reports
        self.pricedSession = pricedSession
    }

    /// A scan client, shared by the copies of a scan.
    private final class ClientBox: Sendable {
        let client: ScanClient
        init(_ client: ScanClient) { self.client = client }
    }

    /// What the host received during an app's scan.
    public struct Received: Sendable {
        public var reports = 0
        public var scanResponses = 0
        public var devices = 0
        public var devicesIsUpperBound = false
        /// Reports beyond the first of each device (and its first scan response): what duplicate filtering would
        /// have kept from the host. A lower bound when `devicesIsUpperBound`.
        public var redundant: Int { max(0, reports - devices - min(scanResponses, devices)) }
    }

    /// How long it ran, up to `captureEnd` when still on.
    public func duration(captureEnd: Timestamp) -> Int64 {
        max(0, (endTimestamp ?? captureEnd).nanoseconds.minusSaturating(start.timestamp.nanoseconds))
    }

    /// A filtered client added this soon after the app's unfiltered one was started with it (one app action
    /// configures each of its filters in turn, milliseconds apart).
    public static let companionWindow: Duration = .milliseconds(500)
    /// A scan that stops and starts again within this, with no connection coming up in between, goes on: the
    /// stack restarts an app's scan every few seconds (its scan-mode schedule; old Android about every second)
    /// and for a parameter change, in milliseconds.
    public static let restartGap: Duration = .seconds(1)
}

/// Scanning of other clients on a controller that tracks clients: shown once as context, never blamed on the app.
public struct BackgroundScanning: Sendable {
    public var controller: UInt16
    /// Scanning time outside the app's scans.
    public var nanoseconds: Int64
    /// The highest duty cycle of the sessions that ran for others.
    public var dutyCycle: Double
    /// Distinct filter indexes of the other clients.
    public var clients: Int

    /// Less than this (the moments between re-programming the controller) is not worth a word.
    static let minimumShown: Int64 = 1_000_000_000
}

/// Builds the app's scans and the others' scanning from the controller sessions and the scan clients.
public enum AppScans {
    /// `owned`: the indexes of `clients` the bug report names as the app's (`AppFocus`); nil: the capture's own
    /// evidence decides (the all-pass filter and the filtered clients started with it).
    /// `empty`: the list the scans are added to, which sets them aside as they are built or keeps them in memory.
    public static func build(sessions: ScanSessions, clients: [ScanClient], clientControllers: Set<UInt16>, captureEnd: Timestamp?,
                             owned: Set<Int>? = nil, into empty: AppScanList = AppScanList())
        -> (scans: AppScanList, background: [BackgroundScanning], unattributed: Int64) {
        var unattributed: Int64 = 0
        var scans = empty
        var background: [BackgroundScanning] = []
        let end = captureEnd ?? Timestamp(nanoseconds: Int64.max)
        // Each controller's latest scan in `scans`: the one a session may be the next piece of.
        var lastScan: [UInt16: Int] = [:]
        for (i, s) in sessions.enumerated() where !clientControllers.contains(s.controller) {
            var scan = AppScan(controller: s.controller, attribution: .controllerSession, client: nil, start: s.start,
                               end: s.end, endTimestamp: s.endTimestamp, sessions: [i], programmed: [i], isActive: s.isActive,
                               dutyCycle: s.dutyCycle, parametersKnown: s.parametersKnown && !s.phys.isEmpty,
                               filterDuplicates: s.filterDuplicates, reports: s.reports, pricedSession: i)
            scan.received = AppScan.Received(reports: s.reports, scanResponses: s.scanResponses)
            scan.pieceStarts = [s.start]
            // The same parameters started again at once, with no connection in between: the same scan restarted.
            let j = lastScan[s.controller]
            if let j, scans[j].attribution == .controllerSession,
               let previousEnd = scans[j].endTimestamp, !Self.linkChanged(s.lastLinkChange, around: previousEnd), !s.implicitStart,
               s.start.timestamp >= previousEnd, s.start.timestamp - previousEnd <= AppScan.restartGap,
               s.scansAlike(sessions[scans[j].pricedSession]) {
                scans[j].absorb(scan, sessions: sessions)
            } else {
                // The controller's scan before takes no more pieces: its devices are counted now, while it is still
                // in memory, rather than read back, counted and written again once every scan is built.
                if let j { scans[j].countDevices(sessions) }
                lastScan[s.controller] = scans.count
                scans.append(scan)
            }
        }
        // Each controller's last scan, counted as the others were.
        for j in lastScan.values.sorted() { scans[j].countDevices(sessions) }
        for controller in clientControllers.sorted() {
            let own = sessions.indices.filter { sessions[$0].controller == controller }
            var appSpans: [(Int64, Int64)] = []
            for (index, client) in clients.enumerated() where client.controller == controller {
                let attribution: AppScan.Attribution
                if let owned {
                    guard owned.contains(index) else { continue }
                    attribution = client.isAllPass ? .allPassFilter : .bugReport
                } else if client.isDiscoveryFilter {
                    continue
                } else if client.isAllPass {
                    attribution = .allPassFilter
                } else if clients.contains(where: { other in
                    other.controller == controller && other.isAllPass && !other.isDiscoveryFilter
                        && client.added.timestamp >= other.added.timestamp
                        && client.added.timestamp - other.added.timestamp <= AppScan.companionWindow
                        && (other.removed.map { client.added.timestamp < $0.timestamp } ?? true)
                }) {
                    attribution = .startedWithAppScan
                } else {
                    continue
                }
                let from = client.added.timestamp, until = client.removed?.timestamp ?? end
                let covered = own.filter { i in
                    sessions[i].start.timestamp < until && (sessions[i].endTimestamp ?? end) > from
                }
                guard let first = covered.first, let last = covered.last else { continue }
                let startRef = sessions[first].start.timestamp > from ? sessions[first].start : client.added
                var endRef: RecordRef?, endTime: Timestamp?
                let lastEnd = sessions[last].endTimestamp
                if let removed = client.removed, lastEnd == nil || removed.timestamp <= lastEnd! {
                    endRef = removed
                    endTime = removed.timestamp
                } else if let lastEnd {
                    endRef = sessions[last].end
                    endTime = lastEnd
                }
                // The parameters programmed for the app: the sessions (re)started once its filter was in.
                let programmed = covered.filter { sessions[$0].start.timestamp >= from }
                let judged = programmed.isEmpty ? covered : programmed
                let reports = programmed.reduce(0) { $0 + sessions[$1].reports }
                let priced = judged.max { sessions[$0].dutyCycle < sessions[$1].dutyCycle } ?? first
                var scan = AppScan(
                    controller: controller, attribution: attribution, client: client, start: startRef, end: endRef,
                    endTimestamp: endTime, sessions: SessionIndexes(covered), programmed: SessionIndexes(programmed), isActive: judged.contains { sessions[$0].isActive },
                    dutyCycle: judged.map { sessions[$0].dutyCycle }.max() ?? 0,
                    parametersKnown: judged.allSatisfy { sessions[$0].parametersKnown && !sessions[$0].phys.isEmpty },
                    filterDuplicates: covered.allSatisfy { sessions[$0].filterDuplicates }, reports: reports,
                    pricedSession: priced)
                scan.received = Self.received(client: client, covered: covered, sessions: sessions)
                scan.pieceStarts = [startRef]
                scans.append(scan)
                appSpans.append((startRef.timestamp.nanoseconds, (endTime ?? end).nanoseconds))
            }
            // One client with several filters (each its own index) is one scan: spans that overlap are merged.
            Self.mergeOverlapping(&scans, controller: controller, sessions: sessions)
            // Before the controller's first scan client showed, whose scan it was cannot be told; after it, what
            // the controller scanned outside the app's scans served the other clients.
            let firstClient = clients.first(where: { $0.controller == controller })?.added.timestamp.nanoseconds ?? Int64.max
            var others: Int64 = 0, longest: Int64 = 0, duty = 0.0
            for i in own {
                let a = sessions[i].start.timestamp.nanoseconds, b = (sessions[i].endTimestamp ?? end).nanoseconds
                func outside(_ from: Int64, _ to: Int64) -> Int64 {
                    guard to > from else { return 0 }
                    return max(0, to.minusSaturating(from).minusSaturating(appSpans.reduce(Int64(0)) { $0.plusSaturating(max(0, min(to, $1.1).minusSaturating(max(from, $1.0)))) }))
                }
                unattributed = unattributed.plusSaturating(outside(a, min(b, firstClient)))
                let served = outside(max(a, firstClient), b)
                others = others.plusSaturating(served)
                // The duty cycle the others got most of the time.
                if served > longest { longest = served; duty = sessions[i].dutyCycle }
            }
            let otherClients = Set(clients.filter { $0.controller == controller && !$0.isAllPass }.map(\.filterIndex)).count
            if others >= BackgroundScanning.minimumShown {
                background.append(BackgroundScanning(controller: controller, nanoseconds: others, dutyCycle: duty,
                                                     clients: otherClients))
            }
        }
        // Nearly always in order already (one controller, no clients): sorted otherwise, in memory.
        let inOrder: (AppScan, AppScan) -> Bool = { ($0.start.timestamp, $0.controller) < ($1.start.timestamp, $1.controller) }
        if zip(scans, scans.dropFirst()).contains(where: { inOrder($1, $0) }) {
            var sorted = scans.emptyCopy()
            for scan in scans.sorted(by: inOrder) { sorted.append(scan) }
            scans = sorted
        }
        // The scans the clients' filters made; the controllers' own sessions' were counted above.
        if !clientControllers.isEmpty {
            for i in scans.indices where scans[i].attribution != .controllerSession { scans[i].countDevices(sessions) }
        }
        return (scans, background, unattributed)
    }

    /// Merges the controller's client-attributed scans whose spans overlap (one client with several filters), or
    /// follow within `restartGap` with no connection in between (the client stopped and started again at once),
    /// keeping the first's client.
    static func mergeOverlapping(_ scans: inout AppScanList, controller: UInt16, sessions: ScanSessions) {
        let mine = scans.indices.filter { scans[$0].controller == controller && scans[$0].attribution != .controllerSession }
            .sorted { scans[$0].start.timestamp < scans[$1].start.timestamp }
        guard mine.count > 1 else { return }
        var merged: [AppScan] = []
        for i in mine {
            let s = scans[i]
            if let last = merged.last, let lastEnd = last.endTimestamp ?? Optional(Timestamp(nanoseconds: .max)),
               s.start.timestamp <= lastEnd
                || (s.start.timestamp - lastEnd <= AppScan.restartGap
                    && !Self.linkChanged(s.client?.lastLinkChange, around: lastEnd)
                    && !linkCameUp(controller: controller, from: lastEnd, to: s.start.timestamp, sessions: sessions)) {
                merged[merged.count - 1].absorb(s, sessions: sessions)
            } else {
                merged.append(s)
            }
        }
        let mineSet = Set(mine)
        var rebuilt = scans.emptyCopy()
        for i in scans.indices where !mineSet.contains(i) { rebuilt.append(scans[i]) }
        for scan in merged { rebuilt.append(scan) }
        scans = rebuilt
    }

    /// Whether a connection came up on `controller` between `from` and `to` while a session scanned.
    static func linkCameUp(controller: UInt16, from: Timestamp, to: Timestamp, sessions: ScanSessions) -> Bool {
        sessions.contains { s in
            s.controller == controller && s.connectionsWhileScanning.contains { $0.timestamp >= from && $0.timestamp <= to }
        }
    }

    /// Whether a link came up or went down within `restartGap` before a scan stopped, or after: the scan that
    /// follows is the app's reaction to the link, not a restart.
    static func linkChanged(_ change: Timestamp?, around end: Timestamp) -> Bool {
        guard let change else { return false }
        return change >= end || end - change <= AppScan.restartGap
    }

    /// What a client received in its lifetime: the reports of the sessions it covered, less those before its filter
    /// came and after it went (the controller's counters at those moments); its devices are those of the sessions
    /// it covered, an upper bound when a session ran beyond it.
    static func received(client: ScanClient, covered: [Int], sessions: ScanSessions) -> AppScan.Received {
        var received = AppScan.Received()
        for i in covered {
            let s = sessions[i]
            var from = (reports: 0, responses: 0), to = (reports: s.reports, responses: s.scanResponses)
            var partial = false
            if let mark = client.addedMark, mark.session == i {
                from = (mark.reports, mark.scanResponses)
                partial = true
            } else if s.start.timestamp < client.added.timestamp {
                partial = true  // the session was on before the client came, with no mark: counted whole
            }
            if let mark = client.removedMark, mark.session == i {
                to = (mark.reports, mark.scanResponses)
                partial = true
            } else if let removed = client.removed, (s.endTimestamp.map { $0 > removed.timestamp } ?? true) {
                partial = true
            }
            received.reports += max(0, to.reports - from.reports)
            received.scanResponses += max(0, to.responses - from.responses)
            if partial { received.devicesIsUpperBound = true }
        }
        return received
    }

    /// A reporting device: its address and address type.
    struct DeviceKey: Hashable {
        var address: UInt64
        var type: UInt8
        init(_ d: DeviceReportCount) {
            address = d.address.rawValue
            type = d.addressType.rawValue
        }
    }
}

extension AppScan {
    /// Takes `later` in as its next piece (a restart of the same scan, or the same client's other filter).
    mutating func absorb(_ later: AppScan, sessions all: ScanSessions) {
        // Pieces one after the other add up; filters of one client over the same time count its reports once.
        let disjoint = endTimestamp.map { later.start.timestamp >= $0 } ?? false
        if endTimestamp != nil, later.endTimestamp == nil || later.endTimestamp! > endTimestamp! {
            end = later.end
            endTimestamp = later.endTimestamp
        }
        sessions.formUnion(later.sessions)
        programmed.formUnion(later.programmed)
        reports = programmed.reduce(0) { $0 + all[$1].reports }
        if later.dutyCycle > dutyCycle { dutyCycle = later.dutyCycle; pricedSession = later.pricedSession }
        isActive = isActive || later.isActive
        filterDuplicates = filterDuplicates && later.filterDuplicates
        parametersKnown = parametersKnown && later.parametersKnown
        if disjoint {
            received.reports += later.received.reports
            received.scanResponses += later.received.scanResponses
        } else {
            received.reports = max(received.reports, later.received.reports)
            received.scanResponses = max(received.scanResponses, later.received.scanResponses)
        }
        received.devicesIsUpperBound = received.devicesIsUpperBound || later.received.devicesIsUpperBound
        // Another filter of the same client is no new start; a restart is.
        if disjoint { pieceStarts.append(contentsOf: later.pieceStarts) }
    }

    /// Counts the distinct devices its sessions heard (once every piece is in).
    mutating func countDevices(_ all: ScanSessions) {
        // Pieces whose lists were trimmed counted the scan's devices as they ended (`ScanDeviceKeeping`).
        if attribution == .controllerSession, let last = sessions.last, let counted = all[last].scanDevices {
            for i in sessions where all[i].uniqueDevicesIsEstimate || all[i].reportsFromUncountedDevices > 0 {
                received.devicesIsUpperBound = true
            }
            received.devices = min(counted, received.reports)
            return
        }
        var devices = Set<AppScans.DeviceKey>()
        for i in sessions {
            for d in all[i].reportsPerDevice { devices.insert(AppScans.DeviceKey(d)) }
            if all[i].uniqueDevicesIsEstimate || all[i].reportsFromUncountedDevices > 0 { received.devicesIsUpperBound = true }
        }
        received.devices = min(devices.count, received.reports)
    }
}
