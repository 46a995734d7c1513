/// A slice (or, with `start == end` and `isInstant`, an instant) to draw on a track, with what its details show.
struct TraceSlice {
    var start: Int64
    var end: Int64
    var name: String
    var category: String
    var annotations: [PerfettoTraceWriter.Annotation] = []
    var isInstant = false
    /// An instant at the slice's start that begins a flow, and one at its end that ends it: a slow ATT request and
    /// its response, joined by an arrow.
    var flow: (id: UInt64, from: String, to: String)?

    init(start: Int64, end: Int64, name: String, category: String, annotations: [PerfettoTraceWriter.Annotation] = [],
         isInstant: Bool = false) {
        self.start = start
        self.end = max(start, end)
        self.name = name
        self.category = category
        self.annotations = annotations
        self.isInstant = isInstant
    }
}

/// Lays slices out on a track and as many extra lanes (sibling tracks named "NAME (2)", …) as overlapping slices
/// need: Perfetto requires the slices of one track to nest strictly, so a slice that overlaps another without
/// fitting inside it goes to the first lane where it does. Events are written per lane in time order.
struct SliceLanes {
    let name: String
    let parent: UInt64
    let rank: Int
    let description: String?
    /// Each lane's track and the ends of its open slices, innermost last.
    private(set) var lanes: [(track: UInt64, open: [(end: Int64, flow: (id: UInt64, to: String)?)])] = []

    /// The first lane's track, created at once so other events (findings) can be put on it.
    init(name: String, parent: UInt64, rank: Int, description: String? = nil, writer: PerfettoTraceWriter) throws {
        self.name = name
        self.parent = parent
        self.rank = rank
        self.description = description
        lanes.append((try writer.track(name: name, parent: parent, rank: rank, description: description), []))
    }

    var track: UInt64 { lanes[0].track }

    /// Slices in order of start, the longer first at equal starts (so an enclosing slice opens before its children).
    static func ordered(_ slices: [TraceSlice]) -> [TraceSlice] {
        slices.enumerated().sorted { a, b in
            a.element.start != b.element.start ? a.element.start < b.element.start
                : a.element.end != b.element.end ? a.element.end > b.element.end : a.offset < b.offset
        }.map(\.element)
    }

    /// Draws `slices` (in `ordered` order) and closes every lane.
    mutating func draw(_ slices: [TraceSlice], writer: PerfettoTraceWriter) throws {
        for s in slices { try add(s, writer: writer) }
        try closeAll(writer: writer)
    }

    /// Closes every lane, once every slice has been added.
    mutating func closeAll(writer: PerfettoTraceWriter) throws {
        for i in lanes.indices { try close(lane: i, before: Int64.max, writer: writer) }
    }

    private mutating func close(lane i: Int, before t: Int64, writer: PerfettoTraceWriter) throws {
        while let top = lanes[i].open.last, top.end <= t {
            if let flow = top.flow {
                try writer.instant(track: lanes[i].track, at: top.end, name: flow.to, category: "att", terminatingFlows: [flow.id])
            }
            try writer.end(track: lanes[i].track, at: top.end)
            lanes[i].open.removeLast()
        }
    }

    /// Draws `s`, which comes after every slice added before in `ordered` order.
    mutating func add(_ s: TraceSlice, writer: PerfettoTraceWriter) throws {
        if s.isInstant {
            // Zero length: nested wherever it falls.
            try close(lane: 0, before: s.start - 1, writer: writer)
            try writer.instant(track: lanes[0].track, at: s.start, name: s.name, category: s.category, annotations: s.annotations)
            return
        }
        var lane = 0
        while true {
            if lane == lanes.count {
                let track = try writer.track(name: "\(name) (\(lane + 1))", parent: parent, rank: rank, description: description)
                lanes.append((track, []))
            }
            try close(lane: lane, before: s.start, writer: writer)
            if lanes[lane].open.last.map({ $0.end >= s.end }) ?? true { break }
            lane += 1
        }
        let track = lanes[lane].track
        try writer.begin(track: track, at: s.start, name: s.name, category: s.category, annotations: s.annotations)
        if let flow = s.flow { try writer.instant(track: track, at: s.start, name: flow.from, category: "att", flows: [flow.id]) }
        lanes[lane].open.append((s.end, s.flow.map { ($0.id, $0.to) }))
    }
}
