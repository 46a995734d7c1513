import Foundation
import Testing
import BTCapture
import BTLive
import BTScenario
import TestSupport

/// A `btlens live` child process with a pipe on standard input, read back as it prints.
final class LiveChild {
    /// `BTLENS_BINARY`, else the btlens built next to this test bundle (same scratch path), else .build/debug.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["BTLENS_BINARY"] { return path }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let sibling = here.appendingPathComponent("btlens").path
        if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
        return SchemaValidation.packageRoot.appendingPathComponent(".build/debug/btlens").path
    }()

    let process = Process()
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    private(set) var stdout = Data()
    private(set) var stderr = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    func send(_ bytes: ArraySlice<UInt8>) { Bytes.write(bytes, fd: input.fileHandleForWriting.fileDescriptor) }

    /// Reads what the child printed so far (up to `milliseconds` of waiting).
    func drain(milliseconds: Int32) {
        var fds = [pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: errors.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, 2, milliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        for (i, fd) in fds.enumerated() where fd.revents != 0 {
            let n = read(fd.fd, &buffer, buffer.count)
            if n > 0 {
                if i == 0 { stdout.append(contentsOf: buffer[0..<n]) } else { stderr.append(contentsOf: buffer[0..<n]) }
            }
        }
    }

    var text: String { String(decoding: stdout, as: UTF8.self) }

    /// Waits until standard output contains `needle`.
    func waitFor(_ needle: String, seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.contains(needle) { return true }
            drain(milliseconds: 100)
        }
        return text.contains(needle)
    }

    /// Waits until the child has installed its handler for `signal` (btlens live does so at start-up; a
    /// signal that comes first kills it), draining its output meanwhile. False if it has not after `seconds`
    /// or it exited.
    func waitUntilCatching(_ signal: Int32, seconds: Double = 10) -> Bool {
        ChildSignals.waitUntilCaught(signal, by: process.processIdentifier, seconds: seconds) { drain(milliseconds: 10) }
    }

    /// Sends `signal` once the child catches it, and waits for the exit status (nil: it never installed its
    /// handler, or did not exit in time; it was killed).
    func stop(with signal: Int32, seconds: Double = 20) -> Int32? {
        guard waitUntilCatching(signal) else {
            Issue.record("btlens live (pid \(process.processIdentifier)) did not install its handler for signal \(signal) within 10 s (running: \(process.isRunning))")
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            return nil
        }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { drain(milliseconds: 50) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            return nil
        }
        // Whatever is still in the pipes.
        for _ in 0..<100 {
            let before = stdout.count + stderr.count
            drain(milliseconds: 20)
            if stdout.count + stderr.count == before { break }
        }
        return process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus
    }
}

/// SIGINT and SIGTERM end a live capture cleanly: exit 0, the summary and findings printed, the written file
/// complete — checked on real child processes, since signals are about the process.
@Suite("Signals end a live capture cleanly")
struct LiveSignalTests {
    /// The start of record `n`'s line in the text output (numbers are right-aligned in 7 columns).
    static func recordLine(_ n: Int) -> String {
        let number = String(n)
        return "\n" + String(repeating: " ", count: max(0, 7 - number.count)) + number + "  "
    }

    @Test("SIGINT on `btlens live - --write FILE`: exit 0, the summary, and a written file equal to the input")
    func interrupt() throws {
        let full = try writeScenario("wasteful-central")
        let input = try LoadedCapture.load(full)
        let dir = try TemporaryDirectory()
        let written = dir.file("session.btsnoop")
        let child = try LiveChild(["live", "-", "--write", written])
        child.send(try Bytes.read(full)[...])
        // Standard input stays open: the capture would go on forever. The last record shown means all were read.
        #expect(child.waitFor(Self.recordLine(input.records.count)), "\(child.text.suffix(500))")
        let status = child.stop(with: SIGINT)
        #expect(status == 0, "stderr: \(String(decoding: child.stderr, as: UTF8.self))")
        #expect(child.text.contains("--- btlens live: interrupted (SIGINT): \(input.records.count) records, 2 connections"))
        #expect(child.text.contains("att-timeout"))  // the final audit report
        let reread = try LoadedCapture.load(written)
        #expect(reread.issueCount == 0)
        #expect(reread.records.map { RecordContent($0) } == input.records.map { RecordContent($0) })
    }

    @Test("SIGTERM with --format json: exit 0 and a JSON summary as the last line")
    func terminate() throws {
        let full = try writeScenario("heart-rate-session")
        let records = try LoadedCapture.load(full).records.count
        let child = try LiveChild(["live", "--format", "json", "-"])
        child.send(try Bytes.read(full)[...])
        #expect(child.waitFor("\"number\":\(records),"))
        let status = child.stop(with: SIGTERM)
        #expect(status == 0)
        let last = try #require(child.text.split(separator: "\n").last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(summary["type"] as? String == "summary")
        #expect(summary["reason"] as? String == "terminated (SIGTERM)")
        #expect(summary["records"] as? Int == records)
    }

    @Test("SIGINT before the stream sent anything: exit 0 with an empty summary")
    func interruptWhileWaiting() throws {
        let child = try LiveChild(["live", "-"])
        // Not a sleep: signalled before its handler is installed, the child would die of SIGINT (status -2).
        try #require(child.waitUntilCatching(SIGINT), "btlens live did not install its SIGINT handler within 10 s")
        let status = child.stop(with: SIGINT)
        #expect(status == 0)
        #expect(child.text.contains("--- btlens live: interrupted (SIGINT): 0 records, 0 connections"))
    }

    @Test("--follow a file another process is writing, then SIGTERM: every record shown, --write complete")
    func followChild() throws {
        let full = try writeScenario("heart-rate-session", format: .packetLoggerLE)
        let bytes = try Bytes.read(full)
        let input = try LoadedCapture.load(full)
        let dir = try TemporaryDirectory()
        let path = dir.file("growing.pklg")
        let written = dir.file("copy.btsnoop")
        Bytes.write(bytes.prefix(bytes.count / 3), to: path)
        let child = try LiveChild(["live", "--follow", path, "--write", written])
        #expect(child.waitFor("  HCI "))
        Bytes.append(bytes[(bytes.count / 3)...], to: path)
        #expect(child.waitFor(Self.recordLine(input.records.count)), "\(child.text.suffix(300))")
        let status = child.stop(with: SIGTERM)
        #expect(status == 0)
        #expect(child.text.contains("--- btlens live: terminated (SIGTERM): \(input.records.count) records"))
        let reread = try LoadedCapture.load(written)
        #expect(reread.records.map { RecordContent($0) } == input.records.filter { $0.kind.isHCIPacket }.map { RecordContent($0) })
    }
}
