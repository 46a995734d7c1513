import BTCapture
import BTWire

/// Randomised ground truth for the audit: from a seed, one capture made of several episodes — connections, scans,
/// the phone advertising — each planting a problem one of the rules must report or a control, similar behaviour
/// on the fine side of the rule's threshold (by a clear margin) that it must not report. The manifest lists both.
/// Every episode uses peers of its own, disconnects promptly, keeps 30–50 ms intervals and stops scanning before
/// it connects unless that is what it plants, so one episode's problem does not leak into another rule.
public enum GroundTruth {
    struct Episode: Sendable {
        let name: String
        let body: @Sendable (TruthBuilder) -> Void
    }

    static let catalog: [Episode] = [
        Episode(name: "poll-interleaved", body: PollEpisodes.interleaved),
        Episode(name: "poll-cached-earlier", body: PollEpisodes.cachedEarlier),
        Episode(name: "poll-cached-later", body: PollEpisodes.cachedLater),
        Episode(name: "poll-controls", body: PollEpisodes.controls),
        Episode(name: "poll-spec-mandated", body: PollEpisodes.specMandated),
        Episode(name: "discover-all-services", body: { DiscoveryEpisodes.allServices($0, leaveUnused: true) }),
        Episode(name: "discover-all-services-all-used", body: { DiscoveryEpisodes.allServices($0, leaveUnused: false) }),
        Episode(name: "discover-characteristics-unused", body: { DiscoveryEpisodes.characteristics($0, planted: true) }),
        Episode(name: "discover-characteristics-used", body: { DiscoveryEpisodes.characteristics($0, planted: false) }),
        Episode(name: "redundant-discovery", body: DiscoveryEpisodes.redundant),
        Episode(name: "duplicate-scans", body: ScanEpisodes.duplicates),
        Episode(name: "scan-after-connect", body: { ScanEpisodes.afterConnect($0, planted: true) }),
        Episode(name: "scan-stopped-on-connect", body: { ScanEpisodes.afterConnect($0, planted: false) }),
        Episode(name: "reconnect-by-scan", body: ScanEpisodes.reconnect),
        Episode(name: "lingering-idle", body: { LinkEpisodes.lingeringIdle($0, planted: true) }),
        Episode(name: "prompt-disconnect", body: { LinkEpisodes.lingeringIdle($0, planted: false) }),
        Episode(name: "lingering-after-unsubscribe", body: { LinkEpisodes.lingeringAfterUnsubscribe($0, planted: true) }),
        Episode(name: "disconnect-after-unsubscribe", body: { LinkEpisodes.lingeringAfterUnsubscribe($0, planted: false) }),
        Episode(name: "idle-fast-interval", body: { LinkEpisodes.idleFast($0, planted: true) }),
        Episode(name: "fast-then-relaxed", body: { LinkEpisodes.idleFast($0, planted: false) }),
        Episode(name: "fast-and-busy", body: LinkEpisodes.busyFast),
        Episode(name: "connection-churn", body: LinkEpisodes.churn),
        Episode(name: "spread-reconnections", body: LinkEpisodes.spreadReconnections),
        Episode(name: "att-timeout-silent", body: { LinkEpisodes.attTimeout($0, variant: 0) }),
        Episode(name: "att-timeout-notifying", body: { LinkEpisodes.attTimeout($0, variant: 1) }),
        Episode(name: "att-slow-response", body: { LinkEpisodes.attTimeout($0, variant: 2) }),
        Episode(name: "invalid-operation", body: LinkEpisodes.invalidOperation),
        Episode(name: "advertising-after-connect", body: { PeripheralEpisodes.advertising($0, planted: true) }),
        Episode(name: "advertising-stopped-by-connect", body: { PeripheralEpisodes.advertising($0, planted: false) }),
    ]

    /// Real phone-stack behaviour (`truth --stack`): Android's scan re-programming with APCF filters per client,
    /// the OS's background scans and connections, the phone's own GATT server, HID and subscribed links. A
    /// catalogue of its own, so the classic seeds keep their bytes.
    static let stackCatalog: [Episode] = [
        Episode(name: "android-scan-handover", body: { StackScanEpisodes.handover($0, planted: false) }),
        Episode(name: "android-scan-left-on", body: { StackScanEpisodes.handover($0, planted: true) }),
        Episode(name: "os-background-scan", body: StackScanEpisodes.background),
        Episode(name: "scan-churn", body: { StackScanEpisodes.churn($0, planted: true) }),
        Episode(name: "scan-restarts-not-churn", body: { StackScanEpisodes.churn($0, planted: false) }),
        Episode(name: "coded-extended-scan", body: StackScanEpisodes.codedExtendedScan),
        Episode(name: "phone-gatt-server-read", body: StackLinkEpisodes.phoneServer),
        Episode(name: "subscribed-idle-relaxed", body: { StackLinkEpisodes.subscribedIdle($0, planted: false) }),
        Episode(name: "unsubscribed-idle-relaxed", body: { StackLinkEpisodes.subscribedIdle($0, planted: true) }),
        Episode(name: "bonded-os-reconnects", body: StackLinkEpisodes.bondedReconnects),
        Episode(name: "hid-link", body: StackLinkEpisodes.hidLink),
        Episode(name: "request-pending-at-supervision-timeout", body: { StackLinkEpisodes.supervisionTimeout($0, planted: true) }),
        Episode(name: "supervision-timeout-nothing-pending", body: { StackLinkEpisodes.supervisionTimeout($0, planted: false) }),
        Episode(name: "scan-resumed-around-connections", body: StackScanEpisodes.restartsAroundConnections),
    ]

    /// Which set of episode kinds a seed draws from.
    public enum Catalog: String, Sendable, Codable, CaseIterable {
        /// The rules' planted problems and controls (the original 29 kinds).
        case classic
        /// Real phone-stack behaviour (`stackCatalog`).
        case stack

        var episodes: [Episode] { self == .classic ? GroundTruth.catalog : GroundTruth.stackCatalog }
        /// How many episodes a seed plays besides its two anchors (stack episodes are long: fewer).
        var extra: ClosedRange<Int> { self == .classic ? 4...8 : 2...4 }
    }

    /// The names of every episode kind of `catalog`.
    public static func episodeNames(_ catalog: Catalog) -> [String] { catalog.episodes.map(\.name) }

    /// The names of every classic episode kind.
    public static var episodeNames: [String] { episodeNames(.classic) }

    /// Which episodes seed `seed` plays, in order: two chosen by the seed itself (so consecutive seeds cover the
    /// catalogue in turn: seeds 1...15 play every classic kind at least once, seeds 1...7 every stack kind) and
    /// 4–8 more at random (2–4 for the stack catalogue), each kind at most once.
    static func episodes(_ b: TruthBuilder, seed: UInt64, catalog: Catalog) -> [Episode] {
        let all = catalog.episodes
        let n = UInt64(all.count)
        let anchors = Set([Int((2 * seed) % n), Int((2 * seed + 1) % n)])
        let rest = b.shuffled(Array(all.indices).filter { !anchors.contains($0) }).prefix(b.int(catalog.extra))
        return b.shuffled(Array(anchors).sorted() + rest).map { all[$0] }
    }

    /// - Parameter named: the episodes to play, in order, instead of the seed's choice (names from `episodeNames`).
    static func play(_ s: HCIScript, seed: UInt64, catalog: Catalog, named: [String]? = nil) -> GroundTruthManifest {
        let b = TruthBuilder(s)
        s.setUpController()
        let chosen = named.map { names in names.compactMap { name in catalog.episodes.first { $0.name == name } } }
            ?? episodes(b, seed: seed, catalog: catalog)
        for e in chosen {
            b.wait(1...5)
            s.note("ground truth: \(e.name)")
            e.body(b)
        }
        b.wait(0.5...2)
        return GroundTruthManifest(seed: seed, catalog: catalog, episodes: chosen.map(\.name), planted: b.planted,
                                   controls: b.controls, scanDuty: b.scanDuty)
    }

    /// The capture of `seed` and its manifest. The scenario plays the same packets at the same times every run,
    /// in any format. `episodes` (names from `episodeNames`) plays those, in that order, instead of the seed's
    /// choice: two lists that share a prefix give captures that share it byte for byte (two builds of one test
    /// that differ in what the second plays after it).
    public static func scenario(seed: UInt64, catalog: Catalog = .classic, episodes names: [String]? = nil)
        -> (Scenario, GroundTruthManifest) {
        let name = catalog == .classic ? "ground-truth-\(seed)" : "ground-truth-\(catalog.rawValue)-\(seed)"
        let scriptSeed = seed &* 0x9E37_79B9_7F4A_7C15 ^ (catalog == .classic ? classicSalt : stackSalt)
        // Played once without output for the manifest; the scenario plays it again for the capture.
        let dry = HCIScript(sink: DiscardingSink(), controller: SampleDevices.phoneController, seed: scriptSeed,
                            title: "btlens-scenario \(name)")
        let manifest = play(dry, seed: seed, catalog: catalog, named: names)
        let summary = catalog == .classic ? "randomised ground truth for the audit (seed \(seed))"
            : "randomised ground truth for the audit, real phone-stack behaviour (seed \(seed))"
        let scenario = Scenario(name: name, summary: summary, seed: scriptSeed,
                                body: { _ = play($0, seed: seed, catalog: catalog, named: names) })
        return (scenario, manifest)
    }

    /// Mixed into the script seed ("GTRUTH", "STACK"), so the catalogues' seeds differ.
    static let classicSalt: UInt64 = 0x4754_5255_5448
    static let stackSalt: UInt64 = 0x5354_4143_4B00
}

/// A sink that drops everything (a dry run that only collects the manifest).
final class DiscardingSink: PacketSink {
    func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {}
    func note(_ text: String, timestamp: Timestamp) throws {}
    func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws {}
    func finish() throws {}
}
