import Foundation
import Testing
import TestSupport

/// The progress line on standard error: drawn only on a terminal, for every command that reads captures, and
/// cleared before any message and before the report. `BTLENS_PROGRESS_UNTHROTTLED=1` draws at every step, so
/// the samples (small and quick) exercise it; on a terminal it is drawn through `script`, a pseudo-terminal.
@Suite("Progress on standard error")
struct ProgressTests {
    static let erase = "\r\u{1B}[K"
    static let unthrottled = ["BTLENS_PROGRESS_UNTHROTTLED": "1"]

    static func sample(_ name: String) -> String { CLI.packageRoot.appendingPathComponent("samples/\(name)").path }

    /// Every command that reads captures, over two samples (one for anonymize) and an output path for those
    /// that write one.
    static func commands(_ dir: TemporaryDirectory) -> [[String]] {
        let a = sample("heart-rate-session.btsnoop"), b = sample("wasteful-central.btsnoop")
        return [
            ["audit", a, b], ["stats", a, b], ["devices", a, b], ["energy", a, b], ["timeline", a, b], ["gatt", a, b],
            ["decode", a, b], ["diff", a, b], ["anonymize", a, dir.file("anonymized.btsnoop")],
            ["export", "--format", "perfetto", "-o", dir.file("trace.pftrace"), a, b],
            ["export", "--format", "jsonl", "-o", dir.file("tables"), a, b],
        ]
    }

    @Test("not a terminal: no progress from any command, even unthrottled")
    func notATerminal() throws {
        let dir = try TemporaryDirectory()
        for arguments in Self.commands(dir) {
            let r = try CLI.run(arguments, environment: Self.unthrottled)
            #expect(r.status == 0 || r.status == 1, "\(arguments): \(r.stderr)")
            #expect(!r.stderr.contains("\r") && !r.stderr.contains("\u{1B}"), "\(arguments): \(r.stderr.debugDescription)")
        }
    }

    /// Runs `arguments` with standard error on a pseudo-terminal (`script`) and standard output into a file:
    /// what the terminal showed, and the output.
    static func onTerminal(_ arguments: [String], _ dir: TemporaryDirectory) throws -> (terminal: String, stdout: Data) {
        let out = dir.file("stdout-\(UUID().uuidString)")
        let quoted = ([CLI.binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let r = try CLI.run(["-qefc", quoted.joined(separator: " ") + " > '\(out)'", "/dev/null"],
                            environment: unthrottled, executable: "/usr/bin/script")
        #expect(r.status == 0 || r.status == 1, "\(arguments): \(r.stderr)")
        return (r.stdout.replacingOccurrences(of: "\r\n", with: "\n"), try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// The terminal's messages each start on a line of their own, and the last progress line is cleared.
    static func expectTidy(_ terminal: String, _ arguments: [String]) {
        var rest = Substring(terminal)
        while let at = rest.range(of: "btlens: ") {
            let before = terminal[..<at.lowerBound]
            #expect(before.isEmpty || before.hasSuffix("\n") || before.hasSuffix(erase), "\(arguments): \(terminal.debugDescription)")
            rest = rest[at.upperBound...]
        }
        if let lastDraw = terminal.range(of: erase, options: .backwards) {
            let after = terminal[lastDraw.upperBound...]
            #expect(!after.contains("files,") && !after.contains("%"), "\(arguments): \(terminal.debugDescription)")
        }
    }

    @Test("on a terminal: every command draws its line, clears it, and writes the same output",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func onATerminal() throws {
        let dir = try TemporaryDirectory()
        for arguments in Self.commands(dir) where arguments[0] != "export" && arguments[0] != "anonymize" {
            let (terminal, stdout) = try Self.onTerminal(arguments, dir)
            // Two files: files done of two under the command's name.
            #expect(terminal.contains(Self.erase + arguments[0] + ": 0/2 files"), "\(arguments): \(terminal.debugDescription)")
            #expect(terminal.contains(Self.erase + arguments[0] + ": 1/2 files"), "\(arguments): \(terminal.debugDescription)")
            Self.expectTidy(terminal, arguments)
            #expect(stdout == (try CLI.run(arguments)).stdoutBytes, "\(arguments)")
        }
        // One capture: its path and the share read.
        let one = Self.sample("heart-rate-session.btsnoop")
        for arguments in [["audit", one], ["stats", one], ["anonymize", one, dir.file("one.btsnoop")]] {
            let (terminal, _) = try Self.onTerminal(arguments, dir)
            #expect(terminal.contains(Self.erase + one + ": 0%"), "\(arguments): \(terminal.debugDescription)")
            Self.expectTidy(terminal, arguments)
        }
        for arguments in [["export", "--format", "perfetto", "-o", dir.file("t.pftrace"), one, Self.sample("wasteful-central.btsnoop")],
                          ["export", "--format", "jsonl", "-o", dir.file("tables"), one, Self.sample("wasteful-central.btsnoop")]] {
            let (terminal, _) = try Self.onTerminal(arguments, dir)
            #expect(terminal.contains(Self.erase + "export: 1/2 files"), "\(arguments): \(terminal.debugDescription)")
            Self.expectTidy(terminal, arguments)
        }
    }

    @Test("a directory audit and a farm diff count their files; notes printed meanwhile start their own line",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func directories() throws {
        let dir = try TemporaryDirectory()
        for run in ["411", "412"] {
            try FileManager.default.createDirectory(atPath: dir.file(run), withIntermediateDirectories: true)
            for (test, sample) in [("Scan", "heart-rate-session.btsnoop"), ("Sync", "wasteful-central.btsnoop"),
                                   ("Poll", "tidy-central.btsnoop")] {
                try FileManager.default.copyItem(atPath: Self.sample(sample), toPath: dir.file("\(run)/\(test)-R5CT1-btsnoop_hci.log"))
            }
        }
        // A bug report's btsnooz log beside them: its notes come while the line is drawn.
        let log = try TemporaryDirectory.contents(of: Self.sample("heart-rate-session.btsnoop"))
        _ = try dir.write("411/btsnooz_hci.log", log)
        let audit = try Self.onTerminal(["audit", dir.file("411")], dir)
        #expect(audit.terminal.contains(Self.erase + "audit: 3/4 files"), "\(audit.terminal.debugDescription)")
        #expect(audit.terminal.contains("note: no full snoop log here"))
        Self.expectTidy(audit.terminal, ["audit"])
        let diff = try Self.onTerminal(["diff", dir.file("411"), dir.file("412")], dir)
        #expect(diff.terminal.contains(Self.erase + "diff: 6/7 files"), "\(diff.terminal.debugDescription)")
        Self.expectTidy(diff.terminal, ["diff"])
    }
}
