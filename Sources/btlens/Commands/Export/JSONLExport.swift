import ArgumentParser
/// `export --format jsonl` (issue 29).
enum JSONLExport {
    static func run(_ command: ExportCommand) throws {
        throw ValidationError("--format jsonl is not implemented yet")
    }
}
