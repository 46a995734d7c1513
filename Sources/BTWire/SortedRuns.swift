/// More plain values to sort than memory should hold at once: they are held up to `runLength`, then sorted and set
/// aside as a run in a temporary file, and the runs are merged back in order at the end, read a slice at a time.
/// Memory holds a run and a slice per run, not every value. Without a directory every value stays in memory and is
/// sorted at once. The order must be total (no two values equal unless they are the same), so that the merged
/// values come out exactly as one sort of them all would give them.
public struct SortedRuns<Element> {
    public let runLength: Int
    /// Where the runs are set aside (nil: nothing is).
    public let directory: String?
    /// The values not yet in a run.
    private var held: [Element] = []
    private var spill: Spill?
    /// The runs set aside: where each begins, and its length.
    private var runs: [(offset: Int64, count: Int)] = []

    /// Values read back from each run at once while merging.
    public static var sliceLength: Int { 512 }

    public init(directory: String?, runLength: Int) {
        precondition(_isPOD(Element.self), "set aside as bytes")
        self.directory = directory
        self.runLength = max(1, runLength)
    }

    public var isEmpty: Bool { held.isEmpty && runs.isEmpty }
    /// Whether runs were set aside.
    public var isSetAside: Bool { !runs.isEmpty }
    /// What went wrong setting runs aside or reading them back (a full disk), if anything.
    public var failure: String? { spill?.failure }

    /// Adds `value`; when a run is full it is sorted by the order `order` gives (asked for only then) and set aside.
    public mutating func append(_ value: Element, order: () -> (Element, Element) -> Bool) {
        held.append(value)
        if directory != nil && held.count >= runLength { setRunAside(by: order()) }
    }

    private mutating func setRunAside(by areInIncreasingOrder: (Element, Element) -> Bool) {
        held.sort(by: areInIncreasingOrder)
        if spill == nil { spill = Spill.fileOrMemory(in: directory).spill }
        runs.append((spill!.append(plain: held), held.count))
        held.removeAll(keepingCapacity: true)
    }

    /// Hands over every value in order: the held ones and the runs set aside, merged. None is left after. A run that
    /// cannot be read back ends early (`failure` says why).
    public mutating func drain(by areInIncreasingOrder: (Element, Element) -> Bool,
                               _ body: (Element) throws -> Void) rethrows {
        defer {
            held = []
            runs = []
        }
        guard let spill, !runs.isEmpty else {
            held.sort(by: areInIncreasingOrder)
            for value in held { try body(value) }
            return
        }
        if !held.isEmpty { setRunAside(by: areInIncreasingOrder) }
        var readers = runs.map { SpilledRun<Element>(spill: spill, offset: $0.offset, count: $0.count, sliceLength: Self.sliceLength) }
        while true {
            var best: Int?
            for r in readers.indices {
                guard let head = readers[r].head else { continue }
                if let b = best, !areInIncreasingOrder(head, readers[b].head!) { continue }
                best = r
            }
            guard let b = best else { break }
            try body(readers[b].head!)
            readers[b].advance()
        }
    }
}
