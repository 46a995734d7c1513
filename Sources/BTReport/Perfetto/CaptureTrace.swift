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
    public var findings: [Finding]
    public var advertising: AdvertisingSampler?

    public init(file: String, model: CaptureModel, energy: EnergyReport, findings: [Finding], advertising: AdvertisingSampler?) {
        self.file = file
        self.model = model
        self.energy = energy
        self.findings = findings
        self.advertising = advertising
    }

    /// The controllers the capture shows something of (0 alone when it shows nothing, so every file has a process).
    var controllers: [UInt16] {
        var set = Set<UInt16>()
        for c in model.connections { set.insert(c.controller) }
        for s in model.scans { set.insert(s.controller) }
        for a in model.ownAdvertising { set.insert(a.controller) }
        for f in model.failedConnections { set.insert(f.at.controller) }
        for f in findings { set.insert(f.controller) }
        return set.isEmpty ? [0] : set.sorted()
    }

    var captureEnd: Int64 { model.lastTimestamp?.nanoseconds ?? model.firstTimestamp?.nanoseconds ?? 0 }

    /// Writes the capture's processes; `index` numbers the file among those exported (process ids are unique).
    public func write(index: Int, to writer: PerfettoTraceWriter) throws {
        for controller in controllers {
            try ControllerTrace(capture: self, controller: controller, writer: writer)
                .write(pid: Int32(clamping: (index + 1) << 16 | Int(controller)))
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
        case peripheralCharge, reports, rssi
    }

    func write(pid: Int32) throws {
        let model = capture.model
        let kind = model.isAirCapture ? "sniffer interface \(controller)" : "hci\(controller)"
        let process = try writer.process(pid: pid, name: "\(capture.file) \(kind)")
        var placed: [(track: UInt64, start: Int64, end: Int64)] = []  // where scan and advertising findings go

        // Scanning.
        let scans = model.scans.filter { $0.controller == controller }
        if !scans.isEmpty {
            var lanes = try SliceLanes(name: "Scanning", parent: process, rank: Rank.scanning.rawValue, writer: writer)
            let slices = scans.map(scanSlice)
            try lanes.draw(SliceLanes.ordered(slices), writer: writer)
            placed += slices.map { (lanes.track, $0.start, $0.end) }
        }

        // Own advertising, a track per set.
        let sets = Dictionary(grouping: model.ownAdvertising.filter { $0.controller == controller }, by: \.setHandle)
        for handle in sets.keys.sorted() {
            var lanes = try SliceLanes(name: "Advertising set \(handle)", parent: process, rank: Rank.advertising.rawValue,
                                       writer: writer)
            let slices = (sets[handle] ?? []).map(advertisingSlice)
            try lanes.draw(SliceLanes.ordered(slices), writer: writer)
            placed += slices.map { (lanes.track, $0.start, $0.end) }
        }

        // Connection attempts that did not come up.
        let attempts = model.failedConnections.filter { $0.at.controller == controller }
        if !attempts.isEmpty {
            var lanes = try SliceLanes(name: "Connection attempts", parent: process, rank: Rank.attempts.rawValue,
                                       description: "Connection attempts that failed or that the host cancelled", writer: writer)
            let slices = attempts.map(attemptSlice)
            try lanes.draw(SliceLanes.ordered(slices), writer: writer)
            placed += slices.map { (lanes.track, $0.start, $0.end) }
        }

        // Connections.
        var connectionTracks: [Int: UInt64] = [:]
        for c in model.connections where c.controller == controller {
            connectionTracks[c.id] = try connection(c, process: process)
        }

        try counters(process: process)

        // Findings: on their connection, else on the scan, advertising or attempt they fall in, else their own track.
        var findingsTrack: UInt64?
        for f in capture.findings where f.controller == controller {
            let at = f.start.nanoseconds
            var track = f.connection.flatMap { connectionTracks[$0.id] }
            if track == nil { track = placed.first { $0.start <= at && at <= $0.end }?.track }
            if track == nil {
                if findingsTrack == nil { findingsTrack = try writer.track(name: "Findings", parent: process, rank: Rank.findings.rawValue) }
                track = findingsTrack
            }
            guard let track else { continue }
            try writer.instant(track: track, at: at, name: "\(f.id) \(f.severity.rawValue): \(f.message)", category: "finding",
                               annotations: findingAnnotations(f))
        }
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
                      .int("connections_while_scanning", s.connectionsWhileScanning.count), .int("start_record", s.start.number)]
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

    // MARK: Connections

    /// The connection's track: the link as one slice, its phases nested in it; its ATT transactions on a sub-track.
    func connection(_ c: Connection, process: UInt64) throws -> UInt64 {
        let start = (c.connectRequested ?? c.start).timestamp.nanoseconds
        let end = max(start, c.end?.timestamp.nanoseconds ?? capture.captureEnd)
        func clamped(_ s: TraceSlice) -> TraceSlice {
            var s = s
            s.start = min(max(s.start, start), end)
            s.end = min(max(s.end, s.start), end)
            return s
        }
        var name = "Connection #\(c.id) \(c.linkName)"
        if c.role != .unknown { name += " \(c.role.rawValue)" }
        if let peer = c.peerAddress { name += " \(peer)" }
        var lanes = try SliceLanes(name: name, parent: process, rank: Rank.connections.rawValue, writer: writer)

        var a: [A] = [.int("id", c.id), .string("handle", Hex.u16(c.handle)), .string("transport", c.transport.rawValue),
                      .string("role", c.role.rawValue), .int("start_record", c.start.number), .int("mtu", c.mtu),
                      .bool("implicit_start", c.implicitStart), .bool("open", c.isOpen), .bool("encrypted", c.encrypted),
                      .int("att_transactions", c.transactions.completed + c.transactions.errors)]
        if let peer = c.peerAddress { a.append(.string("peer_address", peer.description)) }
        if let reason = c.disconnectReason { a.append(.string("disconnect_reason", "\(reason) (\(Hex.u8(reason.rawValue)))")) }
        if let p = c.parameters { a.append(.string("parameters", p.description)) }
        var slices = [TraceSlice(start: start, end: end, name: name, category: "connection", annotations: a)]
        if let requested = c.connectRequested {
            slices.append(TraceSlice(start: requested.timestamp.nanoseconds, end: c.start.timestamp.nanoseconds,
                                     name: "connecting", category: "connection", annotations: [.int("record", requested.number)]))
        }
        var pairingStart: RecordRef?
        var pairingLast: RecordRef?
        for event in c.events {
            let text = TimelineEventDescription.describe(event, in: c).text
            let at = event.at.timestamp.nanoseconds
            let record: A = .int("record", event.at.number)
            switch event.kind {
            case .discovery(let d):
                let p = c.discoveries[d]
                slices.append(TraceSlice(start: p.first.timestamp.nanoseconds, end: p.last.timestamp.nanoseconds, name: text,
                                         category: "discovery", annotations: [record, .int("requests", p.requests), .int("found", p.found)]))
            case .activity(let r):
                let run = c.runs[r]
                slices.append(TraceSlice(start: run.first.timestamp.nanoseconds, end: run.last.timestamp.nanoseconds, name: text,
                                         category: "activity", annotations: [record, .int("count", run.count), .int("bytes", run.bytes)]))
            case .idle(let until):
                slices.append(TraceSlice(start: at, end: until.timestamp.nanoseconds, name: text, category: "idle", annotations: [record]))
            case .pairing:
                if pairingStart == nil { pairingStart = event.at }
                pairingLast = event.at
                slices.append(TraceSlice(start: at, end: at, name: text, category: "pairing", annotations: [record], isInstant: true))
            case .encryptionChanged:
                if pairingStart != nil { pairingLast = event.at }
                slices.append(TraceSlice(start: at, end: at, name: text, category: "pairing", annotations: [record], isInstant: true))
            case .disconnected, .closedByReset, .linkLost:
                slices.append(TraceSlice(start: at, end: at, name: text, category: "connection", annotations: [record], isInstant: true))
            default:
                slices.append(TraceSlice(start: at, end: at, name: text, category: "connection", annotations: [record], isInstant: true))
            }
        }
        if let first = pairingStart, let last = pairingLast, last.number > first.number {
            slices.append(TraceSlice(start: first.timestamp.nanoseconds, end: last.timestamp.nanoseconds, name: "pairing/encryption",
                                     category: "pairing", annotations: [.int("record", first.number)]))
        }
        try lanes.draw(SliceLanes.ordered(slices.map(clamped)), writer: writer)
        try transactions(c, parent: lanes.track, clamp: clamped)
        return lanes.track
    }

    /// The link's answered ATT requests (and those that timed out) on a sub-track of the connection's.
    func transactions(_ c: Connection, parent: UInt64, clamp: (TraceSlice) -> TraceSlice) throws {
        var slices: [TraceSlice] = []
        for t in c.attTransactions {
            let latency = t.latency
            var name = "\(t.request)"
            if let h = t.handle { name += " " + TimelineEventDescription.handleName(h, c) }
            var a: [A] = [.string("request", "\(t.request)"), .int("request_record", t.requestAt.number),
                          .int("response_record", t.responseAt.number), .bool("by_host", t.byHost),
                          .double("latency_ms", latency.seconds * 1000)]
            if let h = t.handle { a.append(.string("handle", Hex.u16(h))) }
            if let e = t.error {
                name += " → \(e)"
                a.append(.string("error", "\(e)"))
            }
            var s = TraceSlice(start: t.requestAt.timestamp.nanoseconds, end: t.responseAt.timestamp.nanoseconds, name: name,
                               category: "att", annotations: a)
            if s.end - s.start > CaptureTrace.slowTransaction {
                s.flow = (writer.newFlow(), "request (record \(t.requestAt.number))",
                          "response after \(TimeFormat.human(latency)) (record \(t.responseAt.number))")
            }
            slices.append(s)
        }
        for event in c.events {
            guard case .attTimeout(let request, _, let waited, _) = event.kind else { continue }
            let end = event.at.timestamp.nanoseconds
            let start = event.at.timestamp.adding(nanoseconds: -Int64(saturating: waited.seconds * 1e9)).nanoseconds
            slices.append(TraceSlice(start: start, end: end, name: TimelineEventDescription.describe(event, in: c).text,
                                     category: "att", annotations: [.string("request", "\(request)"), .int("record", event.at.number)]))
        }
        guard !slices.isEmpty else { return }
        let description = c.droppedATTTransactions > 0 ? "\(c.droppedATTTransactions) later transactions not drawn" : nil
        var lanes = try SliceLanes(name: "ATT #\(c.id)", parent: parent, rank: 0, description: description, writer: writer)
        try lanes.draw(SliceLanes.ordered(slices.map(clamp)), writer: writer)
    }

    // MARK: Counters

    func counters(process: UInt64) throws {
        let r = capture.energy
        var phone = StepCounter(), peripheral = StepCounter()
        func add(_ counter: inout StepCounter, _ start: Timestamp, _ end: Timestamp, _ mC: Double) {
            counter.add(start: start.nanoseconds, end: end.nanoseconds, total: mC)
        }
        for s in r.scans where s.session.controller == controller {
            add(&phone, s.start, s.end, s.phone.chargeMC)
        }
        for a in r.advertising where a.session.controller == controller { add(&phone, a.start, a.end, a.phone.chargeMC) }
        for l in r.links where l.connection.controller == controller && l.modelled {
            for p in l.phases {
                add(&phone, p.start, p.end, p.phone.chargeMC)
                if let q = p.peripheral, l.connection.role != .peripheral { add(&peripheral, p.start, p.end, q.chargeMC) }
            }
        }
        try draw(phone, rate: "Phone radio current (model)", rateUnit: "mA", rateRank: .current,
                 total: "Phone radio charge (model, cumulative)", totalUnit: "mC", totalRank: .charge, process: process)
        try draw(peripheral, rate: "Peripheral radio current (model)", rateUnit: "mA", rateRank: .peripheralCurrent,
                 total: "Peripheral radio charge (model, cumulative)", totalUnit: "mC", totalRank: .peripheralCharge, process: process)
        try reportRate(process: process)
        try rssi(process: process)
    }

    func draw(_ counter: StepCounter, rate: String, rateUnit: String, rateRank: Rank, total: String?, totalUnit: String,
              totalRank: Rank, process: UInt64) throws {
        guard !counter.isEmpty else { return }
        let rateTrack = try writer.counterTrack(name: rate, unit: rateUnit, parent: process, rank: rateRank.rawValue)
        let totalTrack = try total.map { try writer.counterTrack(name: $0, unit: totalUnit, parent: process, rank: totalRank.rawValue) }
        for step in counter.steps() {
            try writer.counter(track: rateTrack, at: step.at, value: step.rate)
            if let totalTrack { try writer.counter(track: totalTrack, at: step.at, value: step.cumulative) }
        }
    }

    /// Advertising reports the host received each second (0 in the seconds without any).
    func reportRate(process: UInt64) throws {
        guard let seconds = capture.advertising?.reportsPerSecond[controller], !seconds.isEmpty else { return }
        let track = try writer.counterTrack(name: "Advertising reports/s", unit: "reports/s", parent: process, rank: Rank.reports.rawValue)
        let second: Int64 = 1_000_000_000
        var next: Int64?
        for s in seconds {
            if let next, next < s.second { try writer.counter(track: track, at: next * second, value: 0) }
            try writer.counter(track: track, at: s.second * second, value: Double(s.reports))
            next = s.second + 1
        }
        if let next { try writer.counter(track: track, at: next * second, value: 0) }
    }

    /// RSSI of the advertisers the app connected to (or tried to), else of the most often heard.
    func rssi(process: UInt64) throws {
        guard let sampler = capture.advertising else { return }
        let model = capture.model
        var peers = Set(model.connections.filter { $0.controller == controller }.compactMap(\.peerAddress))
        peers.formUnion(model.failedConnections.filter { $0.at.controller == controller }.compactMap(\.peerAddress))
        var keys = sampler.samples.keys.filter { $0.controller == controller && peers.contains($0.address) }
        if keys.isEmpty {
            keys = sampler.samples.filter { $0.key.controller == controller }
                .sorted { $0.value.count != $1.value.count ? $0.value.count > $1.value.count : $0.key.address.description < $1.key.address.description }
                .prefix(CaptureTrace.rssiFallbackAdvertisers).map(\.key)
        }
        for key in keys.sorted(by: { $0.address.description < $1.address.description }) {
            let track = try writer.counterTrack(name: "RSSI \(key.address)", unit: "dBm", parent: process, rank: Rank.rssi.rawValue)
            for s in sampler.samples[key] ?? [] { try writer.counter(track: track, at: s.nanoseconds, value: Double(s.dBm)) }
        }
    }

    func findingAnnotations(_ f: Finding) -> [A] {
        var a: [A] = [.string("rule", f.id), .string("name", f.rule), .string("severity", f.severity.rawValue),
                      .string("message", f.message), .string("end", TimeFormat.utc(f.end, digits: 3)),
                      .string("records", f.records.map { "#\($0.number)" }.joined(separator: " ")),
                      .string("fingerprint", f.fingerprint)]
        if let c = f.connection { a.append(.int("connection", c.id)) }
        if let cost = f.cost {
            a.append(.double("cost_phone_mc", cost.phone.chargeMC))
            a.append(.double("cost_phone_low_mc", cost.phone.lowMC))
            a.append(.double("cost_phone_high_mc", cost.phone.highMC))
            a.append(.double("cost_radio_s", cost.phone.radioSeconds))
            if let p = cost.peripheral { a.append(.double("cost_peripheral_mc", p.chargeMC)) }
        }
        return a
    }
}
