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

    /// Whether judged links stay in the model (slim). A report that reads no link once judged (`btlens devices`:
    /// advertisers and scans only) lets them go, so memory does not grow with the number of finished links at all.
    public let keepsJudged: Bool
    /// Judged links let go (`keepsJudged` false): not in the model's connections.
    public internal(set) var letGo = 0
    /// Judged links are let go in batches of at least this many, so that dropping them from the front of the
    /// finished links costs little per link.
    public let letGoBatch: Int
    public static let defaultLetGoBatch = 4096

    public init(window: Int = LinkRetirement.defaultWindow, keepsJudged: Bool = true,
                letGoBatch: Int = LinkRetirement.defaultLetGoBatch, judge: @escaping (Connection, _ kept: Bool) -> Void) {
        self.window = max(1, window)
        self.keepsJudged = keepsJudged
        self.letGoBatch = max(1, letGoBatch)
        self.judge = judge
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
        if !retirement.keepsJudged && retiring.next >= retirement.letGoBatch { letGoJudged(retirement) }
    }

    /// Drops the judged links from the finished ones (nothing will read them) and renumbers what points into them.
    mutating func letGoJudged(_ retirement: LinkRetirement) {
        let n = retiring.next
        finished.removeFirst(n)
        retiring.next = 0
        retiring.discoverers = retiring.discoverers.compactMapValues { indices in
            let kept = indices.compactMap { $0 >= n ? $0 - n : nil }
            return kept.isEmpty ? nil : kept
        }
        retirement.letGo += n
    }

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
