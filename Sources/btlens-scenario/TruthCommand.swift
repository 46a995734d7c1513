import ArgumentParser
import BTScenario
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `truth --seed N [--format F] OUTPUT`: a randomised ground-truth capture and its manifest.
    struct Truth: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a randomised ground-truth capture for the audit and its manifest (OUTPUT.truth.json).",
            discussion: """
                From the seed, picks a random mix of episodes (connections, scans, the phone advertising) and writes \
                them as one capture to OUTPUT. Each episode plants a problem one of the audit's rules must report, or \
                a control: similar behaviour clearly on the fine side of the rule's threshold that it must not report. \
                Timings, periods, counts, GATT layouts (so attribute handles), addresses, ordering and jitter all \
                vary with the seed; the same seed always writes the same bytes.

                OUTPUT.truth.json lists them: {"seed", "capture", "episodes", "planted": [...], "controls": [...]}, \
                each item {"rule" (e.g. "poll-instead-of-notify"), "connection" (the connection's 1-based order in \
                the capture, as `btlens timeline` numbers it; null for scan-level items), "attribute_handle" (the \
                value handle when the item is about one attribute, else null), "start", "end" (the span of the \
                behaviour, Unix seconds), "note"}.

                Formats: btsnoop (btsnoop, H4), pcap (pcap, linktype 201 with direction), pklg (PacketLogger), or \
                any HCI format `write` accepts (\(ScenarioFormat.hciFormats.map(\.rawValue).joined(separator: ", "))). pcap-187 \
                records no direction, so a reader takes every ATT request as the host's: the manifest does not hold \
                for it.

                --stack draws from the catalogue of real phone-stack behaviour instead (Android's scan re-programming \
                with APCF filters per client, the OS's background scans and bonded reconnections, the phone's own GATT \
                server read by the peer, HID and subscribed links, a request pending at a supervision timeout, a \
                1M+Coded extended scan); its manifest adds "catalog": "stack" and, when a scan's duty cycle is \
                expected, "scan_duty": [{"start", "end", "duty_cycle" (0–1, all PHYs together), "note"}].

                Example: btlens-scenario truth --seed 7 /tmp/t7.btsnoop && btlens audit /tmp/t7.btsnoop
                """)

        @Option(help: "Seed (a non-negative integer).")
        var seed: UInt64

        @Flag(help: "Play episodes of real phone-stack behaviour (a catalogue of their own; the classic seeds are unchanged).")
        var stack = false

        @Option(help: "Capture format: btsnoop, pcap, pklg, or any format of write (air-272, air-256, …: the same scenario as a sniffer hears it; the scanning rules do not apply on the air).")
        var format: String = "btsnoop"

        @Option(help: ArgumentHelp("Play these episodes, in order (comma-separated), instead of the seed's choice; captures whose lists share a prefix share those bytes (two builds of one test).", valueName: "names"))
        var episodes: String?

        @Argument(help: "Output capture file; the manifest goes to OUTPUT.truth.json.")
        var output: String

        @OptionGroup var air: AirArguments

        static let shortFormats: [String: ScenarioFormat] = [
            "btsnoop": .btsnoopH4, "pcap": .pcapH4WithDirection, "pklg": .packetLoggerLE,
        ]

        func run() throws {
            let chosen = try Self.shortFormats[format] ?? ScenarioTool.format(named: format)
            let catalog: GroundTruth.Catalog = stack ? .stack : .classic
            let names = episodes.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
            if let unknown = names?.first(where: { !GroundTruth.episodeNames(catalog).contains($0) }) {
                throw ValidationError("unknown episode \(unknown); episodes: \(GroundTruth.episodeNames(catalog).joined(separator: ", "))")
            }
            let (scenario, manifest) = GroundTruth.scenario(seed: seed, catalog: catalog, episodes: names)
            try ScenarioTool.write(scenario, to: output, format: chosen, air: air.options())
            let path = output + ".truth.json"
            let name = output.split(separator: "/").last.map(String.init) ?? output
            try ScenarioTool.writeFile(Array(manifest.json(capture: name).utf8), to: path)
        }
    }
}
