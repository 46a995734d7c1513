import Foundation

/// Validates JSON against a JSON Schema file with Python's `jsonschema` (installed by `make test`), the
/// reference validator, so the schemas in the repository are checked as users' tools will read them.
public enum SchemaValidation {
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Throws with the validator's message when `json` does not satisfy the schema at `schemaPath`
    /// (relative to the package root, or absolute).
    public static func validate(_ json: String, schema schemaPath: String) throws {
        let schema = schemaPath.hasPrefix("/") ? schemaPath : packageRoot.appendingPathComponent(schemaPath).path
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.validators.validator_for(schema)(schema).validate(json.load(sys.stdin))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, schema]
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(json.utf8))
        try input.fileHandleForWriting.close()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw Failure(description: String(decoding: message, as: UTF8.self).split(separator: "\n").suffix(3).joined(separator: "\n"))
        }
    }
}
