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

            jsonl: captures, connections, phases, scans, advertisers, att_series, findings and energy (TABLE.jsonl), \
            flat rows each beginning with schema_version, sha256 and file, and manifest.json (schema version, btlens \
            version, rows per table). Directories are read recursively, every file in them (one that is not a \
            capture is a captures row with its error); archives and bug reports as in audit. Files are read in \
            parallel (--jobs), with a progress line on a terminal and a summary on standard error. --incremental \
            appends, skipping files whose sha256 the captures table already holds. --format parquet does the same \
            and converts each table to TABLE.parquet with the duckdb command (which must be on PATH). Schemas: \
            Sources/BTReport/Schemas/facts/. Exit codes: 0 exported (unreadable captures are rows), 2 usage, \
            3 a named path does not exist or the tables could not be written.

            Examples:
              btlens export --format jsonl -o facts/ captures/
              btlens export --format jsonl --incremental --jobs 8 -o facts/ farm/build-412/
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case perfetto
        case jsonl
        case parquet
    }

    @Option(name: .long, help: "perfetto, jsonl or parquet.")
    var format: Format

    @Option(name: [.short, .customLong("output")], help: "Output file (perfetto; - for standard output) or directory (jsonl).")
    var output: String

    @Argument(help: "Capture files or directories; - reads standard input.")
    var files: [String]

    @OptionGroup var anonymizing: AnonymizeOptions

    @Option(name: .long, help: "jsonl, parquet: captures read in parallel (default: the number of CPUs).")
    var jobs: Int?

    @Flag(name: .long, help: "jsonl, parquet: append to the tables in -o, skipping files whose sha256 is already exported.")
    var incremental = false

    @Option(name: .long, help: "jsonl, parquet: a YAML radio profile (see btlens energy) that prices activities and findings.")
    var profile: String?

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one capture file (or - for standard input)") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() throws {
        switch format {
        case .perfetto: try PerfettoExport.run(self)
        case .jsonl, .parquet: try JSONLExport.run(self)
        }
    }
}
