import Foundation
import Testing
import TestSupport

/// `btlens export --format perfetto`: every trace is parsed with Perfetto's own schema (the `perfetto` package's
/// perfetto_trace_pb2, installed by `make test-deps`) by Scripts/check_perfetto_trace.py, which checks the clock,
/// the tracks, slice nesting, counters, flows and finding events, and compares them with `timeline --json`,
/// `audit --format json` and `energy --json` of the same capture. Scripts/compare_perfetto_traces.py compares two
/// traces packet by packet, in any order.
@Suite struct PerfettoExportTests {
    static let checker = CLI.packageRoot.appendingPathComponent("Tests/CLITests/Scripts/check_perfetto_trace.py").path
    static let samples = ["heart-rate-session.btsnoop", "wasteful-central.btsnoop", "connection-churn.btsnoop",
                          "peripheral-role.btsnoop", "tidy-central.btsnoop", "beacons.btsnoop", "eatt-logger.btsnoop",
                          "fragmented-acl.btsnoop", "repeating-episodes.btsnoop", "heart-rate-session.air.pcap",
                          "wasteful-central.air.pcap"]
    /// Real captures (../shared, not shipped): an Android HCI log with scans and three connections, and an nRF
    /// Sniffer air capture.
    static let realCaptures = ["yeelock_smartlock_btsnoop_hci.log", "nrfsniffer_garmin_watch.pcapng"]

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("btlens-perfetto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs the checker; returns its summary line, or records its problems.
    @discardableResult
    static func check(_ trace: String, _ extra: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", checker, trace] + extra
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(trace): \(text)")
        return text
    }

    /// Exports `capture` and checks the trace against the other commands' JSON of it.
    static func exportAndCompare(_ capture: String, in dir: URL) throws {
        let name = (capture as NSString).lastPathComponent
        let trace = dir.appendingPathComponent(name + ".perfetto-trace").path
        let export = try CLI.run(["export", "--format", "perfetto", capture, "-o", trace])
        #expect(export.status == 0, "\(capture): \(export.stderr)")
        var extra: [String] = ["--processes", "1"]
        for (flag, arguments) in [("--timeline", ["timeline", "--json"]), ("--audit", ["audit", "--format", "json"]),
                                  ("--energy", ["energy", "--json"])] {
            let result = try CLI.run(arguments + [capture])
            let path = dir.appendingPathComponent("\(name).\(flag.dropFirst(2)).json").path
            try result.stdout.write(toFile: path, atomically: true, encoding: .utf8)
            extra += [flag, path]
        }
        let summary = try check(trace, extra)
        #expect(summary.contains("processes"), "\(capture): \(summary)")
    }

    @Test func samplesMatchTheTimelineAuditAndEnergy() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for sample in Self.samples {
            try Self.exportAndCompare(CLI.packageRoot.appendingPathComponent("samples/\(sample)").path, in: dir)
        }
    }

    @Test func realCapturesMatchTheTimelineAuditAndEnergy() throws {
        let real = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")
        guard FileManager.default.fileExists(atPath: real.path) else {
            FileHandle.standardError.write(Data("NOTE: \(real.path) is absent: the Perfetto export of real captures was NOT checked.\n".utf8))
            return
        }
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in Self.realCaptures {
            try Self.exportAndCompare(real.appendingPathComponent(name).path, in: dir)
        }
    }

    static let comparer = CLI.packageRoot.appendingPathComponent("Tests/CLITests/Scripts/compare_perfetto_traces.py").path

    /// Exports `capture` with `window` finished links kept whole (`BTLENS_LINK_WINDOW`, as for audit): links past
    /// it are drawn as they are judged.
    static func export(_ capture: String, window: Int, to trace: String) throws {
        let result = try CLI.run(["BTLENS_LINK_WINDOW=\(window)", CLI.binary, "export", "--format", "perfetto", capture, "-o", trace],
                                 executable: "/usr/bin/env")
        #expect(result.status == 0, "\(capture) (window \(window)): \(result.stderr)")
    }

    /// Whether the traces hold the same packets (Scripts/compare_perfetto_traces.py); its summary line.
    static func compare(_ a: String, _ b: String) throws -> String {
        let r = try CLI.run(["python3", comparer, a, b], executable: "/usr/bin/env")
        #expect(r.status == 0, "\(a) against \(b): \(r.stdout)\(r.stderr)")
        return r.stdout
    }

    /// Links drawn as they are judged (window 1 or 2: every finished link but the last one or two) give the same
    /// packets — tracks, slices, flows, findings, counter values — as every link drawn at the capture's end (a
    /// window no capture fills), only in another order; and the trace passes the checker.
    static func expectStreamedSame(_ capture: String, in dir: URL, windows: [Int] = [1]) throws -> [String] {
        let name = (capture as NSString).lastPathComponent
        let whole = dir.appendingPathComponent(name + ".whole.perfetto-trace").path
        try export(capture, window: 1_000_000_000, to: whole)
        var summaries: [String] = []
        for window in windows {
            let streamed = dir.appendingPathComponent(name + ".w\(window).perfetto-trace").path
            try export(capture, window: window, to: streamed)
            summaries.append(try compare(whole, streamed))
            try check(streamed)
        }
        return summaries
    }

    @Test func linksDrawnAsTheyAreJudgedGiveTheSamePackets() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for sample in Self.samples where sample != "connection-churn.btsnoop" {
            _ = try Self.expectStreamedSame(CLI.packageRoot.appendingPathComponent("samples/\(sample)").path, in: dir)
        }
        // Four links to one peer, and failed attempts: with a window of 1 or 2 the first links are drawn before the
        // capture's end, so their tracks come before the attempts' track.
        let churn = CLI.packageRoot.appendingPathComponent("samples/connection-churn.btsnoop").path
        for summary in try Self.expectStreamedSame(churn, in: dir, windows: [1, 2]) {
            #expect(!summary.contains("; 0 tracks declared at another place"), "nothing was drawn early: \(summary)")
        }
        let real = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")
        guard FileManager.default.fileExists(atPath: real.path) else {
            FileHandle.standardError.write(Data("NOTE: \(real.path) is absent: real captures' traces drawn as links are judged were NOT compared.\n".utf8))
            return
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: real.path).sorted()
        where name.contains(".") && !name.hasSuffix(".tsv") {
            _ = try Self.expectStreamedSame(real.appendingPathComponent(name).path, in: dir)
        }
    }

    /// The checker fails where it should: a slice left open, a flow without its end.
    @Test func checkerCatchesABrokenTrace() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("hr.perfetto-trace").path
        let sample = CLI.packageRoot.appendingPathComponent("samples/heart-rate-session.btsnoop").path
        #expect(try CLI.run(["export", "--format", "perfetto", sample, "-o", trace]).status == 0)
        for (breaking, complaint) in [("slice-end", "never ends"), ("flow-end", "flows without both ends")] {
            let r = try CLI.run(["python3", Self.checker, trace, "--break", breaking], executable: "/usr/bin/env")
            #expect(r.status == 1, "\(breaking)")
            #expect(r.stdout.contains(complaint), "\(breaking): \(r.stdout)")
        }
    }

    @Test func severalFilesAreOneProcessEach() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("all.perfetto-trace").path
        let files = ["heart-rate-session.btsnoop", "wasteful-central.btsnoop", "wasteful-central.air.pcap"]
            .map { CLI.packageRoot.appendingPathComponent("samples/\($0)").path }
        let result = try CLI.run(["export", "--format", "perfetto"] + files + ["-o", trace])
        #expect(result.status == 0)
        #expect(result.stderr.contains("wrote \(trace): 3 captures"))
        let summary = try Self.check(trace, ["--processes", "3"])
        #expect(summary.hasPrefix("3 processes"), "\(summary)")
        // Drawn as links are judged, file after file: the same processes (ids included) and packets.
        let streamed = dir.appendingPathComponent("all.w1.perfetto-trace").path
        let again = try CLI.run(["BTLENS_LINK_WINDOW=1", CLI.binary, "export", "--format", "perfetto"] + files + ["-o", streamed],
                                executable: "/usr/bin/env")
        #expect(again.status == 0)
        #expect(try Self.check(streamed, ["--processes", "3"]).hasPrefix("3 processes"))
        _ = try Self.compare(trace, streamed)
    }

    @Test func standardInputToStandardOutput() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let trace = dir.appendingPathComponent("stdout.perfetto-trace").path
        let sample = CLI.packageRoot.appendingPathComponent("samples/heart-rate-session.btsnoop").path
        let result = try CLI.run(["-c", "'\(CLI.binary)' export --format perfetto - -o - < '\(sample)' > '\(trace)'"],
                                 executable: "/bin/sh")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("wrote"))
        let summary = try Self.check(trace, ["--processes", "1"])
        #expect(summary.contains("1 flows"), "the heart-rate sample has one ATT request slower than 100 ms: \(summary)")
    }

    @Test func anonymizeLeavesNoAddress() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sample = CLI.packageRoot.appendingPathComponent("samples/wasteful-central.btsnoop").path
        for (flags, shows) in [([String](), true), (["--anonymize"], false)] {
            let trace = dir.appendingPathComponent("t\(flags.count).perfetto-trace").path
            let result = try CLI.run(["export", "--format", "perfetto"] + flags + [sample, "-o", trace])
            #expect(result.status == 0)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: trace))
            #expect((bytes.range(of: Data("E1:7F:03:9A:42:42".utf8)) != nil) == shows, "\(flags)")
            try Self.check(trace)
        }
    }

    @Test func damagedCaptureGivesWhatDecodedAndForeignFileAnError() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sample = try Data(contentsOf: CLI.packageRoot.appendingPathComponent("samples/wasteful-central.btsnoop"))
        let damaged = dir.appendingPathComponent("damaged.btsnoop")
        try sample.prefix(30_000).write(to: damaged)
        let trace = dir.appendingPathComponent("damaged.perfetto-trace").path
        let timeline = try CLI.run(["timeline", damaged.path])
        let result = try CLI.run(["export", "--format", "perfetto", damaged.path, "-o", trace])
        #expect(result.status == timeline.status)
        #expect(result.stderr.contains("warning: 1 malformed record"))
        let summary = try Self.check(trace, ["--processes", "1"])
        #expect(summary.contains("slices"))

        let foreign = dir.appendingPathComponent("notes.txt")
        try Data("hello\n".utf8).write(to: foreign)
        let out = dir.appendingPathComponent("foreign.perfetto-trace").path
        let refused = try CLI.run(["export", "--format", "perfetto", foreign.path, "-o", out])
        #expect(refused.status == 3)
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("btlens: \(foreign.path): not a Bluetooth capture"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
