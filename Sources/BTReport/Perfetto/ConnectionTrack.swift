import BTWire
import BTCapture
import BTTrack

/// A connection's track (`btlens export --format perfetto`): the link as one slice with its phases nested in it,
/// and its ATT transactions on a sub-track, with request→response flows where they were slow. Drawn from the
/// whole link: at the capture's end, or when the link is judged before (`LinkTraceStream`).
struct ConnectionTrack {
    let writer: PerfettoTraceWriter
    /// Where a link still open ends.
    let captureEnd: Int64
    typealias A = PerfettoTraceWriter.Annotation

    /// Draws `c` under `process`; returns its track (where its findings go).
    func draw(_ c: Connection, process: UInt64) throws -> UInt64 {
        let start = (c.connectRequested ?? c.start).timestamp.nanoseconds
        let end = max(start, c.end?.timestamp.nanoseconds ?? captureEnd)
        func clamped(_ s: TraceSlice) -> TraceSlice {
            var s = s
            s.start = min(max(s.start, start), end)
            s.end = min(max(s.end, s.start), end)
            return s
        }
        var name = "Connection #\(c.id) \(c.linkName)"
        if c.role != .unknown { name += " \(c.role.rawValue)" }
        if let peer = c.peerAddress { name += " \(peer)" }
        var lanes = try SliceLanes(name: name, parent: process, rank: ControllerTrace.Rank.connections.rawValue, writer: writer)

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
            // Negated without trapping: a damaged capture's clock can make the wait anything, even Int64.min.
            let start = event.at.timestamp.adding(nanoseconds: Int64(0).minusSaturating(Int64(saturating: waited.seconds * 1e9))).nanoseconds
            slices.append(TraceSlice(start: start, end: end, name: TimelineEventDescription.describe(event, in: c).text,
                                     category: "att", annotations: [.string("request", "\(request)"), .int("record", event.at.number)]))
        }
        guard !slices.isEmpty else { return }
        let description = c.droppedATTTransactions > 0 ? "\(c.droppedATTTransactions) later transactions not drawn" : nil
        var lanes = try SliceLanes(name: "ATT #\(c.id)", parent: parent, rank: 0, description: description, writer: writer)
        try lanes.draw(SliceLanes.ordered(slices.map(clamp)), writer: writer)
    }
}
