import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules

/// One capture drawn as Perfetto tracks (`btlens export --format perfetto`): a process per controller, with
/// tracks for scanning, each advertising set, connection attempts that did not come up, each connection (its
/// phases as nested slices, its ATT transactions on a sub-track with request→response flows where they were
/// slow), counters (the energy model's radio current and cumulative charge, reports per second while scanning,
/// the RSSI of the advertisers the app connected to) and the findings as instants where they happened.
public struct CaptureTrace {
    /// An ATT transaction slower than this gets an arrow from its request to its response.
    public static let slowTransaction: Int64 = 100_000_000
    /// Advertisers whose RSSI is drawn when the app connected to none (the most often heard).
    public static let rssiFallbackAdvertisers = 3

    public var file: String
    public var model: CaptureModel
    public var energy: EnergyReport
    /// In report order (read from their spill one at a time).
    public var findings: StoredFindings
    public var advertising: AdvertisingSampler?
    /// The links already drawn as they were judged, while the capture was read: their tracks, findings and
    /// charge are there, and `energy` need not price them.
    public var streamed: LinkTraceStream?

    public init(file: String, model: CaptureModel, energy: EnergyReport, findings: [Finding], advertising: AdvertisingSampler?,
                streamed: LinkTraceStream? = nil) {
        self.init(file: file, model: model, energy: energy, findings: StoredFindings(findings), advertising: advertising,
                  streamed: streamed)
    }

    public init(file: String, model: CaptureModel, energy: EnergyReport, findings: StoredFindings, advertising: AdvertisingSampler?,
                streamed: LinkTraceStream? = nil) {
        self.file = file
        self.model = model
        self.energy = energy
        self.findings = findings
        self.advertising = advertising
        self.streamed = streamed
    }

    /// The controllers the capture shows something of (0 alone when it shows nothing, so every file has a process).
    var controllers: [UInt16] {
        var set = Set<UInt16>()
        for c in model.connections { set.insert(c.controller) }
        // Drawn links, let go before the end.
        if let streamed { for c in streamed.processes.keys { set.insert(c) } }
        for s in model.scans { set.insert(s.controller) }
        for a in model.ownAdvertising { set.insert(a.controller) }
        for f in model.failedConnections { set.insert(f.at.controller) }
        for i in 0..<findings.count { set.insert(findings[i].controller) }
        return set.isEmpty ? [0] : set.sorted()
    }

    var captureEnd: Int64 { model.lastTimestamp?.nanoseconds ?? model.firstTimestamp?.nanoseconds ?? 0 }

    /// Writes the capture's processes; `index` numbers the file among those exported (process ids are unique).
    public func write(index: Int, to writer: PerfettoTraceWriter) throws {
        for controller in controllers {
            try ControllerTrace(capture: self, controller: controller, writer: writer).write(index: index)
        }
    }
}

/// The tracks of one controller of a capture.
struct ControllerTrace {
    let capture: CaptureTrace
    let controller: UInt16
    let writer: PerfettoTraceWriter
    typealias A = PerfettoTraceWriter.Annotation

    /// Order of the process's tracks.
    enum Rank: Int {
        case findings, scanning, advertising, attempts, connections, current, charge, peripheralCurrent
        case peripheralCharge, reports, rssi, apps
    }

    /// The process of controller `controller` of the `index`th file exported (process ids are unique).
    static func process(index: Int, file: String, controller: UInt16, air: Bool, writer: PerfettoTraceWriter) throws -> UInt64 {
        let kind = air ? "sniffer interface \(controller)" : "hci\(controller)"
        return try writer.process(pid: Int32(clamping: (index + 1) << 16 | Int(controller)), name: "\(file) \(kind)")
    }

    func write(index: Int) throws {
        let model = capture.model
        let streamed = capture.streamed
        let process = try streamed?.processes[controller]
            ?? Self.process(index: index, file: capture.file, controller: controller, air: model.isAirCapture, writer: writer)
        // Where scan, advertising and attempt findings go: the first kind (in this order) with a slice there.
        var placed: [(track: UInt64, coverage: SliceCoverage)] = []
        let end = capture.captureEnd

        // Scanning.
        let scans = OrderedSlices(count: model.scans.count) { i in
            let s = model.scans[i]
            guard s.controller == controller else { return nil }
            let start = s.start.timestamp.nanoseconds
            return (start, max(start, s.endTimestamp?.nanoseconds ?? end))
        }
        if !scans.isEmpty {
            let track = try draw(scans, name: "Scanning", rank: .scanning, process: process) { scanSlice(model.scans[$0]) }
            placed.append((track, SliceCoverage(scans)))
        }

        // The scans by app, when a bug report named them (not where findings go: those stay as without one).
        if let attribution = model.attribution {
            let mine = attribution.scans.filter { $0.controller == controller }
            if !mine.isEmpty {
                var lanes = try SliceLanes(name: "Scans by app (bug report)", parent: process, rank: Rank.apps.rawValue,
                                           description: "Each scan client or session with the app the bug report names, and the evidence", writer: writer)
                let end = capture.captureEnd
                let slices = mine.map { s in
                    TraceSlice(start: s.start.timestamp.nanoseconds, end: s.end?.nanoseconds ?? end, name: s.owner.name,
                               category: "app_scan", annotations: [.string("owner", s.owner.name), .string("evidence", s.owner.evidence),
                                                                   .int("reports", s.reports)])
                }
                try lanes.draw(SliceLanes.ordered(slices), writer: writer)
            }
        }

        // Own advertising, a track per set.
        var handles = Set<UInt8>()
        for s in model.ownAdvertising where s.controller == controller { handles.insert(s.setHandle) }
        for handle in handles.sorted() {
            let sessions = OrderedSlices(count: model.ownAdvertising.count) { i in
                let s = model.ownAdvertising[i]
                guard s.controller == controller, s.setHandle == handle else { return nil }
                let start = s.start.timestamp.nanoseconds
                return (start, max(start, s.end?.timestamp.nanoseconds ?? end))
            }
            let track = try draw(sessions, name: "Advertising set \(handle)", rank: .advertising, process: process) {
                advertisingSlice(model.ownAdvertising[$0])
            }
            placed.append((track, SliceCoverage(sessions)))
        }

        // Connection attempts that did not come up.
        let failed = model.failedConnections
        let attempts = OrderedSlices(count: failed.count) { i in
            let f = failed[i]
            guard f.at.controller == controller else { return nil }
            let start = (f.requested ?? f.at).timestamp.nanoseconds
            return (start, max(start, f.at.timestamp.nanoseconds))
        }
        if !attempts.isEmpty {
            let track = try draw(attempts, name: "Connection attempts", rank: .attempts, process: process,
                                 description: "Connection attempts that failed or that the host cancelled") { attemptSlice(failed[$0]) }
            placed.append((track, SliceCoverage(attempts)))
        }

        // Connections (but those drawn as they were judged).
        var connectionTracks: [Int: UInt64] = [:]
        let drawing = ConnectionTrack(writer: writer, captureEnd: capture.captureEnd)
        for c in model.connections where c.controller == controller {
            connectionTracks[c.id] = try streamed?.track(ofLink: c.id) ?? drawing.draw(c, process: process)
        }

        try counters(process: process)

        // Findings: on their connection, else on the scan, advertising or attempt they fall in, else their own track.
        var findingsTrack: UInt64?
        let findings = capture.findings
        for i in 0..<findings.count {
            let f = findings[i]
            guard f.controller == controller else { continue }
            if let streamed, streamed.drew(f) { continue }
            let at = f.start.nanoseconds
            var track = f.connection.flatMap { connectionTracks[$0.id] ?? capture.streamed?.track(ofLink: $0.id) }
            if track == nil, let j = placed.indices.first(where: { placed[$0].coverage.covers(at) }) { track = placed[j].track }
            if track == nil {
                if findingsTrack == nil { findingsTrack = try writer.track(name: "Findings", parent: process, rank: Rank.findings.rawValue) }
                track = findingsTrack
            }
            guard let track else { continue }
            try writer.finding(f, on: track)
        }
    }

    /// Draws `slices` on a track of their own (and lanes beside it where they overlap), made one at a time by
    /// `slice` from their places; returns the track.
    func draw(_ slices: OrderedSlices, name: String, rank: Rank, process: UInt64, description: String? = nil,
              slice: (Int) -> TraceSlice) throws -> UInt64 {
        var lanes = try SliceLanes(name: name, parent: process, rank: rank.rawValue, description: description, writer: writer)
        try slices.forEach { try lanes.add(slice($0), writer: writer) }
        try lanes.closeAll(writer: writer)
        return lanes.track
    }

    // MARK: Scans, advertising, attempts

    func scanSlice(_ s: ScanSession) -> TraceSlice {
        let start = s.start.timestamp.nanoseconds
        let end = s.endTimestamp?.nanoseconds ?? capture.captureEnd
        let parameters = s.parametersKnown
            ? "\(Format.ms(s.intervalMilliseconds))/\(Format.ms(s.windowMilliseconds)) ms (duty \(Int((s.dutyCycle * 100).rounded())) %)"
            : "parameters unknown"
        let name = "\(s.isActive ? "active" : "passive") scan \(parameters), duplicates \(s.filterDuplicates ? "filtered" : "NOT filtered"), "
            + Plural.of(s.reports, "report")
        var a: [A] = [.bool("active", s.isActive), .bool("parameters_known", s.parametersKnown),
                      .double("interval_ms", s.intervalMilliseconds), .double("window_ms", s.windowMilliseconds),
                      .double("duty_cycle", s.dutyCycle), .bool("filter_duplicates", s.filterDuplicates),
                      .int("reports", s.reports), .int("unique_devices", s.uniqueDevices),
                      .int("connections_while_scanning", s.connectionsWhileScanningCount), .int("start_record", s.start.number)]
        if let reason = s.endReason { a.append(.string("end_reason", reason.rawValue)) }
        if let end = s.end { a.append(.int("end_record", end.number)) }
        return TraceSlice(start: start, end: end, name: name, category: "scan", annotations: a)
    }

    func advertisingSlice(_ s: AdvertisingSession) -> TraceSlice {
        let start = s.start.timestamp.nanoseconds
        let end = s.end?.timestamp.nanoseconds ?? capture.captureEnd
        var name = "advertising set \(s.setHandle) \(s.typeName)"
        if let low = s.intervalMinimumMilliseconds, let high = s.intervalMaximumMilliseconds {
            name += low == high ? " every \(Format.ms(low)) ms" : " every \(Format.ms(low))–\(Format.ms(high)) ms"
        }
        var a: [A] = [.int("set", Int(s.setHandle)), .string("type", s.typeName), .bool("extended", s.isExtended),
                      .bool("connectable", s.isConnectable), .int("start_record", s.start.number),
                      .int("connections_while_advertising", s.connectionsWhileAdvertising.count)]
        if let low = s.intervalMinimumMilliseconds { a.append(.double("interval_min_ms", low)) }
        if let high = s.intervalMaximumMilliseconds { a.append(.double("interval_max_ms", high)) }
        if let name = s.localName { a.append(.string("local_name", name)) }
        if let reason = s.endReason { a.append(.string("end_reason", reason.name)) }
        return TraceSlice(start: start, end: end, name: name, category: "advertising", annotations: a)
    }

    func attemptSlice(_ f: FailedConnection) -> TraceSlice {
        var a: [A] = [.string("status", Hex.u8(f.status.rawValue)), .string("status_name", f.status.description),
                      .bool("cancelled", f.cancelledByHost), .bool("accept_list", f.toAcceptList), .int("record", f.at.number)]
        if let peer = f.peerAddress { a.append(.string("peer_address", peer.description)) }
        return TraceSlice(start: (f.requested ?? f.at).timestamp.nanoseconds, end: f.at.timestamp.nanoseconds,
                          name: FailedConnectionText.describe(f), category: "connection", annotations: a)
    }

    // MARK: Counters

    func counters(process: UInt64) throws {
        let r = capture.energy
        // The links drawn as they were judged added theirs then (taken, not copied: the stream lets go of it).
        var charge = capture.streamed?.takeCharge(of: controller) ?? RadioCharge(spillDirectory: capture.streamed?.spillDirectory)
        for s in r.scans where s.session.controller == controller { charge.add(phone: s.start, s.end, s.phone.chargeMC) }
        for a in r.advertising where a.session.controller == controller { charge.add(phone: a.start, a.end, a.phone.chargeMC) }
        for l in r.links where l.connection.controller == controller && capture.streamed?.track(ofLink: l.connection.id) == nil {
            charge.add(l)
        }
        try draw(&charge.phone, rate: "Phone radio current (model)", rateUnit: "mA", rateRank: .current,
                 total: "Phone radio charge (model, cumulative)", totalUnit: "mC", totalRank: .charge, process: process)
        try draw(&charge.peripheral, rate: "Peripheral radio current (model)", rateUnit: "mA", rateRank: .peripheralCurrent,
                 total: "Peripheral radio charge (model, cumulative)", totalUnit: "mC", totalRank: .peripheralCharge, process: process)
        try reportRate(process: process)
        try rssi(process: process)
    }

    func draw(_ counter: inout StepCounter, rate: String, rateUnit: String, rateRank: Rank, total: String?, totalUnit: String,
              totalRank: Rank, process: UInt64) throws {
        guard !counter.isEmpty else { return }
        let rateTrack = try writer.counterTrack(name: rate, unit: rateUnit, parent: process, rank: rateRank.rawValue)
        let totalTrack = try total.map { try writer.counterTrack(name: $0, unit: totalUnit, parent: process, rank: totalRank.rawValue) }
        try counter.steps { at, rate, cumulative in
            try writer.counter(track: rateTrack, at: at, value: rate)
            if let totalTrack { try writer.counter(track: totalTrack, at: at, value: cumulative) }
        }
    }

    /// Advertising reports the host received each second (0 in the seconds without any).
    func reportRate(process: UInt64) throws {
        guard let sampler = capture.advertising else { return }
        var track: UInt64?
        let second: Int64 = 1_000_000_000
        var next: Int64?
        try sampler.reportsPerSecond(of: controller) { s in
            if track == nil {
                track = try writer.counterTrack(name: "Advertising reports/s", unit: "reports/s", parent: process, rank: Rank.reports.rawValue)
            }
            if let next, next < s.second { try writer.counter(track: track!, at: next * second, value: 0) }
            try writer.counter(track: track!, at: s.second * second, value: Double(s.reports))
            next = s.second + 1
        }
        if let track, let next { try writer.counter(track: track, at: next * second, value: 0) }
    }

    /// RSSI of the advertisers the app connected to (or tried to), else of the most often heard.
    func rssi(process: UInt64) throws {
        guard let sampler = capture.advertising else { return }
        let model = capture.model
        var peers = Set(model.connections.filter { $0.controller == controller }.compactMap(\.peerAddress))
        for p in try capture.streamed?.sampledPeers(sampler) ?? [] where p.controller == controller { peers.insert(p.address) }
        peers.formUnion(model.failedConnections.filter { $0.at.controller == controller }.compactMap(\.peerAddress))
        let sampled = sampler.advertisers.filter { $0.key.controller == controller }
        var keys = sampled.map(\.key).filter { peers.contains($0.address) }
        if keys.isEmpty {
            keys = sampled.sorted { $0.samples != $1.samples ? $0.samples > $1.samples : $0.key.address.description < $1.key.address.description }
                .prefix(CaptureTrace.rssiFallbackAdvertisers).map(\.key)
        }
        keys.sort { $0.address.description < $1.address.description }
        var track: UInt64 = 0
        try sampler.samples(of: keys, begin: { key in
            track = try writer.counterTrack(name: "RSSI \(key.address)", unit: "dBm", parent: process, rank: Rank.rssi.rawValue)
        }) { s in
            try writer.counter(track: track, at: s.nanoseconds, value: Double(s.dBm))
        }
    }
}
