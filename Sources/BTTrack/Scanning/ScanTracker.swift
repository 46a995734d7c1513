import BTWire
import BTCapture
import BTDecode

/// Follows LE scanning, legacy (LE Set Scan Parameters 0x200B / Enable 0x200C) and extended (0x2041 /
/// 0x2042), per controller, and turns it into `ScanSession`s.
///
/// - Parameters are remembered per controller when the controller accepted them (Command Complete status 0);
///   HCI Reset brings back the defaults.
/// - An accepted Enable(1) starts a session with the current parameters; Enable(0), LE Scan Timeout
///   (extended duration), HCI Reset or the controller's removal end it. An extended duration with no Scan
///   Timeout in the capture ends the session implicitly once a later record shows the time has passed.
/// - Enable(1) while on with a different duplicate filter (or extended duration/period) ends the session and
///   starts another (`.restarted`); the same values again are a no-op that restarts the duration timer.
/// - Reports with no session on and none ended within `lateReportGrace` open an implicit session at the
///   first report (the capture started mid-scan): `implicitStart`, parameters unknown.
///
/// Per report the work is a counter update and one lookup in a bounded table (`DeviceTally`), with no allocation
/// once the table has grown. Memory: one table per controller, reused by every session, plus each finished
/// session's per-device counts.
///
/// When links are tracked on a second thread (`LinkFeed`), the table lookups are done there: the reports'
/// senders cross in batches, and each session's device counts are filled in by `finish(at:)`'s caller
/// (`applyDeviceTallies`). Everything else about sessions is decided here, on the reading thread.
public struct ScanTracker {
    /// Sessions in start order. An open session's counters are filled in by `finish(at:)`; read it with
    /// `openSession(controller:)` before that.
    public internal(set) var sessions = ScanSessions()
    /// How many of the connections during each session keep their record (`TrackerOptions`); all are counted.
    var connectionsWhileScanningListed = Int.max
    /// Android's scan clients (`ScanClient`) whose filters were removed, in removal order; `finish` adds those
    /// still installed. At most `ScanClient.limit`.
    public private(set) var clients: [ScanClient] = []
    /// Clients past the limit, not kept.
    public private(set) var droppedClients = 0
    /// HCI Resets (and controllers removed), at most `ScanClient.limit`: the stack brings its scans up after one.
    public private(set) var resets: [RecordRef] = []
    var controllers: [ControllerScanState] = []
    /// Index into `controllers` of the last controller looked up: captures nearly always have one.
    var lastControllerIndex = 0
    /// Where reports' senders are tallied when not here: the link thread's batch (see the type's comment).
    var remoteTallies: UnsafeMutablePointer<SightingBatch>?
    /// Whether to note scan boundaries in `boundaries` (judged links are let go by what the rules read:
    /// `LinkInterest`).
    var notesBoundaries = false
    /// Scan boundaries not yet handed to the link tracker (`ScanBoundaries`): every time at which an app's scan
    /// may start or end — a session's start and end (or the end its duration sets), a change of scan filters.
    var boundaries: [(controller: UInt16, time: Int64)] = []
    /// Whether a finished session has its device counts trimmed
    /// (`TrackerOptions.scanDevicesListed`, `ScanDeviceKeeping`).
    var trimsDevices = false
    /// Sessions ended whose counts the caller trims (tracking on one thread, where the links' peers are known;
    /// with a link feed the link thread trims them).
    var deviceTrims: [(session: Int, piece: ScanPiece)] = []

    @inline(__always)
    mutating func boundary(_ c: Int, _ t: Timestamp?) {
        guard notesBoundaries, let t else { return }
        boundaries.append((controllers[c].controller, t.nanoseconds))
    }

    /// Reports this soon after a session ended were already in flight: counted as the ended session's
    /// `lateReports` instead of opening an implicit session. Also the slack given to a Scan Timeout event
    /// after an extended duration runs out.
    public static let lateReportGrace: Duration = .seconds(1)

    struct ControllerScanState {
        let controller: UInt16
        var parameters = ScanParameters.defaults
        /// The PHY lists of the last few parameter settings, for sessions to share (`ScanParameters.sharePHYs`).
        var recentPHYs: [[ScanPHYParameters]] = []

        /// An accepted LE Set (Extended) Scan Parameters.
        mutating func setParameters(_ set: ScanParameters) {
            parameters = set
            parameters.sharePHYs(&recentPHYs)
        }

        /// The enable of the open session.
        var enable = ScanEnable.unknown
        /// Index in `sessions` of the open session.
        var current: Int?
        /// The last session that ended and when.
        var lastEnded: (session: Int, at: Timestamp)?
        /// The open session's last record (start or latest report): its end if the duration runs out unseen.
        var lastRecord: RecordRef?
        /// Reports per device of the open session (unless `remoteTallies` counts them).
        var tally = DeviceTally()
        /// The open session's counters, kept here (not in `sessions`) so a report updates one struct;
        /// copied into the session by `sync`.
        var reports = 0
        var scanResponses = 0
        var extendedReports = 0
        /// The open session's `scheduledEnd`.
        var deadline: Timestamp?
        /// Android's scan filters in the controller (`ScanFilterOffload`).
        var filterOffload = ScanFilterOffload()
        /// When a link last came up or went down.
        var lastLinkChange: Timestamp?

        init(controller: UInt16) { self.controller = controller }

        /// The extended duration ran out before `at`, with the grace given to the Scan Timeout event.
        @inline(__always)
        func expired(at: RecordRef) -> Bool {
            guard let deadline else { return false }
            return at.timestamp > deadline && at.timestamp - deadline > ScanTracker.lateReportGrace
        }

        /// One event's reports, counted by `ScanTracker.advertisingReports`.
        @inline(__always)
        mutating func add(reports n: Int, scanResponses: Int, extended: Int, at: RecordRef) {
            lastRecord = at
            reports &+= n
            self.scanResponses &+= scanResponses
            extendedReports &+= extended
        }
    }

    public init() {}

    // MARK: Lookup

    @inline(__always)
    mutating func stateIndex(_ controller: UInt16) -> Int {
        if lastControllerIndex < controllers.count, controllers[lastControllerIndex].controller == controller {
            return lastControllerIndex
        }
        return otherStateIndex(controller)
    }

    @inline(never)
    mutating func otherStateIndex(_ controller: UInt16) -> Int {
        if let i = controllers.firstIndex(where: { $0.controller == controller }) {
            lastControllerIndex = i
            return i
        }
        controllers.append(ControllerScanState(controller: controller))
        lastControllerIndex = controllers.count - 1
        return lastControllerIndex
    }

    /// Whether Android's scan clients can be told apart on `controller` (it saw an APCF feature selection).
    public func tracksClients(controller: UInt16) -> Bool {
        controllers.contains { $0.controller == controller && $0.filterOffload.tracksClients }
    }

    /// True when `controller` is scanning now.
    public func isScanning(controller: UInt16) -> Bool {
        controllers.contains { $0.controller == controller && $0.current != nil }
    }

    /// The session open on `controller`, if any.
    public func openSession(controller: UInt16) -> ScanSession? {
        guard let c = controllers.firstIndex(where: { $0.controller == controller }), let s = controllers[c].current
        else { return nil }
        var session = sessions[s]
        Self.sync(controllers[c], into: &session)
        return session
    }

    /// Copies the live counters of the open session into it.
    static func sync(_ state: ControllerScanState, into session: inout ScanSession) {
        session.reports = state.reports
        session.scanResponses = state.scanResponses
        session.reportsFromUncountedDevices = state.tally.uncountedReports
        // Only an active scan gets scan responses: that much is known when the parameters are not.
        if session.phys.isEmpty && state.scanResponses > 0 { session.isActive = true }
        if session.implicitStart && state.extendedReports > 0 { session.isExtended = true }
    }

    // MARK: Commands

    /// The commands `commandCompleted` acts on (when the controller accepted them).
    static func follows(_ opcode: HCIOpcode) -> Bool {
        opcode == .leSetScanParameters || opcode == .leSetExtendedScanParameters || opcode == .leSetScanEnable
            || opcode == .leSetExtendedScanEnable || opcode == ScanFilterOffload.opcode
    }

    public mutating func commandCompleted(_ command: CommandCorrelator.Pending, status: HCIStatus, at: RecordRef) {
        guard status == .success else { return }
        let opcode = command.opcode
        guard Self.follows(opcode) else { return }
        let c = stateIndex(at.controller)
        command.parameters.withUnsafeBytes { p in
            switch opcode {
            case .leSetScanParameters:
                if let parameters = LESetScanParameters(p) {
                    controllers[c].setParameters(ScanParameters(parameters))
                }
            case .leSetExtendedScanParameters:
                if let parameters = LESetExtendedScanParameters(p) {
                    controllers[c].setParameters(ScanParameters(parameters))
                }
            case ScanFilterOffload.opcode:
                boundary(c, at.timestamp)
                let mark = controllers[c].current.map {
                    ScanClient.SessionMark(session: $0, reports: controllers[c].reports, scanResponses: controllers[c].scanResponses)
                }
                var removed = controllers[c].filterOffload.command(p, controller: at.controller, at: at)
                for i in removed.indices { removed[i].removedMark = mark }
                if let i = controllers[c].filterOffload.installed.lastIndex(where: { $0.added.number == at.number }) {
                    controllers[c].filterOffload.installed[i].addedMark = mark
                    controllers[c].filterOffload.installed[i].lastLinkChange = controllers[c].lastLinkChange
                }
                keep(removed)
                if let s = controllers[c].current, controllers[c].filterOffload.isActive { sessions[s].offloadedFilters = true }
            case .leSetScanEnable:
                guard let e = LESetScanEnable(p) else { return }
                if e.enable {
                    enable(c, ScanEnable(isExtended: false, filterDuplicatesMode: p[1], duration: 0, period: 0), at: at)
                } else {
                    disable(c, at: at)
                }
            default:
                guard let e = LESetExtendedScanEnable(p) else { return }
                if e.enable {
                    enable(c, ScanEnable(isExtended: true, filterDuplicatesMode: e.filterDuplicates,
                                         duration: e.duration, period: e.period), at: at)
                } else {
                    disable(c, at: at)
                }
            }
        }
    }

    mutating func enable(_ c: Int, _ e: ScanEnable, at: RecordRef) {
        closeIfElapsed(c, at: at)
        if let s = controllers[c].current {
            if !sessions[s].implicitStart, controllers[c].enable == e {
                // Enabling again with the same values changes nothing but the duration timer.
                sessions[s].scheduledEnd = e.scheduledEnd(from: at.timestamp)
                controllers[c].deadline = sessions[s].scheduledEnd
                boundary(c, sessions[s].scheduledEnd)
                return
            }
            close(c, end: at, reason: .restarted)
        }
        var parameters = controllers[c].parameters
        // Extended scanning has no default parameters to fall back on.
        if e.isExtended && !parameters.known { parameters = .unknown }
        open(c, at: at, parameters: parameters, enable: e, implicit: false)
    }

    mutating func disable(_ c: Int, at: RecordRef) {
        closeIfElapsed(c, at: at)
        guard controllers[c].current != nil else { return }
        close(c, end: at, reason: .disabled)
    }

    // MARK: Events

    /// Counts every report of one LE (Extended) Advertising Report event and returns how many there were.
    /// The session is settled once per event (its reports share a record) and the controller's state is updated
    /// in place, since this runs for most records of a scanning capture.
    @inline(__always)
    public mutating func advertisingReports(_ reports: inout AdvertisingReportIterator, at: RecordRef) -> Int {
        guard let first = reports.nextPacked() else { return 0 }
        let c = stateIndex(at.controller)
        if _slowPath(controllers[c].current == nil || controllers[c].expired(at: at)),
           let late = reportsOutsideSession(c, at: at, rest: &reports) {
            return late
        }
        // The event's counts are summed here and added to the controller's state once: one access to
        // `controllers` an event, not one a report.
        var next: PackedSighting? = first
        var n = 0, scanResponses = 0, extended = 0
        if let remote = remoteTallies {
            remote.pointee.begin(controller: at.controller)
            while let sighting = next {
                // Added, not branched on: both vary report by report, and a mispredicted branch costs more.
                scanResponses &+= sighting.scanResponse
                extended &+= sighting.extended
                remote.pointee.add(sighting.key)
                n &+= 1
                next = reports.nextPacked()
            }
        } else {
            while let sighting = next {
                scanResponses &+= sighting.scanResponse
                extended &+= sighting.extended
                controllers[c].tally.count(sighting.key)
                n &+= 1
                next = reports.nextPacked()
            }
        }
        controllers[c].add(reports: n, scanResponses: scanResponses, extended: extended, at: at)
        return n
    }

    /// Reports when no session is open, or when the open one's extended duration ran out: late reports of the
    /// session that just ended (their count is returned), or the first of an implicit session (nil: the caller
    /// counts them). Out of line, as it runs once a session.
    @inline(never)
    mutating func reportsOutsideSession(_ c: Int, at: RecordRef, rest reports: inout AdvertisingReportIterator) -> Int? {
        if controllers[c].current != nil { closeElapsed(c) }
        guard reportWithoutSession(c, at: at) == nil, let late = controllers[c].lastEnded?.session else { return nil }
        // Late reports of the session that just ended; reportWithoutSession counted the first.
        var n = 1
        while reports.skip() { n += 1 }
        sessions[late].lateReports += n - 1
        return n
    }

    /// A report outside any session: late (counted on the session that just ended) or the first of an
    /// implicit session, whose index is returned.
    mutating func reportWithoutSession(_ c: Int, at: RecordRef) -> Int? {
        if let last = controllers[c].lastEnded, at.timestamp - last.at <= Self.lateReportGrace {
            sessions[last.session].lateReports += 1
            return nil
        }
        open(c, at: at, parameters: .unknown, enable: .unknown, implicit: true)
        return controllers[c].current
    }

    public mutating func scanTimeout(at: RecordRef) {
        let c = stateIndex(at.controller)
        guard controllers[c].current != nil else { return }
        close(c, end: at, reason: .timeout)
    }

    /// HCI Reset or controller removed: scanning stops and the parameters return to their defaults.
    public mutating func controllerReset(at: RecordRef) {
        let c = stateIndex(at.controller)
        if resets.count < ScanClient.limit { resets.append(at) }
        closeIfElapsed(c, at: at)
        if controllers[c].current != nil { close(c, end: at, reason: .reset) }
        boundary(c, at.timestamp)
        controllers[c].parameters = .defaults
        // A reset empties the controller's filter table: every client's filter is gone.
        keep(controllers[c].filterOffload.removeAll(at: at))
    }

    /// A link went down: a scan started again around it is no restart of the one before (`AppScans`).
    public mutating func linkChanged(at: RecordRef) {
        let c = stateIndex(at.controller)
        controllers[c].lastLinkChange = at.timestamp
    }

    public mutating func connectionCameUp(controller: UInt16, handle: UInt16, at: RecordRef) {
        let c = stateIndex(controller)
        controllers[c].lastLinkChange = at.timestamp
        closeIfElapsed(c, at: at)
        guard let s = controllers[c].current else { return }
        sessions[s].connectionsWhileScanningCount += 1
        if sessions[s].connectionsWhileScanning.count < connectionsWhileScanningListed {
            sessions[s].connectionsWhileScanning.append(at)
        }
    }

    mutating func keep(_ removed: [ScanClient]) {
        for client in removed {
            if clients.count < ScanClient.limit { clients.append(client) } else { droppedClients += 1 }
        }
    }

    /// Every scan client, removed or still installed, in the order they were added.
    public var allClients: [ScanClient] {
        (clients + controllers.flatMap { $0.filterOffload.installed }).sorted { $0.added.number < $1.added.number }
    }

    /// Closes what the capture's end shows has run out; sessions still on keep `end == nil`. Returns every
    /// session in start order.
    public mutating func finish(at: RecordRef?) -> ScanSessions {
        for c in controllers.indices {
            guard let s = controllers[c].current else { continue }
            if let at, let deadline = controllers[c].deadline, at.timestamp > deadline {
                closeElapsed(c)
            } else {
                fillDevices(c, into: s, piece: piece(c, ending: s))
            }
        }
        return sessions
    }

    // MARK: Sessions

    mutating func open(_ c: Int, at: RecordRef, parameters: ScanParameters, enable: ScanEnable, implicit: Bool) {
        let open = controllers.compactMap(\.current)
        var session = ScanSession(controller: controllers[c].controller, start: at, parameters: parameters,
                                  enable: enable, implicitStart: implicit)
        session.connectionsWhileScanning = RecordRefList(settingAsideIn: sessions.fileForLists)
        sessions.append(session, isOpen: open.contains)
        controllers[c].current = sessions.count - 1
        sessions[sessions.count - 1].offloadedFilters = controllers[c].filterOffload.isActive
        sessions[sessions.count - 1].lastLinkChange = controllers[c].lastLinkChange
        controllers[c].enable = enable
        controllers[c].lastRecord = at
        controllers[c].deadline = sessions[sessions.count - 1].scheduledEnd
        boundary(c, at.timestamp)
        boundary(c, sessions[sessions.count - 1].scheduledEnd)
        controllers[c].reports = 0
        controllers[c].scanResponses = 0
        controllers[c].extendedReports = 0
    }

    /// Ends the open session when its extended duration ran out before `at` (plus the grace for the event).
    mutating func closeIfElapsed(_ c: Int, at: RecordRef) {
        guard controllers[c].current != nil, controllers[c].expired(at: at) else { return }
        closeElapsed(c)
    }

    mutating func closeElapsed(_ c: Int) {
        guard let s = controllers[c].current else { return }
        close(c, end: controllers[c].lastRecord ?? sessions[s].start, reason: .durationElapsed)
    }

    mutating func close(_ c: Int, end: RecordRef, reason: ScanEndReason) {
        guard let s = controllers[c].current else { return }
        sessions[s].end = end
        sessions[s].endReason = reason
        boundary(c, end.timestamp)
        boundary(c, sessions[s].endTimestamp)
        fillDevices(c, into: s, piece: piece(c, ending: s))
        controllers[c].lastEnded = (s, sessions[s].endTimestamp ?? end.timestamp)
        controllers[c].current = nil
        controllers[c].lastRecord = nil
        controllers[c].deadline = nil
        controllers[c].tally.removeAll(expecting: controllers[c].tally.devices.count)  // the remote tally is emptied by the message `fillDevices` sent
    }

    /// Copies the live counters and per-device counts into the session; with `remoteTallies`, asks for the
    /// counts instead (the caller of `finish(at:)` applies them).
    /// `piece`: how the session stands to the app scan before it (`ScanDeviceKeeping`).
    mutating func fillDevices(_ c: Int, into s: Int, piece: ScanPiece = .whole) {
        Self.sync(controllers[c], into: &sessions[s])
        if let remoteTallies {
            remoteTallies.pointee.feed._withUnsafeGuaranteedRef {
                $0.endTally(controller: controllers[c].controller, session: s, piece: piece)
            }
        } else {
            sessions[s].apply(controllers[c].tally.summary(sorted: piece == .whole))
            if piece != .whole { deviceTrims.append((s, piece)) }
        }
    }

    /// How session `s`, ending on controller `c`, stands to the app scans: a piece of the one before (started
    /// within `AppScan.restartGap` of the last session's end, alike, no link change around the stop, not implicit:
    /// `AppScans.build`'s test, whose comparison with the scan's priced session is one with any of its pieces,
    /// as pieces are alike), the first piece of one, or `.whole` when trimming is off or a scan client was seen
    /// on the controller. A client seen later cannot cover a session that ended before it came.
    func piece(_ c: Int, ending s: Int) -> ScanPiece {
        guard trimsDevices, !mayHaveClients(c) else { return .whole }
        let session = sessions[s], start = session.start.timestamp
        guard let last = controllers[c].lastEnded, !session.implicitStart, start >= last.at,
              start - last.at <= AppScan.restartGap, !AppScans.linkChanged(session.lastLinkChange, around: last.at),
              session.scansAlike(sessions[last.session]) else { return .first }
        return .next
    }

    /// Scan clients were seen on controller `c` (or some were not kept).
    func mayHaveClients(_ c: Int) -> Bool {
        let controller = controllers[c].controller
        return droppedClients > 0 || !controllers[c].filterOffload.installed.isEmpty
            || clients.contains { $0.controller == controller }
    }

    /// Trims session `s`'s device counts as `keeping` says, once it ended (tracking on one thread).
    mutating func trimDevices(of s: Int, piece: ScanPiece, _ keeping: inout ScanDeviceKeeping) {
        sessions[s].scanDevices = keeping.ended(&sessions[s].reportsPerDevice, controller: sessions[s].controller,
                                                piece: piece)
    }

    /// The device counts the link thread tallied for each session `fillDevices` asked about, once it finished;
    /// from then on reports are tallied here.
    mutating func applyDeviceTallies(_ tallies: SetAsideArray<SessionDeviceCounts>) {
        for t in tallies where sessions.indices.contains(t.session) { sessions[t.session].apply(t.summary) }
        if let failure = tallies.failure { sessions.sourceFailure = failure }
        deviceTrims.removeAll()
        remoteTallies = nil
    }
}
