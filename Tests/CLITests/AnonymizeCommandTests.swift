import Foundation
import Testing
import TestSupport

@Suite("btlens anonymize")
struct AnonymizeCommandTests {
    @Test("writes a btsnoop copy that audits the same; refuses to overwrite its input or to pick among several captures")
    func command() throws {
        let dir = try TemporaryDirectory()
        let original = try writeScenario("wasteful-central")
        let copy = dir.file("shared.btsnoop")
        let r = try CLI.run(["anonymize", original, copy])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("btlens: wrote \(copy): 1523 records, "))
        let before = try CLI.run(["audit", "--format", "json", "--fail-on", "never", original]).stdout
        let after = try CLI.run(["audit", "--format", "json", "--fail-on", "never", copy]).stdout
        let rules: (String) -> [String] = { text in text.split(separator: "\n").filter { $0.contains("\"rule\"") }.map(String.init) }
        #expect(rules(after) == rules(before))
        #expect(!rules(before).isEmpty)

        // - writes the same copy to standard output.
        let piped = try CLI.run(["anonymize", original, "-"], directory: dir.path)
        #expect(piped.status == 0 && piped.stderr.hasPrefix("btlens: wrote standard output: 1523 records, "))
        #expect(Array(piped.stdoutBytes) == (try TemporaryDirectory.contents(of: copy)))
        #expect(!FileManager.default.fileExists(atPath: dir.file("-")))

        #expect(try CLI.run(["anonymize", copy, copy]).status == 2)
        let zip = dir.file("two.zip")
        try ArchiveFixtures.write(zip, .zip, members: [("a.log", try TemporaryDirectory.contents(of: original)),
                                                       ("b.log", try TemporaryDirectory.contents(of: original))])
        let several = try CLI.run(["anonymize", zip, dir.file("x.btsnoop")])
        #expect(several.status == 2)
        #expect(several.stderr.contains("holds 2 captures"))
        // From a bug report, in one go.
        let gz = dir.file("capture.gz")
        try ArchiveFixtures.write(gz, .gzip, members: [("x", try TemporaryDirectory.contents(of: original))])
        #expect(try CLI.run(["anonymize", gz, dir.file("y.btsnoop")]).status == 0)
    }

    /// Addresses past the latest are set aside in TMPDIR (`BTLENS_LINK_WINDOW` keeps 16 in memory): the copy and
    /// `--check` are byte for byte those of a run holding every address; a TMPDIR it cannot use is a warning.
    @Test("addresses set aside in TMPDIR give the same copy and check; a TMPDIR it cannot use is a warning")
    func addressesSetAside() throws {
        let dir = try TemporaryDirectory()
        let original = dir.file("bench.btsnoop")
        let generated = try CLI.run(["bench", original, "--size", "3M"],
                                    executable: CLI.packageRoot.appendingPathComponent(".build/debug/btlens-scenario").path)
        #expect(generated.status == 0, "btlens-scenario bench: \(generated.stderr)")
        let scratch = dir.file("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        let held = try CLI.run(["anonymize", original, dir.file("held.btsnoop")])
        #expect(held.status == 0, "\(held.stderr)")
        // 93 links, most to a peer of its own: many segments of 16 set aside.
        let spilled = try CLI.run(["anonymize", original, dir.file("spilled.btsnoop")],
                                  environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": scratch])
        #expect(spilled.status == 0, "\(spilled.stderr)")
        #expect(spilled.stderr.replacingOccurrences(of: "spilled.btsnoop", with: "held.btsnoop") == held.stderr)
        let copy = try TemporaryDirectory.contents(of: dir.file("held.btsnoop"))
        let spilledCopy = try TemporaryDirectory.contents(of: dir.file("spilled.btsnoop"))
        #expect(!copy.isEmpty && spilledCopy == copy)
        let missing = try CLI.run(["anonymize", original, dir.file("missing.btsnoop")],
                                  environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": scratch + "/missing"])
        let missingCopy = try TemporaryDirectory.contents(of: dir.file("missing.btsnoop"))
        #expect(missing.status == 0 && missingCopy == copy)
        #expect(missing.stderr.hasPrefix("btlens: warning: ") && missing.stderr.contains("/missing")
                && missing.stderr.contains("kept in memory") && missing.stderr.split(separator: "\n").count == 2)
        // The check reads the original's addresses back from the file too.
        let checked = try CLI.run(["anonymize", "--check", original, dir.file("held.btsnoop")])
        let checkedSpilled = try CLI.run(["anonymize", "--check", original, dir.file("held.btsnoop")],
                                         environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": scratch])
        #expect(checked.status == 0 && checkedSpilled.status == 0 && checkedSpilled.stderr == checked.stderr)
        let leaky = try CLI.run(["anonymize", "--check", original, original], environment: ["BTLENS_LINK_WINDOW": "1", "TMPDIR": scratch])
        let leakyHeld = try CLI.run(["anonymize", "--check", original, original])
        #expect(leaky.status == 1 && !leaky.stdout.isEmpty && leaky.stdout == leakyHeld.stdout)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "nothing left behind")
    }

    /// Pseudonyms given anew where one equalled an original address were given in a dictionary's order, which
    /// changes from run to run: a real capture's copy differed each time.
    @Test("the same copy on every run, for every real capture", arguments: RealCaptureFiles.all)
    func sameCopyEveryRun(name: String) throws {
        let dir = try TemporaryDirectory()
        var copies: [[UInt8]] = []
        for run in 0..<3 {
            let copy = dir.file("copy\(run).bin")
            let r = try CLI.run(["anonymize", RealCaptureFiles.path(name), copy])
            #expect(r.status == 0 || r.status == 2, "\(r.stderr)")  // 2: an archive of several captures
            guard r.status == 0 else { return }
            copies.append(try TemporaryDirectory.contents(of: copy))
        }
        #expect(!copies[0].isEmpty)
        #expect(copies.allSatisfy { $0 == copies[0] }, "\(name)")
    }

    @Test("--check: exit 0 when nothing of the original is in the copy, 1 and one line per identifier when something is; standard input read twice")
    func check() throws {
        let dir = try TemporaryDirectory()
        let original = try writeScenario("wasteful-central")
        let copy = dir.file("shared.btsnoop")
        #expect(try CLI.run(["anonymize", original, copy]).status == 0)
        let clean = try CLI.run(["anonymize", "--check", original, copy])
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
        #expect(clean.stdout.isEmpty)
        #expect(clean.stderr.contains("none of the identifiers of \(original) found"), "\(clean.stderr)")

        // The original itself holds all of them: exit 1, a line for each with its records.
        let leaky = try CLI.run(["anonymize", "--check", original, original])
        #expect(leaky.status == 1)
        let lines = leaky.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("address E1:7F:03:9A:42:42 in HCI byte order: records ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("name \"EnviroSense 42\" as is: record") }, "\(lines)")
        #expect(leaky.stderr.contains("found in"), "\(leaky.stderr)")

        // From standard input (set aside for the two readings): the same copy.
        let piped = dir.file("piped.btsnoop")
        let fromStdin = try CLI.run(["anonymize", "-", piped], stdin: try TemporaryDirectory.contents(of: original))
        #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
        #expect(try TemporaryDirectory.contents(of: piped) == TemporaryDirectory.contents(of: copy))
        #expect(try CLI.run(["anonymize", "--check", "-", "-"]).status == 2)

        let help = try CLI.run(["help", "anonymize"])
        #expect(help.stdout.contains("--keep-vendor-logs") && help.stdout.contains("--check"))
        #expect(help.stdout.contains("may hold addresses, names and keys"))
    }
}
