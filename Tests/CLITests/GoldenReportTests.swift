import Foundation
import Testing
import TestSupport

/// Every audit output format, byte for byte, on two samples. `UPDATE_GOLDEN=1 swift test --filter Golden` rewrites
/// the files after a deliberate change; review the diff before committing.
@Suite("golden audit reports")
struct GoldenReportTests {
    static let golden = CLI.packageRoot.appendingPathComponent("Tests/CLITests/Golden")
    static let inputs = ["samples/wasteful-central.btsnoop", "samples/heart-rate-session.btsnoop", "samples/peripheral-role.btsnoop"]

    @Test("format", arguments: [("text", "txt"), ("json", "json"), ("sarif", "sarif"), ("junit", "xml"), ("markdown", "md"), ("html", "html")])
    func format(_ format: String, _ ext: String) throws {
        let r = try CLI.run(["audit", "--format", format, "--color", "never"] + Self.inputs, directory: CLI.packageRoot.path)
        #expect(r.status == 1)
        let file = Self.golden.appendingPathComponent("audit.\(ext)")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try r.stdout.write(to: file, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(r.stdout == expected, "audit --format \(format) differs from Tests/CLITests/Golden/audit.\(ext)")
    }

    @Test("the golden SARIF and JSON reports are valid against their schemas")
    func goldenSchemas() throws {
        try SchemaValidation.validate(try String(contentsOf: Self.golden.appendingPathComponent("audit.json"), encoding: .utf8),
                                      schema: "Sources/BTReport/Schemas/audit.schema.json")
        let sarifSchema = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/schemas/sarif-schema-2.1.0.json").path
        guard FileManager.default.fileExists(atPath: sarifSchema) else {
            FileHandle.standardError.write(Data("NOTE: \(sarifSchema) is absent: the golden SARIF not validated against the schema.\n".utf8))
            return
        }
        try SchemaValidation.validate(try String(contentsOf: Self.golden.appendingPathComponent("audit.sarif"), encoding: .utf8),
                                      schema: sarifSchema)
    }

    @Test("timeline and gatt text", arguments: [("timeline", "timeline.txt"), ("gatt", "gatt.txt")])
    func tracking(_ command: String, _ name: String) throws {
        let r = try CLI.run([command, "samples/heart-rate-session.btsnoop"], directory: CLI.packageRoot.path)
        #expect(r.status == 0)
        let file = Self.golden.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try r.stdout.write(to: file, atomically: true, encoding: .utf8)
        }
        #expect(r.stdout == (try String(contentsOf: file, encoding: .utf8)))
    }
}
