import ArgumentParser
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `bench OUTPUT --size 1G`: a large capture for throughput measurements.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a large realistic btsnoop capture for benchmarks (deterministic for a given size).",
            discussion: """
                --format btsnoop-h4 (the default) writes the HCI stream itself. An air format (air-272, air-256, \
                air-251, air-ppi) writes what an air sniffer following the same stream hears: advertising PDUs for \
                the reports, each connection's CONNECT_IND and connection events (empty PDUs when idle), the ATT \
                traffic as LL data PDUs; the stream runs until the air capture reaches the size. The --air-* \
                options of `write` apply.
                """)

        @Argument(help: "Output file.")
        var output: String

        @Option(help: "Approximate size: bytes, or with K, M, G (1024-based), e.g. 100M, 1G.")
        var size: String = "1G"

        @Flag(help: "Print the record mix and the generation speed to standard error.")
        var verbose = false

        @Option(help: "btsnoop-h4, or an air format (air-272, air-256, air-251, air-ppi).")
        var format: String = ScenarioFormat.btsnoopH4.rawValue

        @Option(help: "links (many short links, the default), scans (many scan and advertising sessions and findings) or long-links (a few links with millions of ATT operations).")
        var shape: String = BenchShape.links.rawValue

        @OptionGroup var air: AirArguments

        func run() throws {
            guard let bytes = ByteCount.parse(size), bytes > 0 else {
                throw ToolError.usage("invalid size '\(size)' (use e.g. 100M or 1G)")
            }
            guard let shape = BenchShape(rawValue: shape) else {
                throw ToolError.usage("invalid shape '\(self.shape)' (use \(BenchShape.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            let chosen = try ScenarioTool.format(named: format)
            guard chosen == .btsnoopH4 || chosen.airContainer != nil else {
                throw ToolError.usage("bench writes btsnoop-h4 or an air format, not '\(format)'")
            }
            guard shape == .links || chosen == .btsnoopH4 else {
                throw ToolError.usage("--shape is for btsnoop-h4 captures")
            }
            let started = Self.monotonicSeconds()
            let stats: BenchmarkStatistics
            do {
                if let container = chosen.airContainer {
                    var options = air.options()
                    if chosen != .air272 { options.container = container }
                    stats = try BenchmarkGenerator.writeAir(to: output, targetBytes: bytes, options: options)
                } else {
                    stats = try BenchmarkGenerator.write(to: output, targetBytes: bytes, shape: shape)
                }
            } catch {
                throw ToolError.io("\(output): \(error)")
            }
            guard verbose else { return }
            let seconds = max(Self.monotonicSeconds() - started, 1e-9)
            var stderr = StandardError()
            let rate = Double(stats.bytes) / seconds / Double(1 << 20)
            print("\(output): \(ByteCount.describe(stats.bytes)), \(stats.records) HCI records "
                  + "(advertising \(Self.percent(stats.advertisingShare)), ATT \(Self.percent(stats.attShare)), "
                  + "other HCI \(Self.percent(1 - stats.advertisingShare - stats.attShare))), "
                  + "\(stats.connectionsOpened) connections; \(Int(rate)) MiB/s", to: &stderr)
        }

        /// For the speed report only; the capture itself never reads a clock.
        static func monotonicSeconds() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }

        static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
    }
}
