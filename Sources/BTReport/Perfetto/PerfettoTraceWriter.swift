import BTCapture

/// Writes a Perfetto trace (protos/perfetto/trace/trace.proto: a `Trace` of `TracePacket`s) packet by packet as
/// track events: processes, tracks, counter tracks, slices, instants, counters and flows. Every event is stamped
/// on the REALTIME clock (Unix time), which the first packet declares as the trace's clock, so the trace lines up
/// with an Android system trace of the same moments.
public final class PerfettoTraceWriter {
    /// Field numbers of the messages written, from Perfetto's trace protos.
    enum Field {
        static let tracePacket = 1  // Trace.packet
        enum Packet {
            static let clockSnapshot = 6, timestamp = 8, trackEvent = 11, sequenceID = 10
            static let timestampClockID = 58, trackDescriptor = 60
        }
        enum Clock { static let clocks = 1, primaryTraceClock = 2, clockID = 1, timestamp = 2 }
        enum Track {
            static let uuid = 1, name = 2, process = 3, parentUUID = 5, counter = 8, childOrdering = 11
            static let siblingOrderRank = 12, description = 14
        }
        enum Process { static let pid = 1, name = 6 }
        enum Counter { static let unitName = 6 }
        enum Event {
            static let debugAnnotations = 4, type = 9, trackUUID = 11, categories = 22, name = 23
            static let doubleCounterValue = 44, flowIDs = 47, terminatingFlowIDs = 48
        }
        enum Annotation { static let bool = 2, int = 4, double = 5, string = 6, name = 10 }
    }

    /// TrackEvent.Type.
    enum EventType: UInt64 { case sliceBegin = 1, sliceEnd = 2, instant = 3, counter = 4 }
    /// BuiltinClock.BUILTIN_CLOCK_REALTIME: wall-clock (Unix) time.
    static let realtimeClock: UInt64 = 1
    /// TrackDescriptor.ChildTracksOrdering.EXPLICIT: children ordered by their sibling_order_rank.
    static let explicitOrdering: UInt64 = 3
    /// The one writer sequence every packet belongs to (any non-zero id; a file has no tracing service to set it).
    static let sequenceID: UInt64 = 1

    /// A debug annotation of an event: a named value the UI shows in its details.
    public struct Annotation: Sendable {
        public enum Value: Sendable {
            case string(String), int(Int64), double(Double), bool(Bool)
        }
        public var name: String
        public var value: Value
        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
        public static func string(_ name: String, _ v: String) -> Annotation { Annotation(name, .string(v)) }
        public static func int(_ name: String, _ v: Int) -> Annotation { Annotation(name, .int(Int64(v))) }
        public static func double(_ name: String, _ v: Double) -> Annotation { Annotation(name, .double(v)) }
        public static func bool(_ name: String, _ v: Bool) -> Annotation { Annotation(name, .bool(v)) }
    }

    let out: BufferedDescriptorWriter
    private var nextUUID: UInt64 = 1
    private var nextFlow: UInt64 = 1
    /// Packets written (for the summary line).
    public private(set) var packets = 0
    /// Whether the clock is declared (`clockSnapshot`): the trace's first packet.
    public private(set) var clockDeclared = false

    public init(out: BufferedDescriptorWriter) {
        self.out = out
    }

    /// A fresh id for a request→response flow.
    public func newFlow() -> UInt64 {
        defer { nextFlow += 1 }
        return nextFlow
    }

    func newUUID() -> UInt64 {
        defer { nextUUID += 1 }
        return nextUUID
    }

    private func write(_ packet: ProtoMessage) throws {
        var framed = ProtoMessage()
        framed.message(Field.tracePacket, packet)
        out.append(contentsOf: framed.bytes)
        try out.flushIfFull()
        packets += 1
    }

    private func packet(at ns: Int64?) -> ProtoMessage {
        var p = ProtoMessage()
        if let ns {
            p.uint(Field.Packet.timestamp, UInt64(max(0, ns)))
            p.uint(Field.Packet.timestampClockID, Self.realtimeClock)
        }
        p.uint(Field.Packet.sequenceID, Self.sequenceID)
        return p
    }

    /// Declares REALTIME as the trace's clock (ClockSnapshot.primary_trace_clock), with its reading at `ns`.
    public func clockSnapshot(at ns: Int64) throws {
        var clock = ProtoMessage()
        clock.uint(Field.Clock.clockID, Self.realtimeClock)
        clock.uint(Field.Clock.timestamp, UInt64(max(0, ns)))
        var snapshot = ProtoMessage()
        snapshot.message(Field.Clock.clocks, clock)
        snapshot.uint(Field.Clock.primaryTraceClock, Self.realtimeClock)
        var p = packet(at: ns)
        p.message(Field.Packet.clockSnapshot, snapshot)
        try write(p)
        clockDeclared = true
    }

    /// A process track (one per capture and controller); returns its uuid.
    public func process(pid: Int32, name: String) throws -> UInt64 {
        let uuid = newUUID()
        var process = ProtoMessage()
        process.int(Field.Process.pid, Int64(pid))
        process.string(Field.Process.name, name)
        var track = ProtoMessage()
        track.uint(Field.Track.uuid, uuid)
        track.message(Field.Track.process, process)
        track.uint(Field.Track.childOrdering, Self.explicitOrdering)
        try descriptor(track)
        return uuid
    }

    /// A track of slices and instants under `parent`, shown in `rank` order among its siblings.
    public func track(name: String, parent: UInt64, rank: Int, description: String? = nil) throws -> UInt64 {
        let uuid = newUUID()
        var track = ProtoMessage()
        track.uint(Field.Track.uuid, uuid)
        track.string(Field.Track.name, name)
        track.uint(Field.Track.parentUUID, parent)
        track.int(Field.Track.siblingOrderRank, Int64(rank))
        if let description { track.string(Field.Track.description, description) }
        try descriptor(track)
        return uuid
    }

    /// A counter track under `parent` with its unit's name ("mA", "dBm").
    public func counterTrack(name: String, unit: String, parent: UInt64, rank: Int) throws -> UInt64 {
        let uuid = newUUID()
        var counter = ProtoMessage()
        counter.string(Field.Counter.unitName, unit)
        var track = ProtoMessage()
        track.uint(Field.Track.uuid, uuid)
        track.string(Field.Track.name, name)
        track.uint(Field.Track.parentUUID, parent)
        track.int(Field.Track.siblingOrderRank, Int64(rank))
        track.message(Field.Track.counter, counter)
        try descriptor(track)
        return uuid
    }

    private func descriptor(_ track: ProtoMessage) throws {
        var p = packet(at: nil)
        p.message(Field.Packet.trackDescriptor, track)
        try write(p)
    }

    public func begin(track: UInt64, at ns: Int64, name: String, category: String, annotations: [Annotation] = [],
                      flows: [UInt64] = [], terminatingFlows: [UInt64] = []) throws {
        try event(.sliceBegin, track: track, at: ns, name: name, category: category, annotations: annotations,
                  flows: flows, terminatingFlows: terminatingFlows)
    }

    public func end(track: UInt64, at ns: Int64) throws {
        try event(.sliceEnd, track: track, at: ns, name: nil, category: nil)
    }

    public func instant(track: UInt64, at ns: Int64, name: String, category: String, annotations: [Annotation] = [],
                        flows: [UInt64] = [], terminatingFlows: [UInt64] = []) throws {
        try event(.instant, track: track, at: ns, name: name, category: category, annotations: annotations,
                  flows: flows, terminatingFlows: terminatingFlows)
    }

    public func counter(track: UInt64, at ns: Int64, value: Double) throws {
        var e = ProtoMessage()
        e.uint(Field.Event.type, EventType.counter.rawValue)
        e.uint(Field.Event.trackUUID, track)
        e.double(Field.Event.doubleCounterValue, value)
        var p = packet(at: ns)
        p.message(Field.Packet.trackEvent, e)
        try write(p)
    }

    private func event(_ type: EventType, track: UInt64, at ns: Int64, name: String?, category: String?,
                       annotations: [Annotation] = [], flows: [UInt64] = [], terminatingFlows: [UInt64] = []) throws {
        var e = ProtoMessage()
        e.uint(Field.Event.type, type.rawValue)
        e.uint(Field.Event.trackUUID, track)
        if let name { e.string(Field.Event.name, name) }
        if let category { e.string(Field.Event.categories, category) }
        for a in annotations {
            var m = ProtoMessage()
            m.string(Field.Annotation.name, a.name)
            switch a.value {
            case .string(let s): m.string(Field.Annotation.string, s)
            case .int(let i): m.int(Field.Annotation.int, i)
            case .double(let d): m.double(Field.Annotation.double, d)
            case .bool(let b): m.bool(Field.Annotation.bool, b)
            }
            e.message(Field.Event.debugAnnotations, m)
        }
        for f in flows { e.fixed64(Field.Event.flowIDs, f) }
        for f in terminatingFlows { e.fixed64(Field.Event.terminatingFlowIDs, f) }
        var p = packet(at: ns)
        p.message(Field.Packet.trackEvent, e)
        try write(p)
    }

    public func finish() throws { try out.flush() }
}
