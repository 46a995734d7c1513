import BTWire
import Foundation
import Synchronization
import TestSupport

/// What `OutputDigestTests` runs and records: for each input, every report command and format of the built
/// `btlens`, one TSV row with the sha256 of its standard output and standard error (normalised, see `normalised`)
/// and its exit code. The rows of a group of inputs live in `Tests/CLITests/OutputDigests/GROUP.tsv`.
enum OutputDigests {
    static let directory = CLI.packageRoot.appendingPathComponent("Tests/CLITests/OutputDigests")
    static let scenarioBinary = CLI.packageRoot.appendingPathComponent(".build/debug/btlens-scenario").path

    /// `UPDATE_OUTPUT_DIGESTS=1` (what `make output-digests` sets) rewrites the files instead of comparing.
    static var updating: Bool { ProcessInfo.processInfo.environment["UPDATE_OUTPUT_DIGESTS"] == "1" }
    /// `BTLENS_DIGEST_SAVE=DIR` saves every output under DIR/GROUP/INPUT/; otherwise only outputs that differ from
    /// the digests are saved, under .build/output-digests/.
    static let saveAll = ProcessInfo.processInfo.environment["BTLENS_DIGEST_SAVE"]
    static var saveDirectory: String {
        saveAll ?? CLI.packageRoot.appendingPathComponent(".build/output-digests").path
    }

    /// One command and format: what the row calls them, and the arguments before the input's path.
    struct Variant: Sendable {
        var command: String
        var format: String
        var arguments: [String]
        init(_ command: String, _ format: String, _ arguments: [String]) {
            self.command = command
            self.format = format
            self.arguments = arguments
        }
    }

    /// Every report btlens prints about one capture. Colour is off (it is anyway without a terminal, but the rows
    /// must not depend on how the tests are run). `decode` and `diff` are left out: decode's lines are the reader's
    /// and decoders' view, not a report, and diff's outputs are those of audit and energy on two captures.
    static let variants: [Variant] = [
        Variant("audit", "text", ["audit", "--color", "never"]),
        Variant("audit", "text-verbose", ["audit", "--verbose", "--color", "never"]),
        Variant("audit", "json", ["audit", "--format", "json"]),
        Variant("audit", "sarif", ["audit", "--format", "sarif"]),
        Variant("audit", "junit", ["audit", "--format", "junit"]),
        Variant("audit", "markdown", ["audit", "--format", "markdown"]),
        Variant("audit", "html", ["audit", "--format", "html"]),
        Variant("energy", "text", ["energy"]),
        Variant("energy", "text-full", ["energy", "--full"]),
        Variant("energy", "json", ["energy", "--json"]),
        Variant("timeline", "text", ["timeline", "--color", "never"]),
        Variant("timeline", "text-full", ["timeline", "--full", "--color", "never"]),
        Variant("timeline", "json", ["timeline", "--json"]),
        Variant("devices", "text", ["devices"]),
        Variant("devices", "json", ["devices", "--json"]),
        Variant("gatt", "text", ["gatt"]),
        Variant("gatt", "json", ["gatt", "--json"]),
        Variant("stats", "json", ["stats", "--json"]),
        Variant("export", "perfetto", ["export", "--format", "perfetto", "-o", "-"]),
    ]
    /// `export --format jsonl` writes its tables into a directory: a row for the run (format `jsonl`), then one
    /// per file written (`jsonl/TABLE.jsonl`, `jsonl/manifest.json`: the file's sha256 in the stdout column).
    static let jsonlArguments = ["export", "--format", "jsonl"]

    /// One capture to report on: its name in the rows, the directory the commands run in and the path they are
    /// given (relative to that directory, so no output depends on where the repository or ../shared is).
    /// `generate`: arguments of `btlens-scenario` that write it first (ground truth), else nil.
    struct Input: Sendable {
        var name: String
        var directory: String
        var argument: String
        var generate: [String]? = nil
    }

    /// One line of a digest file. `-` stands for no output (an empty standard error, a table file's).
    struct Row: Sendable {
        var input: String
        var command: String
        var format: String
        var stdout: String
        var stderr: String
        var exit: String
        /// The command line that printed it, for messages (not in the file).
        var invocation = ""

        var key: String { "\(input)\t\(command)\t\(format)" }
        var line: String { "\(key)\t\(stdout)\t\(stderr)\t\(exit)" }
        func sameDigests(_ other: Row) -> Bool { stdout == other.stdout && stderr == other.stderr && exit == other.exit }
    }

    static let header = "input\tcommand\tformat\tstdout_sha256\tstderr_sha256\texit"

    static func file(_ group: String) -> URL { directory.appendingPathComponent("\(group).tsv") }

    /// The rows of GROUP.tsv by key, in file order; nil when the file does not exist.
    static func read(_ group: String) throws -> [Row]? {
        guard FileManager.default.fileExists(atPath: file(group).path) else { return nil }
        return try String(contentsOf: file(group), encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") && $0 != Substring(header) }
            .map { line in
                let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard f.count == 6 else { throw DigestFileError(description: "\(file(group).path): malformed line '\(line)'") }
                return Row(input: f[0], command: f[1], format: f[2], stdout: f[3], stderr: f[4], exit: f[5])
            }
    }

    struct DigestFileError: Error, CustomStringConvertible {
        var description: String
    }

    static func write(_ group: String, rows: [Row], to url: URL) throws {
        let text = """
            # btlens output digests (\(group)): Tests/CLITests/OutputDigestTests.swift compares every row. Written by
            # `make output-digests` from the code before a change; rewrite only for a deliberate output change, and
            # say why in the commit message. stdout/stderr: sha256 of the normalised output (- for none).

            """ + ([header] + rows.map(\.line)).joined(separator: "\n") + "\n"
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    // MARK: - Running

    static func sha256(_ data: Data) -> String {
        var hash = SHA256()
        hash.update([UInt8](data))
        return hash.finalize()
    }

    /// The version `btlens --version` prints, which the reports name.
    static let version: String = {
        (try? CLI.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? ""
    }()

    /// Outputs as the rows hash them. Three things in btlens' outputs are not the capture's:
    /// - the version (audit JSON and SARIF `"version"`, the HTML footer "btlens V", the facts manifest's
    ///   `"btlens_version"`), replaced by VERSION only in those places so a release does not change every row;
    /// - the facts export's summary on standard error: its elapsed time and rates (" in 0.2 s (6.2 files/s,
    ///   0.5 MB/s)") become " in T s", and the temporary table directory becomes OUT.
    /// Paths are the inputs' relative ones as given (see `Input`). Nothing else varies (checked by running the whole
    /// set twice): no dates, no clock, no hash-order output.
    static func normalised(_ data: Data, outputDirectory: String? = nil) -> Data {
        guard !version.isEmpty, var text = String(data: data, encoding: .utf8) else { return data }
        for (from, to) in [("\"version\": \"\(version)\"", "\"version\": \"VERSION\""),
                           ("\"btlens_version\": \"\(version)\"", "\"btlens_version\": \"VERSION\""),
                           ("btlens \(version)", "btlens VERSION")] {
            text = text.replacingOccurrences(of: from, with: to)
        }
        if let outputDirectory {
            text = text.replacingOccurrences(of: outputDirectory, with: "OUT")
            text = text.replacingOccurrences(of: #" in [0-9]+\.[0-9] s( \([0-9.]+ files/s, [0-9.]+ MB/s\))?"#,
                                              with: " in T s", options: .regularExpression)
        }
        return Data(text.utf8)
    }

    /// The file a row's output is saved as, under GROUP/INPUT/: COMMAND.FORMAT (a table of the facts export:
    /// export.jsonl-TABLE.jsonl), and its standard error beside it with .stderr added.
    static func savedName(_ row: Row) -> String {
        "\(row.command).\(row.format.replacingOccurrences(of: "/", with: "-"))"
    }

    /// Runs every variant on `input` and returns its rows. A row that differs from `expected` (or every row, with
    /// BTLENS_DIGEST_SAVE) has its outputs saved under `saveDirectory`/GROUP/INPUT/.
    static func rows(of input: Input, group: String, expected: [String: Row]) throws -> [Row] {
        var rows: [Row] = []
        let save = URL(fileURLWithPath: saveDirectory).appendingPathComponent(group).appendingPathComponent(input.name)
        func record(_ row: Row, stdout: Data?, stderr: Data?) throws {
            var row = row
            if row.stderr.isEmpty || row.stderr == sha256(Data()) { row.stderr = "-" }
            rows.append(row)
            guard saveAll != nil || (!updating && !(expected[row.key].map(row.sameDigests) ?? false)) else { return }
            let base = save.appendingPathComponent(savedName(row))
            try FileManager.default.createDirectory(at: base.deletingLastPathComponent(), withIntermediateDirectories: true)
            try stdout?.write(to: base)
            if let stderr, !stderr.isEmpty { try stderr.write(to: base.appendingPathExtension("stderr")) }
        }

        if let generate = input.generate {
            let r = try CLI.run(generate, directory: input.directory, executable: scenarioBinary)
            let capture = try Data(contentsOf: URL(fileURLWithPath: input.directory).appendingPathComponent(input.argument))
            try record(Row(input: input.name, command: "btlens-scenario", format: "capture", stdout: sha256(capture),
                           stderr: sha256(r.stderrBytes), exit: String(r.status),
                           invocation: "btlens-scenario " + generate.joined(separator: " ")),
                       stdout: nil, stderr: r.stderrBytes)
        }

        for v in variants {
            let arguments = v.arguments + [input.argument]
            let r = try CLI.run(arguments, directory: input.directory)
            let out = normalised(r.stdoutBytes), err = normalised(r.stderrBytes)
            try record(Row(input: input.name, command: v.command, format: v.format, stdout: sha256(out),
                           stderr: sha256(err), exit: String(r.status),
                           invocation: "btlens " + arguments.joined(separator: " ")),
                       stdout: out, stderr: err)
        }

        let tables = try TemporaryDirectory(prefix: "btlens-digest")
        let arguments = jsonlArguments + ["-o", tables.path, input.argument]
        let r = try CLI.run(arguments, directory: input.directory)
        let invocation = "btlens " + (jsonlArguments + ["-o", "OUT", input.argument]).joined(separator: " ")
        let out = normalised(r.stdoutBytes, outputDirectory: tables.path)
        let err = normalised(r.stderrBytes, outputDirectory: tables.path)
        try record(Row(input: input.name, command: "export", format: "jsonl", stdout: sha256(out), stderr: sha256(err),
                       exit: String(r.status), invocation: invocation),
                   stdout: out, stderr: err)
        for name in try FileManager.default.contentsOfDirectory(atPath: tables.path).sorted() {
            let bytes = normalised(try Data(contentsOf: URL(fileURLWithPath: tables.file(name))))
            try record(Row(input: input.name, command: "export", format: "jsonl/\(name)", stdout: sha256(bytes),
                           stderr: "-", exit: "-", invocation: invocation + " (OUT/\(name))"),
                       stdout: bytes, stderr: nil)
        }
        return rows
    }

    /// The rows of every input, in input order, computed in parallel (one input per core at a time).
    static func rows(of inputs: [Input], group: String, expected: [String: Row]) -> (rows: [Row], errors: [String]) {
        let results = Mutex<[Int: Result<[Row], any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: inputs.count) { i in
            let result = Result { try rows(of: inputs[i], group: group, expected: expected) }
            results.withLock { $0[i] = result }
        }
        var all: [Row] = []
        var errors: [String] = []
        results.withLock { results in
            for i in inputs.indices {
                switch results[i] {
                case .success(let r): all += r
                case .failure(let e): errors.append("\(inputs[i].name): \(e)")
                case nil: errors.append("\(inputs[i].name): not run")
                }
            }
        }
        return (all, errors)
    }
}
