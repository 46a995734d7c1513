import BTTrack

/// Links of a model by controller and start time, to find those that started within a span without reading every
/// link for every scan: `scan-after-connect` filtered all links per scan, quadratic on captures of thousands of
/// scans and links (30 % of the audit on 7,900 scans and 27,000 links). Answers are exactly the filter's.
struct LinkStartIndex {
    /// Per controller, (start in ns, index in the model's links), sorted.
    private var byController: [UInt16: [(start: Int64, index: Int)]] = [:]

    /// Indexes `indices` of `links`.
    init<S: Sequence>(_ links: LinkSummaries, _ indices: S) where S.Element == Int {
        for i in indices {
            let link = links[i]
            byController[link.controller, default: []].append((link.start.timestamp.nanoseconds, i))
        }
        for key in byController.keys { byController[key]!.sort { ($0.start, $0.index) < ($1.start, $1.index) } }
    }

    /// The links of `controller` that started at or after `from` and before `until` (or at `until` when
    /// `inclusive`), in the order of their indices.
    func started(controller: UInt16, from: Int64, until: Int64, inclusive: Bool = false) -> [Int] {
        guard let list = byController[controller] else { return [] }
        var i = list.partitioningIndex { $0.start >= from }
        var found: [Int] = []
        while i < list.count, list[i].start < until || (inclusive && list[i].start == until) {
            found.append(list[i].index)
            i += 1
        }
        return found.sorted()
    }

    /// Whether a link of `controller` started at or after `from` and at or before `through`.
    func any(controller: UInt16, from: Int64, through: Int64) -> Bool {
        guard let list = byController[controller] else { return false }
        let i = list.partitioningIndex { $0.start >= from }
        return i < list.count && list[i].start <= through
    }
}
