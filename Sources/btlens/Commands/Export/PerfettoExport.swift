import ArgumentParser
/// `export --format perfetto` (issue 28).
enum PerfettoExport {
    static func run(_ command: ExportCommand) throws {
        throw ValidationError("--format perfetto is not implemented yet")
    }
}
