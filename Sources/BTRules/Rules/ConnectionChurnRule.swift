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
        let window = Int64(saturating: context.option("window_seconds") * 1e9)
        let minimum = Int(context.option("minimum_connections"))
        // A link that ended with 0x3E never got going: a failed attempt below, not a connection here.
        func counted(_ c: LinkSummary) -> BDAddr? {
            guard c.transport == .le, c.disconnectReason != .connectionFailedToBeEstablished, !c.implicitStart else { return nil }
            return c.peerAddress
        }
        // Links are gathered only for peers with enough of them: a capture of links to ever new addresses would
        // otherwise make a list per link. The links are read in order (a long capture's from a file) twice: to
        // count each peer's, then to find the episodes as they come, each peer holding only its links within the
        // window of its first not yet reported.
        let all = model.links
        var linkCount: [BDAddr: Int] = [:]
        for c in all where c.ownership.isApp {
            if let peer = counted(c) { linkCount[peer, default: 0] += 1 }
        }
        var pending: [BDAddr: Episodes] = [:]
        var order: [BDAddr] = []
        // The app's LE links that ended with 0x3E, for the failed attempts below.
        var failedLinks: [(at: RecordRef, status: HCIStatus, seconds: Double)] = []
        func report(_ span: ArraySlice<LinkSummary>, peer: BDAddr, _ repeats: inout RepeatNumbering) {
            let durations = span.compactMap { c in c.end.map { $0.timestamp.nanoseconds - c.start.timestamp.nanoseconds } }
            let mean = durations.isEmpty ? 0 : durations.reduce(0, +) / Int64(durations.count)
            let first = span[span.startIndex], final = span[span.endIndex - 1]
            let last = final.end ?? final.start
            found(Finding(
                rule: Self.description, controller: first.controller, connection: first, perPeer: true,
                discriminator: repeats.discriminator("connections", key: "\(peer)"), start: first.start.timestamp, end: last.timestamp, records: span.map(\.start),
                message: "\(span.count) connections to \(peer) within \(RuleText.seconds(final.start.timestamp.nanoseconds - first.start.timestamp.nanoseconds)) (connections #\(span.map { String($0.id) }.joined(separator: ", #"))), each up for \(RuleText.seconds(mean)) on average.")
                    .costing(RuleCost.initiating(seconds: span.dropFirst().reduce(0) { sum, c in
                        sum + (c.connectRequestedTime.map { Double(c.start.timestamp.nanoseconds - $0.nanoseconds) / 1e9 } ?? 0)
                    }, context)))
        }
        for c in all where c.ownership.isApp {
            if c.transport == .le && c.disconnectReason == .connectionFailedToBeEstablished, let end = c.end {
                failedLinks.append((end, .connectionFailedToBeEstablished,
                                    c.connectRequestedTime.map { Double(end.timestamp.nanoseconds - $0.nanoseconds) / 1e9 } ?? 0))
            }
            guard let peer = counted(c), linkCount[peer, default: 0] >= minimum else { continue }
            if pending[peer] == nil { order.append(peer) }
            pending[peer, default: Episodes()].links.append(c)
            pending[peer]!.settle(window: window, minimum: minimum, complete: false) { span, repeats in report(span, peer: peer, &repeats) }
        }
        for peer in order {
            pending[peer]?.settle(window: window, minimum: minimum, complete: true) { span, repeats in report(span, peer: peer, &repeats) }
        }
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

    /// One peer's links from the first not yet in an episode, in id order, and its episodes' numbering.
    struct Episodes {
        var links: [LinkSummary] = []
        var repeats = RepeatNumbering()

        /// Every episode the links decide: from the first link, those that start within `window` of it are one
        /// episode (`report`ed) when there are `minimum` of them, and the next starts after them; fewer, and the
        /// next starts at the second link. Undecided until a link past the window has come, or the links are
        /// `complete`.
        mutating func settle(window: Int64, minimum: Int, complete: Bool,
                             _ report: (ArraySlice<LinkSummary>, inout RepeatNumbering) -> Void) {
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
