import Foundation
import Testing
import TestSupport

/// `btlens export --format jsonl`: the facts tables. The fleet test (Tests/Fleet, `make test-fleet`) queries them
/// over a generated farm with DuckDB; these check the command itself.
@Suite("btlens export --format jsonl")
struct ExportJSONLCommandTests {
    static let tables = ["captures", "connections", "phases", "scans", "advertisers", "att_series", "findings", "energy"]

    static func rows(_ directory: String, _ table: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: directory + "/" + table + ".jsonl", encoding: .utf8)
        return try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Every row of every table follows its schema (one validator run per table: the rows as a JSON array).
    static func validate(_ directory: String) throws {
        let schemas = try TemporaryDirectory()
        for table in tables {
            let lines = try String(contentsOfFile: directory + "/" + table + ".jsonl", encoding: .utf8).split(separator: "\n")
            let schema = try JSONSerialization.jsonObject(with: Data(contentsOf: SchemaValidation.packageRoot
                .appendingPathComponent("Sources/BTReport/Schemas/facts/\(table).schema.json")))
            let arraySchema = try schemas.write("\(table).array.schema.json", Array(try JSONSerialization.data(
                withJSONObject: ["type": "array", "items": schema])))
            try SchemaValidation.validate("[" + lines.joined(separator: ",") + "]", schema: arraySchema)
        }
        try SchemaValidation.validate(try String(contentsOfFile: directory + "/manifest.json", encoding: .utf8),
                                      schema: "Sources/BTReport/Schemas/facts/manifest.schema.json")
    }

    @Test("a directory of captures and foreign files: every file a captures row, tables follow their schemas, rows join")
    func directory() throws {
        let dir = try TemporaryDirectory()
        let wasteful = try writeScenario("wasteful-central")
        let input = dir.file("in")
        try FileManager.default.createDirectory(atPath: input + "/nested", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: wasteful, toPath: input + "/nested/wasteful.btsnoop")
        try FileManager.default.copyItem(atPath: try writeScenario("beacons"), toPath: input + "/beacons.btsnoop")
        try dir.write("in/notes.txt", Array("not a capture\n".utf8))
        try dir.write("in/.hidden", [1, 2, 3])
        let out = input + "/facts"  // inside the input: its tables are not read as captures
        let r = try CLI.run(["export", "--format", "jsonl", "--jobs", "2", "-o", out, input])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("exported 3 captures from 3 files (1 unreadable"), "\(r.stderr)")
        let again = try CLI.run(["export", "--format", "jsonl", "--incremental", "-o", out, input])
        #expect(again.stderr.contains("exported 0 captures from 3 files (3 already exported)"), "\(again.stderr)")
        try Self.validate(out)

        let captures = try Self.rows(out, "captures")
        #expect(Set(captures.compactMap { $0["file"] as? String }) == [input + "/nested/wasteful.btsnoop", input + "/beacons.btsnoop", input + "/notes.txt"])
        let foreign = try #require(captures.first { ($0["file"] as? String)?.hasSuffix("notes.txt") == true })
        #expect((foreign["error"] as? String)?.contains("not a Bluetooth capture") == true)
        let good = try #require(captures.first { ($0["file"] as? String)?.hasSuffix("wasteful.btsnoop") == true })
        #expect(good["error"] is NSNull && good["format"] as? String == "btsnoop-h4")
        let sha = try #require(good["sha256"] as? String)
        #expect(sha.count == 64)

        // Findings are the audit's, and their rows carry the capture's sha256 and file.
        let audit = try CLI.run(["audit", "--format", "json", "--fail-on", "never", wasteful])
        let auditJSON = try #require(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [String: Any])
        let auditFindings = try #require(auditJSON["findings"] as? [[String: Any]])
        let findings = try Self.rows(out, "findings").filter { $0["sha256"] as? String == sha }
        #expect(findings.count == auditFindings.count && !findings.isEmpty)
        #expect(Set(findings.compactMap { $0["fingerprint"] as? String }) == Set(auditFindings.compactMap { $0["fingerprint"] as? String }))
        for f in findings {
            let records = try #require(f["record_numbers"] as? [Int])
            let offsets = try #require(f["byte_offsets"] as? [Int])
            #expect(records.count == offsets.count && records.first == f["record"] as? Int && offsets.first == f["byte_offset"] as? Int)
        }
        // The energy total is the captures row's radio charge; connections and their phases name the same links.
        let total = try #require(try Self.rows(out, "energy").first { $0["sha256"] as? String == sha && $0["activity"] as? String == "total" })
        #expect((total["phone_charge_mc"] as? NSNumber)?.doubleValue == (good["radio_charge_mc"] as? NSNumber)?.doubleValue)
        let connections = Set(try Self.rows(out, "connections").filter { $0["sha256"] as? String == sha }.compactMap { $0["id"] as? Int })
        let phased = Set(try Self.rows(out, "phases").filter { $0["sha256"] as? String == sha }.compactMap { $0["connection_id"] as? Int })
        #expect(!connections.isEmpty && phased.isSubset(of: connections))
        #expect(try Self.rows(out, "advertisers").contains { ($0["file"] as? String)?.hasSuffix("beacons.btsnoop") == true })

        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))) as? [String: Any])
        #expect(manifest["schema_version"] as? Int == 1)
        #expect(((manifest["tables"] as? [String: Any])?["captures"] as? [String: Any])?["rows"] as? Int == 3)
    }

    @Test("--incremental skips files already exported by sha256 and appends the new ones")
    func incremental() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("a"), withIntermediateDirectories: true)
        let first = try dir.write("a/one.btsnoop", Array(try Data(contentsOf: URL(fileURLWithPath: try writeScenario("tidy-central")))))
        let out = dir.file("facts")
        #expect(try CLI.run(["export", "--format", "jsonl", "-o", out, dir.file("a")]).status == 0)
        // The same bytes under another name are skipped too; a new capture is appended.
        try FileManager.default.copyItem(atPath: first, toPath: dir.file("a/copy.btsnoop"))
        try FileManager.default.copyItem(atPath: try writeScenario("heart-rate-session"), toPath: dir.file("a/two.btsnoop"))
        let r = try CLI.run(["export", "--format", "jsonl", "--incremental", "-o", out, dir.file("a")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("exported 1 capture from 3 files (2 already exported)"), "\(r.stderr)")
        let files = try Self.rows(out, "captures").compactMap { ($0["file"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } }
        #expect(files.sorted() == ["one.btsnoop", "two.btsnoop"])
        try Self.validate(out)
        // Without --incremental the tables are written afresh.
        #expect(try CLI.run(["export", "--format", "jsonl", "-o", out, first]).status == 0)
        #expect(try Self.rows(out, "captures").count == 1)
    }

    @Test("usage and input errors: standard input, a missing path (the rest exported, exit 3), -o a file, --jobs 0")
    func errors() throws {
        let dir = try TemporaryDirectory()
        let capture = try writeScenario("tidy-central")
        let stdin = try CLI.run(["export", "--format", "jsonl", "-o", dir.file("f"), "-"])
        #expect(stdin.status == 2 && stdin.stderr.contains("not standard input"), "\(stdin.stderr)")
        let missing = try CLI.run(["export", "--format", "jsonl", "-o", dir.file("f"), capture, dir.file("nope.btsnoop")])
        #expect(missing.status == 3 && missing.stderr.contains("nope.btsnoop: No such file or directory"), "\(missing.stderr)")
        #expect(try Self.rows(dir.file("f"), "captures").count == 1)
        let file = try dir.write("plain", [0])
        let notDirectory = try CLI.run(["export", "--format", "jsonl", "-o", file, capture])
        #expect(notDirectory.status == 2 && notDirectory.stderr.contains("not a directory"), "\(notDirectory.stderr)")
        #expect(try CLI.run(["export", "--format", "jsonl", "--jobs", "0", "-o", dir.file("g"), capture]).status == 2)
    }
}
