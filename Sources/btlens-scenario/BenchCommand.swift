import ArgumentParser
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `bench OUTPUT --size 1G`: a large capture for throughput measurements.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a large realistic btsnoop capture for benchmarks (deterministic for a given size).")

        @Argument(help: "Output file.")
        var output: String

        @Option(help: "Approximate size: bytes, or with K, M, G (1024-based), e.g. 100M, 1G.")
        var size: String = "1G"

        @Flag(help: "Print the record mix and the generation speed to standard error.")
        var verbose = false

        func run() throws {
            guard let bytes = ByteCount.parse(size), bytes > 0 else {
                throw ToolError.usage("invalid size '\(size)' (use e.g. 100M or 1G)")
            }
            let started = Self.monotonicSeconds()
            let stats: BenchmarkStatistics
            do {
                stats = try BenchmarkGenerator.write(to: output, targetBytes: bytes)
            } catch {
                throw ToolError.io("\(output): \(error)")
            }
            guard verbose else { return }
            let seconds = max(Self.monotonicSeconds() - started, 1e-9)
            var stderr = StandardError()
            let rate = Double(stats.bytes) / seconds / Double(1 << 20)
            print("\(output): \(ByteCount.describe(stats.bytes)), \(stats.records) records "
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
