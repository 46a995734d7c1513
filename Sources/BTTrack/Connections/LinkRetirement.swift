import BTWire

/// Finished links judged while the capture is still being read (`btlens audit`), so that memory holds the open
/// links, a window of finished ones and slim judged ones, not every finished link's history.
///
/// A finished link stays whole until `window` later links have finished: until then a later link to the same
/// peer may still teach it the peer's GATT database (`GATTKnowledge`), exactly as when the whole capture is
/// judged at its end. The finished links held whole also stay within `wholeBudget` bytes of history: a long busy
/// link holds thousands of events (up to `TrackerOptions.maximumEventsPerConnection`, 1.4 MB), so a window
/// counted in links alone would grow with the capture when its links are long. Past the window (or the budget, the
/// newest finished link always staying whole) the oldest finished link is judged with what the capture showed so far
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
    /// The history the finished links held whole may cost at once (`Connection.historyBytes`): about 700 busy
    /// short links, or two long links at the event cap.
    public static let defaultWholeBudget = 4 << 20

    public let window: Int
    /// Bytes of history the finished links held whole may cost before the oldest is judged early.
    public let wholeBudget: Int
    /// Runs the per-link rules on a link; `kept` = it stays in the model (beyond `maximumConnections` it does
    /// not, and nothing else will read it).
    let judge: (Connection, _ kept: Bool) -> Void
    /// Links judged before the capture ended.
    @exclusivity(unchecked) public internal(set) var judged = 0
    /// Of those, links whose ATT traffic had no GATT database to name it when judged: a discovery of their peer
    /// later in the capture would have named it (learned later), so their findings may say less than a
    /// judgement at the capture's end would.
    @exclusivity(unchecked) public internal(set) var judgedWithoutDatabase = 0
    /// The most finished links held whole at once: at most `window` (what bounds memory).
    @exclusivity(unchecked) public internal(set) var mostWhole = 0
    /// The most scan boundaries remembered at once to decide which summaries to keep (`LinkInterest`): bounded by
    /// what the links not yet let go can look at, not by the capture's scans.
    @exclusivity(unchecked) public internal(set) var mostScanBoundaries = 0
    /// The most history they held at once (`Connection.historyBytes`): at most `wholeBudget` and one link's.
    @exclusivity(unchecked) public internal(set) var mostWholeBytes = 0

    /// What stays of a judged link (`Keeping`).
    public let keeping: Keeping
    /// Judged links let go (`keeping` not `.slim`): not in the model's connections.
    @exclusivity(unchecked) public internal(set) var letGo = 0
    /// Judged links are let go in batches of at least this many, so that dropping them from the front of the
    /// finished links costs little per link.
    public let letGoBatch: Int
    public static let defaultLetGoBatch = 4096

    /// With `Keeping.summary`: which summaries the capture-wide rules may read (nil: all of them).
    public let interest: LinkInterest?

    public init(window: Int = LinkRetirement.defaultWindow, wholeBudget: Int = LinkRetirement.defaultWholeBudget,
                keeping: Keeping = .slim, interest: LinkInterest? = nil,
                letGoBatch: Int = LinkRetirement.defaultLetGoBatch, judge: @escaping (Connection, _ kept: Bool) -> Void) {
        self.window = max(1, window)
        self.wholeBudget = max(0, wholeBudget)
        self.keeping = keeping
        self.interest = keeping == .summary ? interest : nil
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
    /// The history the finished links not yet judged hold (`Connection.historyBytes` when each finished).
    var wholeBytes = 0
    /// Finished links that discovered a database of their own, by peer (`GATTKnowledge.peerKey`), in close order.
    var discoverers: [BDAddr: [Int]] = [:]
    /// Identity addresses learnt so far (SMP Identity Address Information, Enhanced Connection Complete).
    var identityOf: [BDAddr: BDAddr] = [:]
    /// `finished[..<examined]` are judged links kept slim after their batch was let go (`Keeping.summary`).
    var examined = 0
    /// The summaries of the judged links let go (`Keeping.summary`), in close order: set aside in a file when the
    /// tracker has a directory for it (`TrackerOptions.scanSessionSpillDirectory`).
    var summaries: SetAsideArray<LinkSummary> = []
    /// Whether `summaries` was made (in a file, or with room reserved), at the first link let go.
    var summariesMade = false
    /// Of the judged links let go, those no capture-wide rule reads (`LinkInterest`), in close order.
    var letGoLinks: [LetGoLink] = []
    /// The app's first LE link let go after each scan boundary (its id), by controller and boundary.
    var firstAfterBoundary: [ScanEpoch: Int32] = [:]
    /// Scan boundaries that links not yet let go may look at (`LinkInterest`).
    var scanBoundaries = ScanBoundaries()
    /// How many boundaries make the tracker forget those no link can look at any more (`forgetScanBoundaries`).
    var scanBoundariesPruned = RetirementState.scanBoundariesKeptAtLeast
    static let scanBoundariesKeptAtLeast = 4096
    /// Set when the first link closed past the cap on finished links: no boundary after it is remembered.
    var boundariesReadUntil: Int64?
    /// Each remembered peer's latest link (by peer address, any controller or transport: a superset of how the
    /// rules group a peer's links), with its summary once it was let go and nothing else reads it: the peer may
    /// return (a reconnection reads it then), and when the peer is forgotten it is let go (`LetGoLink`).
    var peers = GenerationalMap<BDAddr, PeerLatest>(generation: RetirementState.peersRemembered)
    /// The newest start among `peers`' current generation, and among the one before (nanoseconds).
    var newestPeerStart: (current: Int64, previous: Int64) = (.min, .min)
    /// Links to peers that had another link (by id): read by the reconnection and churn rules, kept.
    var returning: Set<Int32> = []

    /// Peers remembered per generation (`GenerationalMap`): two generations are 4,096 peers at most (and their latest
    /// links' summaries, 0.5 MB), unless a generation's links all started within the churn window.
    static let peersRemembered = 2048

    struct ScanEpoch: Hashable {
        var controller: UInt16
        var boundary: Int64
    }

    struct PeerLatest {
        var id: Int32
        var start: Int64
        var summary: LinkSummary?
    }

    /// The summaries of the remembered peers' latest links (at the capture's end: they may still be read).
    var peersSummaries: [LinkSummary] { peers.values.compactMap(\.summary) }

    func key(_ c: Connection) -> BDAddr? {
        c.peerIdentityAddress ?? c.peerAddress.map { identityOf[$0] ?? $0 }
    }

    /// A link joined the finished ones at `index`.
    mutating func finished(_ c: Connection, at index: Int) {
        c.heldHistoryBytes = c.historyBytes
        wholeBytes += c.heldHistoryBytes
        if let address = c.peerAddress, let identity = c.peerIdentityAddress { identityOf[address] = identity }
        if !c.gatt.isEmpty && c.gatt.inheritedFrom == nil, let key = key(c) {
            discoverers[key, default: []].append(index)
        }
    }
}

extension ConnectionTracker {
    /// Judges the oldest finished links until at most the window's worth are left whole.
    mutating func judgeOldFinishedLinks(_ retirement: LinkRetirement, now: Int64) {
        retirement.mostWholeBytes = max(retirement.mostWholeBytes, retiring.wholeBytes)
        while finished.count - retiring.next > retirement.window
            || (retiring.wholeBytes > retirement.wholeBudget && finished.count - retiring.next > 1) {
            let c = finished[retiring.next]
            retiring.next += 1
            retiring.wholeBytes -= c.heldHistoryBytes
            judgeEarly(c, retirement)
        }
        retirement.mostWhole = max(retirement.mostWhole, finished.count - retiring.next)
        if retirement.keeping != .slim && retiring.next - retiring.examined >= retirement.letGoBatch {
            letGoJudged(retirement, now: now)
        }
    }

    /// Drops the judged links not yet examined from the finished ones — keeping their summaries, and the links
    /// still read, when `Keeping.summary` — and renumbers what points into the finished links.
    mutating func letGoJudged(_ retirement: LinkRetirement, now: Int64) {
        let from = retiring.examined, n = retiring.next
        let summarizing = retirement.keeping == .summary
        if summarizing && !retiring.summariesMade {
            retiring.summariesMade = true
            if let directory = options.scanSessionSpillDirectory {
                // Read back in order by the rules, a summary at a time: a window read at once.
                retiring.summaries = SetAsideArray(spillingTo: directory, kept: options.scanSessionsKept)
            } else {
                // Room for every link the model may keep, once: growing by doubling would copy the summaries and
                // hold up to twice their size; pages not written to are never resident. The links still open or
                // whole at the end join them (`CaptureModel.summarize`): room for those too.
                retiring.summaries.reserveCapacity(min(options.maximumConnections, Self.summariesReserved) + options.maximumOpenConnections)
            }
        }
        var survivors: [Connection] = []
        var moved = [Int?](repeating: nil, count: n - from)
        for i in from..<n {
            let c = finished[i]
            if summarizing && c.isReadAfterJudgement {
                moved[i - from] = from + survivors.count
                survivors.append(c)
            } else if summarizing {
                let summary = LinkSummary(c)
                if let interest = retirement.interest {
                    keep(summary, interest, now: now)
                } else {
                    retiring.summaries.append(summary)
                }
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
        c.classifyOwnership()
        retirement.judge(c, kept)
        retirement.judged += 1
        c.slim()
    }
}

// MARK: - What the capture-wide rules read (`LinkInterest`)

extension ConnectionTracker {
    /// Keeps a judged link's summary when a capture-wide rule may read it (`LinkInterest`), else its `LetGoLink`.
    /// `now`: the current record's time; every scan boundary up to it has been seen.
    mutating func keep(_ s: LinkSummary, _ interest: LinkInterest, now: Int64) {
        if readsSummary(s, interest, now: now) {
            retiring.summaries.append(s)
        } else if let peer = s.peerAddress, let latest = retiring.peers.find(peer), latest.value.id == Int32(clamping: s.id) {
            retiring.peers.update(peer, found: latest) { $0.summary = s }
        } else {
            retiring.letGoLinks.append(LetGoLink(s))
        }
    }

    /// Whether a capture-wide rule or the audit's notes may read `s` (`LinkInterest` lists the reasons).
    mutating func readsSummary(_ s: LinkSummary, _ interest: LinkInterest, now: Int64) -> Bool {
        // Named by the notes, judged by the advertising rule, or a failed attempt.
        if s.aclPacketsCutShort > 0 || s.hidesTraffic || s.missedUses > 0 || !s.ownership.isApp || s.role == .peripheral
            || s.disconnectReason == .connectionFailedToBeEstablished || interest.everyAppLink {
            return true
        }
        let id = Int32(clamping: s.id)
        // Let go now: its id is not looked up again.
        if retiring.returning.remove(id) != nil { return true }
        // Asked for around a scan's end (on any controller): until the time that could show it has come, it may be.
        let asked = (s.connectRequestedTime ?? s.start.timestamp).nanoseconds
        let askedUntil = asked.plusSaturating(interest.scanEndAroundRequest.after)
        if now < askedUntil { return true }
        if retiring.scanBoundaries.any(controller: nil, in: asked.minusSaturating(interest.scanEndAroundRequest.before)...askedUntil) {
            return true
        }
        // The scan rules read the app's LE links the capture saw start.
        guard s.transport == .le, !s.implicitStart else { return false }
        let start = s.start.timestamp.nanoseconds
        // Up when a scan started or ended.
        if let end = s.end?.timestamp.nanoseconds, end.minusSaturating(start) > 1,
           retiring.scanBoundaries.any(controller: s.controller, in: (start + 1)...(end - 1)) {
            return true
        }
        // The first to come up after a boundary: a scan starting there outlived it first.
        let epoch = RetirementState.ScanEpoch(
            controller: s.controller, boundary: retiring.scanBoundaries.latest(controller: s.controller, atOrBefore: start) ?? .min)
        if let first = retiring.firstAfterBoundary[epoch], first < id { return false }
        retiring.firstAfterBoundary[epoch] = id
        return true
    }

    /// A link to `peer` started (or turned out to be to `peer`): it is the peer's latest, and a peer seen before
    /// makes both links returning (`RetirementState.returning`).
    mutating func rememberPeer(_ c: Connection, _ peer: BDAddr, _ interest: LinkInterest) {
        let id = Int32(clamping: c.id), start = c.start.timestamp.nanoseconds
        let found = retiring.peers.find(peer), latest = found?.value
        if let latest, latest.id != id {
            retiring.returning.insert(id)
            if let summary = latest.summary {
                // Its latest link was let go, kept as the latest: a reconnection now reads it.
                retiring.summaries.append(summary)
            } else {
                retiring.returning.insert(latest.id)
            }
        }
        // The older generation is forgotten only once its newest link started a window ago: a link starting now
        // cannot be churn with it.
        let mayForget = retiring.newestPeerStart.previous < start.minusSaturating(interest.peerWindow)
        let newest = RetirementState.PeerLatest(id: max(id, latest?.id ?? .min), start: max(start, latest?.start ?? .min),
                                                summary: latest?.id == id ? latest?.summary : nil)
        if let forgotten = retiring.peers.set(peer, newest, found: found, mayForget: mayForget) {
            for entry in forgotten.values { if let s = entry.summary { retiring.letGoLinks.append(LetGoLink(s)) } }
            retiring.newestPeerStart = (newest.start, retiring.newestPeerStart.current)
        } else {
            retiring.newestPeerStart.current = max(retiring.newestPeerStart.current, newest.start)
        }
    }
}
