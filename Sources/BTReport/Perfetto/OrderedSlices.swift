/// The slices of one kind of the model (its scans, one advertising set's sessions, its connection attempts), read
/// one at a time in `SliceLanes.ordered`'s order rather than made into a list: a long capture has tens of thousands
/// of scans, set aside (`ScanSessions`). The model's order is nearly always that order already; only when it is not
/// are the places sorted (four bytes each).
struct OrderedSlices {
    typealias Span = (start: Int64, end: Int64)

    /// How many values the model has of this kind (of every controller).
    let count: Int
    /// The span the value at a place of the model's is drawn over (as `TraceSlice` clamps it), nil for one drawn
    /// elsewhere (another controller's, another set's).
    let span: (Int) -> Span?
    /// The places in drawing order, when the model's is not it.
    private var sorted: [Int32]?
    private(set) var isEmpty = true

    init(count: Int, span: @escaping (Int) -> Span?) {
        self.count = count
        self.span = span
        var previous: Span?
        var inOrder = true
        for i in 0..<count {
            guard let s = span(i) else { continue }
            isEmpty = false
            if let p = previous, !Self.precedes(p, s) {
                inOrder = false
                break
            }
            previous = s
        }
        if !inOrder {
            // As `SliceLanes.ordered`: by start, the longer first, then in the model's order.
            var keys: [(span: Span, place: Int32)] = []
            for i in 0..<count { if let s = span(i) { keys.append((s, Int32(i))) } }
            keys.sort { a, b in a.span.start != b.span.start ? a.span.start < b.span.start
                : a.span.end != b.span.end ? a.span.end > b.span.end : a.place < b.place }
            sorted = keys.map(\.place)
        }
    }

    /// Whether `a` may come before `b` in drawing order (equal spans stay in the model's order).
    private static func precedes(_ a: Span, _ b: Span) -> Bool {
        a.start < b.start || (a.start == b.start && a.end >= b.end)
    }

    /// The next value drawn from `position` on (a place in the drawing order, moved past it).
    func next(_ position: inout Int) -> (place: Int, span: Span)? {
        if let sorted {
            guard position < sorted.count else { return nil }
            let place = Int(sorted[position])
            position += 1
            return span(place).map { (place, $0) }
        }
        while position < count {
            let place = position
            position += 1
            if let s = span(place) { return (place, s) }
        }
        return nil
    }

    /// Each value's place, in drawing order.
    func forEach(_ body: (Int) throws -> Void) rethrows {
        var position = 0
        while let (place, _) = next(&position) { try body(place) }
    }
}

/// Whether any slice of an `OrderedSlices` covers a time, for times asked in order (findings in report order):
/// the slices that begin by then are read once, keeping only how far they reach.
struct SliceCoverage {
    let slices: OrderedSlices
    private var position = 0
    private var upcoming: OrderedSlices.Span?
    private var reach = Int64.min
    private var asked = Int64.min

    init(_ slices: OrderedSlices) { self.slices = slices }

    /// Whether a slice begins at or before `at` and ends at or after it.
    mutating func covers(_ at: Int64) -> Bool {
        if at < asked {
            // Asked out of order: read again from the first.
            position = 0
            upcoming = nil
            reach = .min
        }
        asked = at
        while true {
            if upcoming == nil { upcoming = slices.next(&position)?.span }
            guard let next = upcoming, next.start <= at else { break }
            reach = max(reach, next.end)
            upcoming = nil
        }
        return reach >= at
    }
}
