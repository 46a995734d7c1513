import Foundation
import Testing
import TestSupport

@Suite("btlens audit, rules, explain")
struct AuditCommandTests {
    static let wasteful = "samples/wasteful-central.btsnoop"
    static let clean = "samples/heart-rate-session.btsnoop"

    /// Runs btlens from the package root so sample paths are relative, as users type them.
    func run(_ arguments: [String], stdin: [UInt8]? = nil) throws -> CLI.Result {
        try CLI.run(arguments, stdin: stdin, directory: CLI.packageRoot.path)
    }

    @Test("exit 1 when a finding reaches --fail-on, 0 otherwise")
    func exitCodes() throws {
        #expect(try run(["audit", Self.wasteful]).status == 1)
        #expect(try run(["audit", Self.clean]).status == 0)
        #expect(try run(["audit", "--fail-on", "never", Self.wasteful]).status == 0)
        #expect(try run(["audit", "--fail-on", "error", Self.wasteful]).status == 1)  // the ATT timeout is an error
        #expect(try run(["audit", "--fail-on", "error", "--disable", "att-timeout", Self.wasteful]).status == 0)
        #expect(try run(["audit", "--fail-on", "sometimes", Self.wasteful]).status == 2)
        #expect(try run(["audit", "--disable", "BTL999", Self.wasteful]).status == 2)
        #expect(try run(["audit", "missing.btsnoop"]).status == 3)
    }

    @Test("--output into a device or a named pipe writes into it and leaves it what it was; a regular file is replaced")
    func outputIntoSpecialFiles() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("report.pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader drains the pipe while the audit writes into it.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [fifo]
        let out = Pipe()
        reader.standardOutput = out
        try reader.run()
        // One writer: the reader sees the end of the report when it closes the pipe.
        let result = try run(["audit", "--format", "json", "--fail-on", "never", "-o", fifo, Self.wasteful])
        #expect(result.status == 0, "\(result.stderr)")
        let read = out.fileHandleForReading.readDataToEndOfFile()
        reader.waitUntilExit()
        #expect(String(decoding: read, as: UTF8.self).contains("\"findings\""))
        var s = stat()
        #expect(lstat(fifo, &s) == 0 && (s.st_mode & S_IFMT) == S_IFIFO, "still a pipe")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["report.pipe"], "no partial file beside it")
        // /dev/null stays the device.
        #expect(try run(["audit", "--fail-on", "never", "-o", "/dev/null", Self.wasteful]).status == 0)
        #expect(stat("/dev/null", &s) == 0 && (s.st_mode & S_IFMT) == S_IFCHR)
        // A regular file is replaced whole.
        let file = directory.file("report.txt")
        try "old".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try run(["audit", "--fail-on", "never", "-o", file, Self.wasteful]).status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("connection #"))
        // A device that takes nothing (a full disk): one line naming it, the exit code of an unwritable output,
        // and what could not be written is not kept (it once piled up in memory, the whole report).
        for format in ["text", "json", "html"] {
            let full = try run(["audit", "--format", format, "--fail-on", "never", "-o", "/dev/full", Self.wasteful])
            #expect(full.status == 3, "\(format): \(full.stderr)")
            #expect(full.stderr.split(separator: "\n").filter { $0.contains("/dev/full: cannot write the report") }.count == 1)
        }
    }

    @Test("every format is produced; JSON and SARIF are valid against their schemas")
    func formats() throws {
        let json = try run(["audit", "--format", "json", "--fail-on", "never", Self.wasteful, Self.clean])
        #expect(json.status == 0)
        try SchemaValidation.validate(json.stdout, schema: "Sources/BTReport/Schemas/audit.schema.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(!findings.isEmpty)
        #expect(findings.allSatisfy { ($0["file"] as? String) == Self.wasteful })

        let sarif = try run(["audit", "--format", "sarif", Self.wasteful])
        let sarifSchema = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/schemas/sarif-schema-2.1.0.json").path
        if FileManager.default.fileExists(atPath: sarifSchema) {
            try SchemaValidation.validate(sarif.stdout, schema: sarifSchema)
        } else {
            FileHandle.standardError.write(Data("NOTE: \(sarifSchema) is absent: SARIF output not validated against the schema.\n".utf8))
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any])
        let runs = try #require(root["runs"] as? [[String: Any]])
        let results = try #require(runs.first?["results"] as? [[String: Any]])
        #expect(results.count == findings.count)
        let location = (results.first?["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any]
        let region = location?["region"] as? [String: Any]
        #expect((region?["byteOffset"] as? Int ?? -1) > 0)
        #expect((region?["byteLength"] as? Int ?? 0) > 24)

        let junit = try run(["audit", "--format", "junit", Self.wasteful, Self.clean])
        #expect(junit.stdout.hasPrefix("<?xml"))
        #expect(junit.stdout.components(separatedBy: "<testsuite ").count == 3)
        #expect(junit.stdout.contains("<failure type=\"error\""))

        let markdown = try run(["audit", "--format", "markdown", Self.wasteful])
        #expect(markdown.stdout.hasPrefix("## ❌ btlens audit"))
        #expect(markdown.stdout.contains("| severity | rule |"))
    }

    /// connection-churn: four links to one peer, then attempts that fail with 0x3E 400 ms after their create
    /// command; BTL009 reports them on no connection.
    @Test("HTML: failed attempts are a lane of their own, from create command to failure, with BTL009 on it")
    func htmlAttempts() throws {
        let r = try run(["audit", "--format", "html", "--fail-on", "never", "samples/connection-churn.btsnoop"])
        #expect(r.status == 0)
        // The timeline is drawn from the page's JSON blob: its lanes, their phases and the findings pinned on them.
        let blob = try #require(r.stdout.range(of: "id=\"btlens-data\">").flatMap { start in
            r.stdout.range(of: "</script>", range: start.upperBound..<r.stdout.endIndex).map { String(r.stdout[start.upperBound..<$0.lowerBound]) }
        })
        let data = try #require(try JSONSerialization.jsonObject(with: Data(blob.utf8)) as? [String: Any])
        let capture = try #require((data["captures"] as? [[String: Any]])?.first)
        let lanes = try #require(capture["lanes"] as? [[String: Any]])
        #expect(lanes.compactMap { $0["label"] as? String }.prefix(2) == ["scanning", "connection attempts"])
        let phases = (lanes[1]["phases"] as? [[Any]]) ?? []
        #expect(phases.contains { ($0[3] as? String) == "connection attempt to CE:55:81:02:6B:19 failed after 400 ms: Connection Failed to be Established (0x3e)" })
        #expect(phases.allSatisfy { ($0[2] as? String) == "attempt-failed" || ($0[2] as? String) == "attempt-cancelled" })
        let marks = (capture["findings"] as? [[String: Any]]) ?? []
        #expect(marks.contains { ($0["lane"] as? Int) == 1 && ($0["id"] as? String) == "BTL009" })
        #expect(!marks.contains { ($0["lane"] as? Int) == 0 && ($0["id"] as? String) == "BTL009" })
    }

    @Test("SARIF names a capture with spaces, #, ?, % and non-ASCII letters by a valid file URI")
    func sarifURI() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("capture 1 #2?100% ü[x].btsnoop")
        try FileManager.default.copyItem(atPath: CLI.packageRoot.appendingPathComponent(Self.wasteful).path, toPath: path)
        let sarif = try run(["audit", "--format", "sarif", path])
        #expect(sarif.status == 1)
        let sarifSchema = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/schemas/sarif-schema-2.1.0.json").path
        if FileManager.default.fileExists(atPath: sarifSchema) { try SchemaValidation.validate(sarif.stdout, schema: sarifSchema) }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any])
        let runObject = try #require((root["runs"] as? [[String: Any]])?.first)
        let artifacts = try #require(runObject["artifacts"] as? [[String: Any]])
        let uri = try #require((artifacts.first?["location"] as? [String: Any])?["uri"] as? String)
        #expect(uri.hasPrefix("file:///") && uri.hasSuffix("/capture%201%20%232%3F100%25%20%C3%BC%5Bx%5D.btsnoop"), "\(uri)")
        #expect(try #require(URL(string: uri)).path == path)
        let results = try #require(runObject["results"] as? [[String: Any]])
        #expect(!results.isEmpty)
        for result in results {
            let location = ((result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])?["artifactLocation"] as? [String: Any]
            #expect(location?["uri"] as? String == uri)
            #expect(location?["index"] as? Int == 0)
        }
    }

    @Test("an unreadable input fails the run in every format, as the exit code does")
    func unreadableStatus() throws {
        let dir = try TemporaryDirectory()
        let text = try dir.write("notes.btsnoop", Array("not a capture\n".utf8))
        let inputs = ["--fail-on", "never", Self.clean, text]

        let json = try run(["audit", "--format", "json"] + inputs)
        #expect(json.status == 3)
        try SchemaValidation.validate(json.stdout, schema: "Sources/BTReport/Schemas/audit.schema.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["failed"] as? Bool == true)
        #expect(object["status"] as? String == "unreadable")
        let passed = try run(["audit", "--format", "json"] + inputs.dropLast())
        #expect(passed.status == 0)
        let passedObject = try #require(try JSONSerialization.jsonObject(with: Data(passed.stdout.utf8)) as? [String: Any])
        #expect(passedObject["failed"] as? Bool == false)
        #expect(passedObject["status"] as? String == "passed")

        let textReport = try run(["audit", "--color", "never"] + inputs)
        #expect(textReport.status == 3)
        #expect(textReport.stdout.contains(" — failing (an input could not be read)\n"))

        let markdown = try run(["audit", "--format", "markdown"] + inputs)
        #expect(markdown.stdout.hasPrefix("## ❌ btlens audit"))
        #expect(markdown.stdout.contains("Incomplete: an input could not be read."))

        let html = try run(["audit", "--format", "html"] + inputs)
        #expect(html.status == 3)
        #expect(html.stdout.contains("Incomplete: an input could not be read."))

        let junit = try run(["audit", "--format", "junit"] + inputs)
        let suites = junit.stdout.components(separatedBy: "<testsuite ").dropFirst()
        let unreadableSuite = try #require(suites.first { $0.hasPrefix("name=\"\(text)\"") })
        #expect(unreadableSuite.contains("tests=\"1\" failures=\"0\" errors=\"1\""))
        #expect(unreadableSuite.components(separatedBy: "<testcase ").count == 2)  // only "read capture", in error
        #expect(!unreadableSuite.contains("BTL001"))

        let sarif = try run(["audit", "--format", "sarif"] + inputs)
        let sarifSchema = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/schemas/sarif-schema-2.1.0.json").path
        if FileManager.default.fileExists(atPath: sarifSchema) { try SchemaValidation.validate(sarif.stdout, schema: sarifSchema) }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(sarif.stdout.utf8)) as? [String: Any])
        let invocation = try #require(((root["runs"] as? [[String: Any]])?.first?["invocations"] as? [[String: Any]])?.first)
        #expect(invocation["executionSuccessful"] as? Bool == false)
        #expect((invocation["toolExecutionNotifications"] as? [Any])?.count == 1)
    }

    @Test("--output writes the report to a file")
    func outputFile() throws {
        let dir = try TemporaryDirectory()
        let r = try run(["audit", "--format", "json", "--output", dir.file("report.json"), Self.wasteful])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        let written = try TemporaryDirectory.contents(of: dir.file("report.json"))
        #expect(written.count > 100)
    }

    @Test("a configuration file disables rules, overrides severities and options")
    func configuration() throws {
        let dir = try TemporaryDirectory()
        let config = try dir.write("btlens.yml", Array("""
            fail_on: error
            disabled: [att-timeout]
            rules:
              BTL005:
                severity: error
                minimum_reads: 20
              lingering-connection:
                idle_seconds: 40
            """.utf8))
        let r = try run(["audit", "--config", config, "--format", "json", Self.wasteful])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let rules = (object["findings"] as? [[String: Any]] ?? []).compactMap { $0["rule"] as? String }
        #expect(!rules.contains("att-timeout"))
        #expect(!rules.contains("poll-instead-of-notify"))  // 9 reads < 20
        #expect(rules.filter { $0 == "lingering-connection" }.isEmpty)  // 35 s and 30 s idle < 40 s
        #expect(r.status == 0)  // no error left
        let bad = try dir.write("bad.yml", Array("rules:\n  BTL005:\n    nonsense: 3\n".utf8))
        let refused = try run(["audit", "--config", bad, Self.wasteful])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("no option 'nonsense'"))
    }

    @Test("a configuration file that is not YAML is refused on one line naming the place")
    func invalidYAML() throws {
        let dir = try TemporaryDirectory()
        let cases: [(String, String)] = [
            ("fail_on: error\nrules: [1, 2\n",
             "line 3, column 1: did not find expected ',' or ']' (while parsing a flow sequence at line 2, column 8)"),
            ("a: b: c\n", "line 1, column 5: mapping values are not allowed in this context"),
            ("fail_on: error\nfail_on: info\n", "line 1, column 1: duplicated key 'fail_on'"),
            ("fail_on: \u{01}x\n", "line 1, column 10: control characters are not allowed"),
        ]
        for (index, (yaml, cause)) in cases.enumerated() {
            let config = try dir.write("bad\(index).yml", Array(yaml.utf8))
            let r = try run(["audit", "--config", config, Self.clean])
            #expect(r.status == 2)
            #expect(r.stderr == "btlens: \(config): not valid YAML: \(cause)\n")
        }
    }

    @Test("a baseline accepts known findings, so only new ones fail")
    func baseline() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("baseline.json")
        #expect(try run(["audit", "--write-baseline", file, Self.wasteful]).status == 0)
        let again = try run(["audit", "--baseline", file, Self.wasteful])
        #expect(again.status == 0)
        #expect(again.stdout.contains("accepted by the baseline"))
        let other = try run(["audit", "--baseline", file, "samples/connection-churn.btsnoop"])
        #expect(other.status == 1)
    }

    @Test("a baseline written before fingerprint v2 matches nothing, and the warning says so")
    func legacyBaseline() throws {
        let dir = try TemporaryDirectory()
        // An entry as btlens wrote it before: the message without its digits.
        let legacy = "BTL002|hci0|Scanned  s with duplicate filtering off:  reports from  devices,  reports of devices already reported (. per second)."
        let file = try dir.write("old.json", Array(#"{"findings": [{"fingerprint": "\#(legacy)"}]}"#.utf8))
        let r = try run(["audit", "--baseline", file, Self.wasteful])
        #expect(r.status == 1)
        #expect(!r.stdout.contains("accepted by the baseline"))
        #expect(r.stderr == "btlens: \(file): warning: 1 entry uses the fingerprint format of btlens before v2 and matches "
            + "nothing (2 findings of this run that it accepted are reported again); write it again with --write-baseline\n")
    }

    @Test("refreshing a baseline keeps the findings it already accepted")
    func baselineRefresh() throws {
        let dir = try TemporaryDirectory()
        let first = dir.file("b1.json"), refreshed = dir.file("b2.json"), added = dir.file("b3.json")
        #expect(try run(["audit", "--write-baseline", first, Self.wasteful]).status == 0)
        #expect(try run(["audit", "--baseline", first, "--write-baseline", refreshed, Self.wasteful]).status == 0)
        let accepted = try TemporaryDirectory.contents(of: first)
        #expect(try TemporaryDirectory.contents(of: refreshed) == accepted)  // same findings, same order

        let churn = "samples/connection-churn.btsnoop"
        #expect(try run(["audit", "--baseline", first, "--write-baseline", added, Self.wasteful, churn]).status == 0)
        let fingerprints = { (path: String) throws -> Set<String> in
            let object = try JSONSerialization.jsonObject(with: Data(try TemporaryDirectory.contents(of: path))) as? [String: Any]
            return Set((object?["findings"] as? [[String: Any]] ?? []).compactMap { $0["fingerprint"] as? String })
        }
        let old = try fingerprints(first), now = try fingerprints(added)
        #expect(!old.isEmpty)
        #expect(old.isSubset(of: now) && now.count > old.count)
        #expect(try run(["audit", "--baseline", added, Self.wasteful, churn]).status == 0)
    }

    @Test("nothing audited exits 3: an empty directory, and no baseline is written from an unreadable input")
    func nothingAudited() throws {
        let dir = try TemporaryDirectory()
        let empty = try run(["audit", dir.path])
        #expect(empty.status == 3)
        #expect(empty.stderr == "btlens: no captures found in \(dir.path)\n")

        let file = dir.file("baseline.json")
        let unreadable = try run(["audit", "--write-baseline", file, Self.wasteful, dir.file("missing.btsnoop")])
        #expect(unreadable.status == 3)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(unreadable.stderr.contains("btlens: \(dir.file("missing.btsnoop")): No such file or directory"))
    }

    @Test("a directory is audited in parallel into one report")
    func directory() throws {
        let r = try run(["audit", "--jobs", "2", "--format", "json", "--fail-on", "never", "samples"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let captures = try #require(object["captures"] as? [[String: Any]])
        #expect(captures.count >= 8)
        #expect(!captures.contains { ($0["file"] as? String ?? "").hasSuffix("README.md") })
        let serial = try run(["audit", "--jobs", "1", "--format", "json", "--fail-on", "never", "samples"])
        #expect(serial.stdout == r.stdout)  // deterministic whatever the parallelism
    }

    @Test("rules lists the catalogue; explain prints a rule's documentation")
    func catalogue() throws {
        let rules = try run(["rules"])
        #expect(rules.status == 0)
        #expect(rules.stdout.split(separator: "\n").filter { $0.hasPrefix("BTL") }.count == 14)
        let explain = try run(["explain", "BTL005"])
        #expect(explain.stdout.contains("poll-instead-of-notify"))
        #expect(explain.stdout.contains("CoreBluetooth"))
        #expect(explain.stdout.contains("Android"))
        #expect(try run(["explain", "no-such-rule"]).status == 2)
    }
}
