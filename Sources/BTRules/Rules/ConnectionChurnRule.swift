import BTWire
import BTCapture
import BTTrack

/// BTL009: repeated connect/disconnect cycles to one peer, and failed connection attempts.
public struct ConnectionChurnRule: Rule {
    public static let description = RuleDescription(
        id: "BTL009", name: "connection-churn", title: "Repeated connections or failed connection attempts",
        category: .connection, defaultSeverity: .warning,
        rationale: "Every connection setup costs initiating time, often MTU exchange, encryption and (without caching) discovery. Reconnecting in a loop — or retrying connections that fail — multiplies that setup cost and usually hides a bug: a disconnect the app did not intend, a timeout set too short, or no back-off.",
        coreBluetooth: "keep one connection open for a burst of work instead of connecting per operation; on didFailToConnect or an unexpected didDisconnectPeripheral, retry with back-off rather than immediately.",
        android: "reuse one BluetoothGatt for a burst of work; after onConnectionStateChange with an error status (133/0x85, 8, 0x3E), close() the BluetoothGatt and retry with back-off, or use autoConnect = true.",
        options: [
            RuleOption("minimum_connections", 3, "Connections to one peer within the window that count as churn."),
            RuleOption("window_seconds", 120, unit: "s", "The window."),
            RuleOption("minimum_failures", 1, "Failed attempts that are reported."),
        ],
        fixtures: [.triggers("connection-churn", findings: 2), .clean("heart-rate-session"), .clean("wasteful-central")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] { collected(model, context: context) }

    /// Each finding as it is made: a capture of churning links makes one per episode.
    public func evaluate(_ model: CaptureModel, context: RuleContext, found: (Finding) -> Void) {
        evaluate(model, context: context, runLength: Self.runLength, found: found)
    }

    /// `evaluate`, the links sorted by peer `runLength` at a time when the model has a scratch directory.
    func evaluate(_ model: CaptureModel, context: RuleContext, runLength: Int, found: (Finding) -> Void) {
        let window = Int64(saturating: context.option("window_seconds") * 1e9)
        let minimum = Int(context.option("minimum_connections"))
        // A link that ended with 0x3E never got going: a failed attempt below, not a connection here.
        func counted(_ c: LinkSummary) -> BDAddr? {
            guard c.transport == .le, c.disconnectReason != .connectionFailedToBeEstablished, !c.implicitStart else { return nil }
            return c.peerAddress
        }
        // Each peer's links, found by sorting the app's LE links by peer (then in id order) in runs set aside on a
        // long capture: nothing is kept per peer across the capture (a soak test meets a new address per link, or
        // the same few peers thousands of times). The sort carries what the findings say of each link; only the
        // first link of an episode is read back. Episodes are found as a peer's links come, each holding only its
        // links within the window of its first not yet reported.
        let all = model.links
        var byPeer = SortedRuns<PeerLink>(directory: model.scratchDirectory, runLength: runLength)
        // The app's LE links that ended with 0x3E, for the failed attempts below.
        var failedLinks: [(at: RecordRef, status: HCIStatus, seconds: Double)] = []
        for (index, c) in all.enumerated() where c.ownership.isApp {
            if c.transport == .le && c.disconnectReason == .connectionFailedToBeEstablished, let end = c.end {
                failedLinks.append((end, .connectionFailedToBeEstablished,
                                    c.connectRequestedTime.map { Double(end.timestamp.nanoseconds - $0.nanoseconds) / 1e9 } ?? 0))
            }
            guard let peer = counted(c) else { continue }
            byPeer.append(PeerLink(c, peer: peer, index: index), order: { PeerLink.byPeer })
        }
        func report(_ span: ArraySlice<PeerLink>, _ repeats: inout RepeatNumbering) {
            let durations = span.compactMap { c in c.hasEnd ? c.end - c.start.timestamp.nanoseconds : nil }
            let mean = durations.isEmpty ? 0 : durations.reduce(0, +) / Int64(durations.count)
            let first = span[span.startIndex], final = span[span.endIndex - 1]
            let last = final.hasEnd ? Timestamp(nanoseconds: final.end) : final.start.timestamp
            let link = all[Int(first.index)], peer = BDAddr(rawValue: first.peer)
            found(Finding(
                rule: Self.description, controller: link.controller, connection: link, perPeer: true,
                discriminator: repeats.discriminator("connections", key: "\(peer)"), start: first.start.timestamp, end: last, records: span.map(\.start),
                message: "\(span.count) connections to \(peer) within \(RuleText.seconds(final.start.timestamp.nanoseconds - first.start.timestamp.nanoseconds)) (connections #\(span.map { String($0.id) }.joined(separator: ", #"))), each up for \(RuleText.seconds(mean)) on average.")
                    .costing(RuleCost.initiating(seconds: span.dropFirst().reduce(0) { sum, c in
                        sum + (c.wasRequested ? Double(c.start.timestamp.nanoseconds - c.requested) / 1e9 : 0)
                    }, context)))
        }
        var peer: UInt64?
        var episodes = Episodes()
        byPeer.drain(by: PeerLink.byPeer) { link in
            if link.peer != peer {
                if peer != nil { episodes.settle(window: window, minimum: minimum, complete: true, report) }
                peer = link.peer
                episodes = Episodes()
            }
            episodes.links.append(link)
            episodes.settle(window: window, minimum: minimum, complete: false, report)
        }
        if peer != nil { episodes.settle(window: window, minimum: minimum, complete: true, report) }
        // LE attempts that failed on the radio: refused or timed-out creates, and links that ended with 0x3E
        // (Connection Failed to be Established). An attempt the host withdrew (Create Connection Cancel, as
        // the OS's background connection does before re-issuing it) is not the radio failing; BR/EDR paging is
        // the OS's classic profiles, not the app's GATT connections.
        // On LE a connection attempt times out only by the host's cancel: one to a named peer that ran for seconds
        // before the host gave up (Android's connectGatt timeout) failed; one withdrawn within moments, or to the
        // accept list (a background connection the OS re-issues), did not.
        var failures: [(at: RecordRef, status: HCIStatus, seconds: Double)] = model.failedConnections
            .filter { f in
                guard f.transport == .le else { return false }
                guard f.cancelledByHost else { return true }
                return !f.toAcceptList && (f.attemptDuration.map { $0 >= Self.timedOutAttempt } ?? false)
            }
            .map { ($0.at, $0.cancelledByHost ? Self.cancelledStatus : $0.status, $0.attemptDuration?.seconds ?? 0) }
        failures += failedLinks
        failures.sort { $0.at.number < $1.at.number }
        if failures.count >= Int(context.option("minimum_failures")), let first = failures.first, let last = failures.last {
            let statuses = Dictionary(grouping: failures, by: \.status).map {
                $0.key == Self.cancelledStatus ? "timed out, cancelled by the host ×\($0.value.count)"
                    : "\($0.key) (\(Hex.u8($0.key.rawValue))) ×\($0.value.count)"
            }.sorted()
            found(Finding(
                rule: Self.description, controller: first.at.controller, discriminator: "failed-attempts",
                start: first.at.timestamp, end: last.at.timestamp,
                records: failures.prefix(8).map(\.at),
                message: "\(Plural.of(failures.count, "connection attempt")) failed: \(statuses.joined(separator: ", ")).")
                    .costing(RuleCost.initiating(seconds: failures.reduce(0) { $0 + $1.seconds }, context)))
        }
    }

    /// One of the app's LE links as the sort by peer carries it: what its peer's episodes and their findings read of
    /// it, and its place in id order (the first link of an episode is read back for the finding's connection).
    struct PeerLink {
        var peer: UInt64
        var start: RecordRef
        /// Nanoseconds; meaningful when `hasEnd`.
        var end: Int64
        /// When the connection was asked for (nanoseconds), when `wasRequested`.
        var requested: Int64
        var id: Int
        var index: Int32
        var hasEnd: Bool
        var wasRequested: Bool

        init(_ c: LinkSummary, peer: BDAddr, index: Int) {
            self.peer = peer.rawValue
            start = c.start
            end = c.end?.timestamp.nanoseconds ?? 0
            requested = c.connectRequestedTime?.nanoseconds ?? 0
            id = c.id
            self.index = Int32(index)
            hasEnd = c.end != nil
            wasRequested = c.connectRequestedTime != nil
        }

        /// By peer, then in id order (as the links come).
        static func byPeer(_ a: PeerLink, _ b: PeerLink) -> Bool { (a.peer, a.index) < (b.peer, b.index) }
    }

    /// Links sorted in memory at once before a run is set aside (72 bytes each).
    static let runLength = 1 << 13

    /// One peer's links from the first not yet in an episode, in id order, and its episodes' numbering.
    struct Episodes {
        var links: [PeerLink] = []
        var repeats = RepeatNumbering()

        /// Every episode the links decide: from the first link, those that start within `window` of it are one
        /// episode (`report`ed) when there are `minimum` of them, and the next starts after them; fewer, and the
        /// next starts at the second link. Undecided until a link past the window has come, or the links are
        /// `complete`.
        mutating func settle(window: Int64, minimum: Int, complete: Bool,
                             _ report: (ArraySlice<PeerLink>, inout RepeatNumbering) -> Void) {
            while let head = links.first {
                let past = links.dropFirst().firstIndex { $0.start.timestamp.nanoseconds - head.start.timestamp.nanoseconds > window }
                guard past != nil || complete else { return }
                let count = past ?? links.count
                if count >= minimum {
                    report(links[..<count], &repeats)
                    links.removeFirst(count)
                } else {
                    links.removeFirst()
                }
            }
        }
    }

    /// A host's cancel this long after its create command: the attempt timed out.
    static let timedOutAttempt: Duration = .seconds(3)
    /// How a timed-out attempt is grouped among the failures (the controller reports 0x02 for any cancel).
    static let cancelledStatus = HCIStatus.unknownConnectionIdentifier
}
