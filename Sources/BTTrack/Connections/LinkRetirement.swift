import BTWire

/// Finished links judged while the capture is still being read (`btlens audit`), so that memory holds the open
/// links, a window of finished ones and slim judged ones, not every finished link's history.
///
/// A finished link stays whole until `window` later links have finished: until then a later link to the same
/// peer may still teach it the peer's GATT database (`GATTKnowledge`), exactly as when the whole capture is
/// judged at its end. Past the window the oldest finished link is judged with what the capture showed so far
/// (its peer's discoveries before it and those among the links still whole), its ownership decided, the
/// per-link rules run on it (`judge`), and it is slimmed (`Connection.slim`). A capture with fewer finished
/// links than the window is judged exactly as it would be at its end.
///
/// The judge runs where links are tracked: on the link thread when there is one (`LinkFeed`), so it must only
/// touch its own state until the model is finished.
public final class LinkRetirement: @unchecked Sendable {
    /// Finished links kept whole. A link costs about 6 kB whole on a busy capture (its events, series and
    /// runs), so the window costs at most a few megabytes; real captures seldom hold more links than this.
    public static let defaultWindow = 1024

    public let window: Int
    /// Runs the per-link rules on a link; `kept` = it stays in the model (beyond `maximumConnections` it does
    /// not, and nothing else will read it).
    let judge: (Connection, _ kept: Bool) -> Void
    /// Links judged before the capture ended.
    public internal(set) var judged = 0
    /// Of those, links whose ATT traffic had no GATT database to name it when judged: a discovery of their peer
    /// later in the capture would have named it (learned later), so their findings may say less than a
    /// judgement at the capture's end would.
    public internal(set) var judgedWithoutDatabase = 0
    /// The most finished links held whole at once: at most `window` (what bounds memory).
    public internal(set) var mostWhole = 0

    /// What stays of a judged link (`Keeping`).
    public let keeping: Keeping
    /// Judged links let go (`keeping` not `.slim`): not in the model's connections.
    public internal(set) var letGo = 0
    /// Judged links are let go in batches of at least this many, so that dropping them from the front of the
    /// finished links costs little per link.
    public let letGoBatch: Int
    public static let defaultLetGoBatch = 4096

    public init(window: Int = LinkRetirement.defaultWindow, keeping: Keeping = .slim,
                letGoBatch: Int = LinkRetirement.defaultLetGoBatch, judge: @escaping (Connection, _ kept: Bool) -> Void) {
        self.window = max(1, window)
        self.keeping = keeping
        self.letGoBatch = max(1, letGoBatch)
        self.judge = judge
    }

    /// What stays of a judged link.
    public enum Keeping: Sendable {
        /// The slim link (`Connection.slim`): for reports that read every link (timeline, exports).
        case slim
        /// Its `LinkSummary` (`CaptureModel.links`), and the slim link only when a later link or rule may still
        /// read more of it (`Connection.isReadAfterJudgement`): `btlens audit`, whose capture-wide rules read
        /// summaries.
        case summary
        /// Nothing: a report that reads no link once judged (`btlens devices`: advertisers and scans only), or
        /// keeps what it prints of one in its own row when judging it (`btlens energy`, `EnergyLinkRows`).
        case nothing
    }
}

/// What `ConnectionTracker` keeps to judge finished links in order: the next one to judge, and where each
/// peer's discovered databases are among the finished links.
struct RetirementState {
    /// Index into `ConnectionTracker.finished` of the oldest link not yet judged.
    var next = 0
    /// Finished links that discovered a database of their own, by peer (`GATTKnowledge.peerKey`), in close order.
    var discoverers: [BDAddr: [Int]] = [:]
    /// Identity addresses learnt so far (SMP Identity Address Information, Enhanced Connection Complete).
    var identityOf: [BDAddr: BDAddr] = [:]
    /// `finished[..<examined]` are judged links kept slim after their batch was let go (`Keeping.summary`).
    var examined = 0
    /// The summaries of the judged links let go (`Keeping.summary`), in close order.
    var summaries: [LinkSummary] = []

    func key(_ c: Connection) -> BDAddr? {
        c.peerIdentityAddress ?? c.peerAddress.map { identityOf[$0] ?? $0 }
    }

    /// A link joined the finished ones at `index`.
    mutating func finished(_ c: Connection, at index: Int) {
        if let address = c.peerAddress, let identity = c.peerIdentityAddress { identityOf[address] = identity }
        if !c.gatt.isEmpty && c.gatt.inheritedFrom == nil, let key = key(c) {
            discoverers[key, default: []].append(index)
        }
    }
}

extension ConnectionTracker {
    /// Judges the oldest finished links until at most the window's worth are left whole.
    mutating func judgeOldFinishedLinks(_ retirement: LinkRetirement) {
        while finished.count - retiring.next > retirement.window {
            let c = finished[retiring.next]
            retiring.next += 1
            judgeEarly(c, retirement)
        }
        retirement.mostWhole = max(retirement.mostWhole, finished.count - retiring.next)
        if retirement.keeping != .slim && retiring.next - retiring.examined >= retirement.letGoBatch {
            letGoJudged(retirement)
        }
    }

    /// Drops the judged links not yet examined from the finished ones — keeping their summaries, and the links
    /// still read, when `Keeping.summary` — and renumbers what points into the finished links.
    mutating func letGoJudged(_ retirement: LinkRetirement) {
        let from = retiring.examined, n = retiring.next
        let summarizing = retirement.keeping == .summary
        if summarizing && retiring.summaries.capacity == 0 {
            // Room for every link the model may keep, once: growing by doubling would copy the summaries and
            // hold up to twice their size; pages not written to are never resident.
            retiring.summaries.reserveCapacity(min(options.maximumConnections, Self.summariesReserved))
        }
        var survivors: [Connection] = []
        var moved = [Int?](repeating: nil, count: n - from)
        for i in from..<n {
            let c = finished[i]
            if summarizing && c.isReadAfterJudgement {
                moved[i - from] = from + survivors.count
                survivors.append(c)
            } else if summarizing {
                retiring.summaries.append(LinkSummary(c))
            }
        }
        finished.replaceSubrange(from..<n, with: survivors)
        let gone = n - from - survivors.count
        retiring.next = from + survivors.count
        retiring.examined = retiring.next
        retiring.discoverers = retiring.discoverers.compactMapValues { indices in
            let kept = indices.compactMap { $0 < from ? $0 : $0 >= n ? $0 - gone : moved[$0 - from] }
            return kept.isEmpty ? nil : kept
        }
        retirement.letGo += gone
    }

    /// Summaries reserved at once at most (the default cap, 12.8 MB of address space): a larger cap grows past it.
    static let summariesReserved = 100_000

    mutating func judgeEarly(_ c: Connection, _ retirement: LinkRetirement, kept: Bool = true) {
        if c.gatt.isEmpty, c.firstATT != nil, c.air == nil, let key = retiring.key(c),
           let sources = retiring.discoverers[key] {
            // Its peer's discoveries so far: the same choice the capture's end makes among them.
            var links = sources.map { finished[$0] } + [c]
            links.sort { $0.id < $1.id }
            GATTKnowledge.share(&links, keys: links.map { _ in key })
        }
        if c.gatt.isEmpty && c.firstATT != nil { retirement.judgedWithoutDatabase += 1 }
        c.ownership = LinkOwnership.classify(c)
        retirement.judge(c, kept)
        retirement.judged += 1
        c.slim()
    }
}
