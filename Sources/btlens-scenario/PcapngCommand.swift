import ArgumentParser
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `pcapng IN OUT`: a classic pcap rewritten as pcapng, optionally as several interfaces that each recorded it.
    struct Pcapng: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rewrite a classic pcap as pcapng, as one or more capture interfaces that each recorded it.",
            discussion: """
                Interface k sees every packet k × 300 µs later; on an nRF Sniffer v3 capture (linktype 272) its \
                firmware clock runs k × 123.456789 s ahead, as a second dongle's would. Used for btlens's pcapng \
                tests and fuzz seeds.

                Example: btlens-scenario write heart-rate-session hr.pcap --format air-272 && \
                btlens-scenario pcapng hr.pcap two-sniffers.pcapng --interfaces 2
                """)

        @Argument(help: "The classic pcap to read.")
        var input: String
        @Argument(help: "The pcapng to write.")
        var output: String
        @Option(help: "How many interfaces each record is written on (1–16).")
        var interfaces = 1

        func run() throws {
            guard (1...16).contains(interfaces) else { throw ToolError.usage("--interfaces must be 1 to 16") }
            let bytes: [UInt8]
            do {
                bytes = try PcapngConversion.convert(try Self.read(input), interfaces: interfaces)
            } catch let error as PcapngConversion.ConversionError {
                throw ToolError.io("\(input): \(error)")
            }
            try ScenarioTool.writeFile(bytes, to: output)
        }

        static func read(_ path: String) throws -> [UInt8] {
            guard let file = fopen(path, "rb") else { throw ToolError.io("\(path): \(String(cString: strerror(errno)))") }
            defer { fclose(file) }
            var out: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = fread(&chunk, 1, chunk.count, file)
                out += chunk.prefix(n)
                if n < chunk.count { break }
            }
            guard ferror(file) == 0 else { throw ToolError.io("\(path): read error") }
            return out
        }
    }
}
