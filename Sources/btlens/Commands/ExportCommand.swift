import ArgumentParser

/// `btlens export`: the capture as data for other tools. Each format lives in its own file under Export/
/// (a Perfetto trace for people, JSON Lines tables for fleets).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export captures for other tools: a Perfetto trace, or JSON Lines facts tables for fleets.",
        discussion: """
            --format perfetto writes one Perfetto trace (open it in the Perfetto UI). \
            --format jsonl writes one JSON Lines file per table into the -o directory.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case perfetto
        case jsonl
    }

    @Option(name: .long, help: "perfetto or jsonl.")
    var format: Format

    @Option(name: [.short, .customLong("output")], help: "Output file (perfetto; - for standard output) or directory (jsonl).")
    var output: String

    @Argument(help: "Capture files or directories; - reads standard input.")
    var files: [String]

    @OptionGroup var anonymizing: AnonymizeOptions

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one capture file (or - for standard input)") }
    }

    func run() throws {
        switch format {
        case .perfetto: try PerfettoExport.run(self)
        case .jsonl: try JSONLExport.run(self)
        }
    }
}
