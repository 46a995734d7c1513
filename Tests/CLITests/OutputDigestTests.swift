import Foundation
import Testing
import TestSupport

/// Every report of every command and format stays byte for byte what it was (issue 26: memory work must not change
/// a finding, its order or any output): the sha256 of each output on every sample, every real capture of
/// ../shared/captures/real (named by file name; the captures are not committed, the digests of their outputs
/// are) and ground-truth seeds, against Tests/CLITests/OutputDigests/GROUP.tsv, written by the code before the
/// change. A deliberate output change rewrites them with `make output-digests` (UPDATE_OUTPUT_DIGESTS=1) in the
/// same commit, with the reason in its message. docs/CONFORMANCE.md, "Output digests", says how to see what changed.
@Suite("output digests: every report byte for byte")
struct OutputDigestTests {
    /// Every capture in samples/ (what `make samples` writes).
    @Test("samples/")
    func samples() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: CLI.packageRoot.appendingPathComponent("samples").path)
            .filter { !$0.hasSuffix(".md") }.sorted()
        try Self.check("samples", inputs: names.map {
            OutputDigests.Input(name: "samples/\($0)", directory: CLI.packageRoot.path, argument: "samples/\($0)")
        })
    }

    static let realCaptures = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")

    /// Every capture MANIFEST.tsv lists, run in ../shared/captures/real so the reports name it by file name.
    @Test("real captures of ../shared")
    func realCaptures() throws {
        let manifest = Self.realCaptures.appendingPathComponent("MANIFEST.tsv")
        guard FileManager.default.fileExists(atPath: manifest.path) else {
            FileHandle.standardError.write(Data("""
                NOTE: \(Self.realCaptures.path) is absent: the output digests of the real captures \
                (Tests/CLITests/OutputDigests/real.tsv) were NOT checked.\n
                """.utf8))
            return
        }
        let names = try String(contentsOf: manifest, encoding: .utf8).split(separator: "\n").dropFirst()
            .compactMap { $0.split(separator: "\t").first.map(String.init) }
        #expect(!names.isEmpty)
        try Self.check("real", inputs: names.map {
            OutputDigests.Input(name: $0, directory: Self.realCaptures.path, argument: $0)
        })
    }

    /// Ground-truth seeds of both catalogues (`btlens-scenario truth --seed N [--stack]`), written into a
    /// temporary directory, rotating through three HCI formats and an air capture so every reader is in the rows.
    static let truthSeeds: ClosedRange<Int> = 1...20
    static let truthFormats: [(format: String, suffix: String)] = [("btsnoop", "btsnoop"), ("pcap", "pcap"), ("pklg", "pklg"),
                                                                   ("air-272", "air.pcap")]

    @Test("ground-truth seeds, classic and stack catalogues")
    func groundTruth() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-digest-truth")
        var inputs: [OutputDigests.Input] = []
        for catalog in ["classic", "stack"] {
            for seed in Self.truthSeeds {
                let (format, suffix) = Self.truthFormats[seed % Self.truthFormats.count]
                let name = "truth-\(catalog)-\(seed).\(suffix)"
                inputs.append(OutputDigests.Input(
                    name: name, directory: directory.path, argument: name,
                    generate: ["truth", "--seed", String(seed)] + (catalog == "stack" ? ["--stack"] : []) + ["--format", format, name]))
            }
        }
        try Self.check("truth", inputs: inputs)
    }

    /// Most changed rows named one by one; the rest are counted.
    static let detailedMismatches = 20

    /// Runs `inputs` and compares their rows with GROUP.tsv (or rewrites it when updating).
    static func check(_ group: String, inputs: [OutputDigests.Input]) throws {
        let file = OutputDigests.file(group)
        let expectedRows = try OutputDigests.read(group)
        if !OutputDigests.updating && expectedRows == nil {
            Issue.record("\(file.path) is missing: run `make output-digests` to write it from the current code")
            return
        }
        let expected = Dictionary((expectedRows ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let (rows, errors) = OutputDigests.rows(of: inputs, group: group, expected: expected)
        for e in errors { Issue.record("running the commands failed: \(e)") }
        guard errors.isEmpty else { return }
        if OutputDigests.updating {
            try OutputDigests.write(group, rows: rows, to: file)
            print("Wrote \(rows.count) digests of \(inputs.count) inputs to \(file.path)")
            return
        }

        let saved = URL(fileURLWithPath: OutputDigests.saveDirectory).appendingPathComponent(group).path
        var problems: [String] = []
        for row in rows {
            guard let old = expected[row.key] else {
                problems.append("\(row.input): `\(row.invocation)` has no digest in \(group).tsv (a new input or format?)")
                continue
            }
            guard !row.sameDigests(old) else { continue }
            var what: [String] = []
            if row.stdout != old.stdout {
                what.append(row.command == "btlens-scenario" ? "the generated capture changed (btlens-scenario, not btlens)"
                                                                  : "standard output changed")
            }
            if row.stderr != old.stderr { what.append("standard error changed") }
            if row.exit != old.exit { what.append("exit \(row.exit), was \(old.exit)") }
            let input = inputs.first { $0.name == row.input }
            // A generated input is gone with its temporary directory: say how to write it again.
            let made = input?.generate.map { "; write the input with `btlens-scenario \($0.joined(separator: " "))`" } ?? ""
            problems.append("\(row.input): \(row.command) \(row.format): \(what.joined(separator: ", ")) — `\(row.invocation)` "
                            + "(in \(input?.directory ?? "?")\(made)); new output in "
                            + "\(saved)/\(row.input)/\(OutputDigests.savedName(row))")
        }
        let produced = Set(rows.map(\.key))
        for old in expectedRows ?? [] where !produced.contains(old.key) {
            problems.append("\(old.input): \(old.command) \(old.format): in \(group).tsv but no longer produced")
        }
        guard !problems.isEmpty else { return }

        let actual = URL(fileURLWithPath: OutputDigests.saveDirectory).appendingPathComponent("\(group).tsv")
        try OutputDigests.write(group, rows: rows, to: actual)
        for p in problems.prefix(detailedMismatches) { Issue.record(Comment(rawValue: p)) }
        Issue.record(Comment(rawValue: """
            \(problems.count) of \(rows.count) output digests of \(group) differ from \(file.path)\
            \(problems.count > detailedMismatches ? " (the first \(detailedMismatches) above)" : ""). \
            All rows: diff \(file.path) \(actual.path). To see an output's diff, run its command with the build \
            before the change and diff it with the saved new output (docs/CONFORMANCE.md, Output digests). If the change is \
            deliberate: `make output-digests`, and say why in the commit message.
            """))
    }
}
