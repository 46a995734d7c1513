/// Every link of a model by controller and start, whether the model kept its summary (`CaptureModel.links`) or
/// let it go with no more than its start (a link judged as it closed that no capture-wide rule reads whole): what a
/// rule asks of the links that came up during a span, without knowing which were let go.
///
/// Built from the summaries once per question set (`CaptureModel.linkStarts`); the let-go links are read where
/// the model keeps them (already in controller and start order), not copied.
public struct LinkStarts: Sendable {
    /// A link that came up: its id, start (ns), whether the app's rules judge it as an LE link the capture saw
    /// start, and its index in `CaptureModel.links` when the model kept its summary.
    public struct Started: Sendable, Equatable {
        public let id: Int
        public let start: Int64
        public let isAppLE: Bool
        public let summary: Int?

        /// The kept summary at `index` of the model's links.
        init(_ link: LinkSummary, start: Int64, index: Int) {
            self.init(id: link.id, start: start, isAppLE: link.transport == .le && !link.implicitStart && link.ownership.isApp,
                      summary: index)
        }

        init(id: Int, start: Int64, isAppLE: Bool, summary: Int?) {
            self.id = id
            self.start = start
            self.isAppLE = isAppLE
            self.summary = summary
        }
    }

    /// Per controller, the kept summaries' (start, index), in start and index order; empty when `inOrder`.
    private var kept: [UInt16: [(start: Int64, index: Int32)]] = [:]
    /// The one controller of every kept summary when they are in start order already (nearly always: summaries
    /// are in id order, and ids are given as links come up), so that no list of them is made: a capture of
    /// hundreds of thousands of links held one of 16 bytes each.
    private var inOrder: UInt16?
    /// With `inOrder`: the start of every `sparseStride`-th summary, where a search for a time begins.
    private var sparseStarts: [Int64] = []
    static let sparseStride = 16
    private let summaries: LinkSummaries
    private let letGo: [LetGoLink]

    init(_ model: CaptureModel) {
        summaries = model.links
        letGo = model.letGoLinks
        var controller: UInt16?, sorted = true, last = Int64.min
        for i in summaries.indices {
            let link = summaries[i]
            let start = link.start.timestamp.nanoseconds
            if controller == nil { controller = link.controller }
            if link.controller != controller || start < last { sorted = false; break }
            if i % Self.sparseStride == 0 { sparseStarts.append(start) }
            last = start
        }
        if sorted, let controller {
            inOrder = controller
            return
        }
        sparseStarts = []
        for i in summaries.indices {
            let link = summaries[i]
            kept[link.controller, default: []].append((link.start.timestamp.nanoseconds, Int32(i)))
        }
        for key in kept.keys { kept[key]!.sort { ($0.start, $0.index) < ($1.start, $1.index) } }
    }

    /// With `inOrder`: the first summary that started at or after `time`, found from `sparseStarts` then read
    /// in order.
    private func firstInOrder(startingAtOrAfter time: Int64) -> Int {
        let block = sparseStarts.partitioningIndex { $0 >= time }
        guard block > 0 else { return 0 }
        var i = (block - 1) * Self.sparseStride
        let end = Swift.min(summaries.count, block * Self.sparseStride)
        while i < end, summaries[i].start.timestamp.nanoseconds < time { i += 1 }
        return i
    }

    /// The links of `controller` that started at or after `from` and before `until`, in id order.
    public func started(controller: UInt16, from: Int64, until: Int64) -> [Started] {
        var found: [Started] = []
        forEachStarted(controller: controller, from: from, until: until) { found.append($0) }
        return found.sorted { $0.id < $1.id }
    }

    /// `started`'s links in no particular order, none copied: a scan left on for hours saw hundreds of thousands.
    public func forEachStarted(controller: UInt16, from: Int64, until: Int64, _ body: (Started) -> Void) {
        if inOrder == controller {
            var i = firstInOrder(startingAtOrAfter: from)
            while i < summaries.count {
                let link = summaries[i]
                let start = link.start.timestamp.nanoseconds
                guard start < until else { break }
                body(Started(link, start: start, index: i))
                i += 1
            }
        } else if let list = kept[controller] {
            var i = list.partitioningIndex { $0.start >= from }
            while i < list.count, list[i].start < until {
                let index = Int(list[i].index)
                let link = summaries[index]
                body(Started(link, start: list[i].start, index: index))
                i += 1
            }
        }
        for link in letGo(controller: controller, from: from, until: until) {
            body(Started(id: Int(link.id), start: link.start.nanoseconds, isAppLE: link.isAppLE, summary: nil))
        }
    }

    /// Whether a link of `controller` started at or after `from` and at or before `through`.
    public func any(controller: UInt16, from: Int64, through: Int64) -> Bool {
        if inOrder == controller {
            let i = firstInOrder(startingAtOrAfter: from)
            if i < summaries.count, summaries[i].start.timestamp.nanoseconds <= through { return true }
        } else if let list = kept[controller] {
            let i = list.partitioningIndex { $0.start >= from }
            if i < list.count, list[i].start <= through { return true }
        }
        return !letGo(controller: controller, from: from, until: through.plusSaturating(1)).isEmpty
    }

    /// The let-go links of `controller` that started in `from..<until` (the model keeps them by controller,
    /// start and id).
    private func letGo(controller: UInt16, from: Int64, until: Int64) -> ArraySlice<LetGoLink> {
        func first(at t: Int64) -> Int { letGo.partitioningIndex { ($0.controller, $0.start.nanoseconds) >= (controller, t) } }
        let lower = first(at: from)
        return letGo[lower..<max(lower, first(at: until))]
    }
}

extension CaptureModel {
    /// Every link by controller and start (`LinkStarts`), let go or kept: what rules read of links that came up
    /// during a span.
    public var linkStarts: LinkStarts { LinkStarts(self) }
}
