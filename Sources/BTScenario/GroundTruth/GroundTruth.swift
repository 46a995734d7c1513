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

    /// The names of every episode kind.
    public static var episodeNames: [String] { catalog.map(\.name) }

    /// Which episodes seed `seed` plays, in order: two chosen by the seed itself (so consecutive seeds cover the
    /// catalogue in turn: seeds 1...15 play every kind at least once) and 4–8 more at random, each kind at most once.
    static func episodes(_ b: TruthBuilder, seed: UInt64) -> [Episode] {
        let n = UInt64(catalog.count)
        let anchors = Set([Int((2 * seed) % n), Int((2 * seed + 1) % n)])
        let rest = b.shuffled(Array(catalog.indices).filter { !anchors.contains($0) }).prefix(b.int(4...8))
        return b.shuffled(Array(anchors).sorted() + rest).map { catalog[$0] }
    }

    /// - Parameter named: the episodes to play, in order, instead of the seed's choice (names from `episodeNames`).
    static func play(_ s: HCIScript, seed: UInt64, named: [String]? = nil) -> GroundTruthManifest {
        let b = TruthBuilder(s)
        s.setUpController()
        let chosen = named.map { names in names.compactMap { name in catalog.first { $0.name == name } } } ?? episodes(b, seed: seed)
        for e in chosen {
            b.wait(1...5)
            s.note("ground truth: \(e.name)")
            e.body(b)
        }
        b.wait(0.5...2)
        return GroundTruthManifest(seed: seed, episodes: chosen.map(\.name), planted: b.planted, controls: b.controls)
    }

    /// The capture of `seed` and its manifest. The scenario plays the same packets at the same times every run,
    /// in any format. `episodes` (names from `episodeNames`) plays those, in that order, instead of the seed's
    /// choice: two lists that share a prefix give captures that share it byte for byte (two builds of one test
    /// that differ in what the second plays after it).
    public static func scenario(seed: UInt64, episodes names: [String]? = nil) -> (Scenario, GroundTruthManifest) {
        let name = "ground-truth-\(seed)"
        let scriptSeed = seed &* 0x9E37_79B9_7F4A_7C15 ^ 0x4754_5255_5448
        // Played once without output for the manifest; the scenario plays it again for the capture.
        let dry = HCIScript(sink: DiscardingSink(), controller: SampleDevices.phoneController, seed: scriptSeed,
                            title: "btlens-scenario \(name)")
        let manifest = play(dry, seed: seed, named: names)
        let scenario = Scenario(name: name, summary: "randomised ground truth for the audit (seed \(seed))",
                                seed: scriptSeed, body: { _ = play($0, seed: seed, named: names) })
        return (scenario, manifest)
    }
}

/// A sink that drops everything (a dry run that only collects the manifest).
final class DiscardingSink: PacketSink {
    func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {}
    func note(_ text: String, timestamp: Timestamp) throws {}
    func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws {}
    func finish() throws {}
}
