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

    /// Draws `c` under `process`; returns its track (where its findings go). Its slices are made one at a time in
    /// drawing order (`OrderedSlices`), not listed: a link of hours has tens of thousands of events and transactions.
    func draw(_ c: Connection, process: UInt64) throws -> UInt64 {
        let start = (c.connectRequested ?? c.start).timestamp.nanoseconds
        let end = max(start, c.end?.timestamp.nanoseconds ?? captureEnd)
        let clamp = Clamp(start: start, end: end)
        var name = "Connection #\(c.id) \(c.linkName)"
        if c.role != .unknown { name += " \(c.role.rawValue)" }
        if let peer = c.peerAddress { name += " \(peer)" }
        var lanes = try SliceLanes(name: name, parent: process, rank: ControllerTrace.Rank.connections.rawValue, writer: writer)

        // The slices in the order made: the link, its connecting, each event, then the pairing around them all.
        let events = c.events
        var pairingStart: RecordRef?
        var pairingLast: RecordRef?
        for event in events {
            switch event.kind {
            case .pairing:
                if pairingStart == nil { pairingStart = event.at }
                pairingLast = event.at
            case .encryptionChanged:
                if pairingStart != nil { pairingLast = event.at }
            default:
                break
            }
        }
        var pairing: (first: RecordRef, last: RecordRef)?
        if let first = pairingStart, let last = pairingLast, last.number > first.number { pairing = (first, last) }
        let requested = c.connectRequested
        let firstEvent = requested == nil ? 1 : 2
        let count = firstEvent + events.count + (pairing == nil ? 0 : 1)

        func span(_ i: Int) -> OrderedSlices.Span {
            if i == 0 { return clamp.span(start, end) }
            if i < firstEvent { return clamp.span(requested!.timestamp.nanoseconds, c.start.timestamp.nanoseconds) }
            if i - firstEvent < events.count { return clamp.span(eventSpan(events[i - firstEvent], in: c)) }
            return clamp.span(pairing!.first.timestamp.nanoseconds, pairing!.last.timestamp.nanoseconds)
        }
        func slice(_ i: Int) -> TraceSlice {
            if i == 0 { return TraceSlice(start: start, end: end, name: name, category: "connection", annotations: annotations(c)) }
            if i < firstEvent {
                return TraceSlice(start: requested!.timestamp.nanoseconds, end: c.start.timestamp.nanoseconds,
                                  name: "connecting", category: "connection", annotations: [.int("record", requested!.number)])
            }
            if i - firstEvent < events.count { return eventSlice(events[i - firstEvent], in: c) }
            return TraceSlice(start: pairing!.first.timestamp.nanoseconds, end: pairing!.last.timestamp.nanoseconds,
                              name: "pairing/encryption", category: "pairing", annotations: [.int("record", pairing!.first.number)])
        }
        try OrderedSlices(count: count, span: span).forEach { try lanes.add(clamp.slice(slice($0)), writer: writer) }
        try lanes.closeAll(writer: writer)
        try transactions(c, parent: lanes.track, clamp: clamp)
        return lanes.track
    }

    /// Slices kept within the link's own (Perfetto nests a track's slices).
    struct Clamp {
        let start: Int64
        let end: Int64

        func slice(_ s: TraceSlice) -> TraceSlice {
            var s = s
            (s.start, s.end) = span(s.start, s.end)
            return s
        }

        /// Where a slice made over `from`...`to` is drawn (`TraceSlice` first ends it no earlier than it starts).
        func span(_ from: Int64, _ to: Int64) -> OrderedSlices.Span {
            let s = min(max(from, start), end)
            return (s, min(max(max(from, to), s), end))
        }

        func span(_ span: OrderedSlices.Span) -> OrderedSlices.Span { self.span(span.start, span.end) }
    }

    func annotations(_ c: Connection) -> [A] {
        var a: [A] = [.int("id", c.id), .string("handle", Hex.u16(c.handle)), .string("transport", c.transport.rawValue),
                      .string("role", c.role.rawValue), .int("start_record", c.start.number), .int("mtu", c.mtu),
                      .bool("implicit_start", c.implicitStart), .bool("open", c.isOpen), .bool("encrypted", c.encrypted),
                      .int("att_transactions", c.transactions.completed + c.transactions.errors)]
        if let peer = c.peerAddress { a.append(.string("peer_address", peer.description)) }
        if let reason = c.disconnectReason { a.append(.string("disconnect_reason", "\(reason) (\(Hex.u8(reason.rawValue)))")) }
        if let p = c.parameters { a.append(.string("parameters", p.description)) }
        return a
    }

    /// What an event's slice spans, before it is clamped.
    func eventSpan(_ event: TimelineEvent, in c: Connection) -> OrderedSlices.Span {
        let at = event.at.timestamp.nanoseconds
        switch event.kind {
        case .discovery(let d):
            let p = c.discoveries[d]
            return (p.first.timestamp.nanoseconds, p.last.timestamp.nanoseconds)
        case .activity(let r):
            let run = c.runs[r]
            return (run.first.timestamp.nanoseconds, run.last.timestamp.nanoseconds)
        case .idle(let until):
            return (at, until.timestamp.nanoseconds)
        default:
            return (at, at)
        }
    }

    /// An event's slice over `eventSpan` (an instant for those without a length).
    func eventSlice(_ event: TimelineEvent, in c: Connection) -> TraceSlice {
        let text = TimelineEventDescription.describe(event, in: c).text
        let (start, end) = eventSpan(event, in: c)
        let record: A = .int("record", event.at.number)
        switch event.kind {
        case .discovery(let d):
            let p = c.discoveries[d]
            return TraceSlice(start: start, end: end, name: text, category: "discovery",
                              annotations: [record, .int("requests", p.requests), .int("found", p.found)])
        case .activity(let r):
            let run = c.runs[r]
            return TraceSlice(start: start, end: end, name: text, category: "activity",
                              annotations: [record, .int("count", run.count), .int("bytes", run.bytes)])
        case .idle:
            return TraceSlice(start: start, end: end, name: text, category: "idle", annotations: [record])
        case .pairing, .encryptionChanged:
            return TraceSlice(start: start, end: end, name: text, category: "pairing", annotations: [record], isInstant: true)
        default:
            return TraceSlice(start: start, end: end, name: text, category: "connection", annotations: [record], isInstant: true)
        }
    }

    /// The link's answered ATT requests (and those that timed out) on a sub-track of the connection's, made one at a
    /// time in drawing order.
    func transactions(_ c: Connection, parent: UInt64, clamp: Clamp) throws {
        let kept = c.attTransactions
        let events = c.events
        var timeouts: [Int32] = []
        // Arrows are numbered in the order of the transactions, whatever the order they are drawn in.
        var flows: [Int: UInt64] = [:]
        for (i, t) in kept.enumerated() {
            let request = t.requestAt.timestamp.nanoseconds
            // A damaged clock can put the two ends further apart than Int64 can say: slow, not a trap.
            let (latency, overflow) = max(request, t.responseAt.timestamp.nanoseconds).subtractingReportingOverflow(request)
            if overflow || latency > CaptureTrace.slowTransaction { flows[i] = writer.newFlow() }
        }
        for (i, event) in events.enumerated() { if case .attTimeout = event.kind { timeouts.append(Int32(i)) } }
        guard !kept.isEmpty || !timeouts.isEmpty else { return }

        func timeoutStart(_ event: TimelineEvent, waited: Double) -> Int64 {
            // Negated without trapping: a damaged capture's clock can make the wait anything, even Int64.min.
            event.at.timestamp.adding(nanoseconds: Int64(0).minusSaturating(Int64(saturating: waited * 1e9))).nanoseconds
        }
        func span(_ i: Int) -> OrderedSlices.Span {
            if i < kept.count { return clamp.span(kept[i].requestAt.timestamp.nanoseconds, kept[i].responseAt.timestamp.nanoseconds) }
            let event = events[Int(timeouts[i - kept.count])]
            guard case .attTimeout(_, _, let waited, _) = event.kind else { return (0, 0) }
            return clamp.span(timeoutStart(event, waited: waited.seconds), event.at.timestamp.nanoseconds)
        }
        func slice(_ i: Int) -> TraceSlice {
            guard i < kept.count else {
                let event = events[Int(timeouts[i - kept.count])]
                guard case .attTimeout(let request, _, let waited, _) = event.kind else { preconditionFailure("a timeout") }
                return TraceSlice(start: timeoutStart(event, waited: waited.seconds), end: event.at.timestamp.nanoseconds,
                                  name: TimelineEventDescription.describe(event, in: c).text, category: "att",
                                  annotations: [.string("request", "\(request)"), .int("record", event.at.number)])
            }
            let t = kept[i]
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
            if let flow = flows[i] {
                s.flow = (flow, "request (record \(t.requestAt.number))",
                          "response after \(TimeFormat.human(latency)) (record \(t.responseAt.number))")
            }
            return s
        }
        let description = c.droppedATTTransactions > 0 ? "\(c.droppedATTTransactions) later transactions not drawn" : nil
        var lanes = try SliceLanes(name: "ATT #\(c.id)", parent: parent, rank: 0, description: description, writer: writer)
        try OrderedSlices(count: kept.count + timeouts.count, span: span).forEach { try lanes.add(clamp.slice(slice($0)), writer: writer) }
        try lanes.closeAll(writer: writer)
    }
}
