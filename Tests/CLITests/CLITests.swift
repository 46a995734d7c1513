import Foundation
import Testing
import TestSupport

/// Runs the built `btlens` executable, as a user or CI job would.
struct CLI {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// `BTLENS_BINARY` when set (a build in another scratch path, a release build), else the default debug build.
    static let binary = ProcessInfo.processInfo.environment["BTLENS_BINARY"]
        ?? packageRoot.appendingPathComponent(".build/debug/btlens").path

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Standard output as written (`stdout` decodes it as UTF-8), for binary output and exact digests.
        var stdoutBytes = Data()
        var stderrBytes = Data()
    }

    /// `environment`: variables set (or replaced) for the child, beside the test runner's own.
    static func run(_ arguments: [String], stdin: [UInt8]? = nil, directory: String? = nil,
                    environment: [String: String] = [:], executable: String = binary) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        // A child may exit without reading all its input: writing to the closed pipe must fail, not kill the
        // test runner with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        try process.run()
        // Input is written beside the reading of the output, so a child that writes while it reads never waits
        // on a full pipe that nobody empties.
        let written = DispatchSemaphore(value: 0)
        if let stdin {
            let writer = input.fileHandleForWriting
            DispatchQueue.global().async {
                try? writer.write(contentsOf: Data(stdin))
                try? writer.close()
                written.signal()
            }
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        if stdin != nil { written.wait() }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self), stdoutBytes: o, stderrBytes: e)
    }
}

/// A small Android-style capture: Reset, its Command Complete, a connection, an ATT read and a disconnection.
func smallCapture() -> [UInt8] {
    let t: UInt64 = 1_700_000_000_000_000
    var b = CaptureBytes.btsnoopHeader(datalink: 1002)
    b += CaptureBytes.btsnoopRecord([0x01, 0x03, 0x0C, 0x00], flags: 2, unixMicros: t)
    b += CaptureBytes.btsnoopRecord([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], flags: 3, unixMicros: t + 1)
    // LE Connection Complete: status 0, handle 0x0040, central, public peer 11:22:33:44:55:66, 30 ms, 0, 5 s, 0.
    b += CaptureBytes.btsnoopRecord([0x04, 0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                                     0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00], flags: 3, unixMicros: t + 2)
    // ATT Read Request handle 0x002a, then Read Response "hi".
    b += CaptureBytes.btsnoopRecord([0x02, 0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x2A, 0x00], flags: 0, unixMicros: t + 3)
    b += CaptureBytes.btsnoopRecord([0x02, 0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0B, 0x68, 0x69], flags: 1, unixMicros: t + 4)
    // Disconnection Complete: status 0, handle 0x0040, reason 0x13.
    b += CaptureBytes.btsnoopRecord([0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13], flags: 3, unixMicros: t + 5)
    return b
}

@Suite("btlens command line")
struct CLITests {
    @Test("--help lists the commands; a command's help has examples")
    func help() throws {
        let r = try CLI.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("stats"))
        #expect(r.stdout.contains("decode"))
        #expect(r.stdout.contains("Exit codes"))
        let s = try CLI.run(["help", "stats"])
        #expect(s.stdout.contains("Examples"))
    }

    @Test("usage errors exit 2")
    func usage() throws {
        #expect(try CLI.run(["stats"]).status == 2)
        #expect(try CLI.run(["frobnicate"]).status == 2)
        #expect(try CLI.run(["decode", "--kind", "nonsense", "x.log"]).status == 2)
    }

    @Test("unreadable input exits 3 with one line naming the file")
    func unreadable() throws {
        let dir = try TemporaryDirectory()
        let missing = try CLI.run(["stats", dir.path + "/nope.log"])
        #expect(missing.status == 3)
        #expect(missing.stderr == "btlens: \(dir.path)/nope.log: No such file or directory\n")
        let text = try dir.write("notes.txt", Array("just some text, not a capture\n".utf8))
        let foreign = try CLI.run(["stats", text])
        #expect(foreign.status == 3)
        #expect(foreign.stderr.hasPrefix("btlens: \(text): not a Bluetooth capture"))
        #expect(foreign.stderr.split(separator: "\n").count == 1)
    }

    @Test("stats --json has the documented shape, keys in order")
    func statsJSON() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("small.log", smallCapture())
        let r = try CLI.run(["stats", "--json", path])
        #expect(r.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["file"] as? String == "small.log")
        #expect(object["format"] as? String == "btsnoop-h4")
        #expect(object["linktype"] as? Int == 1002)
        #expect(object["records"] as? Int == 6)
        #expect((object["first_timestamp"] as? NSNumber)?.doubleValue == 1_700_000_000)
        let hci = try #require(object["hci"] as? [String: Any])
        #expect(hci["commands"] as? [String: Int] == ["0x0c03": 1])
        #expect(hci["events"] as? [String: Int] == ["0x0e": 1, "0x3e": 1, "0x05": 1])
        #expect(object["acl_packets"] as? [String: Int] == ["sent": 1, "received": 1])
        #expect(object["connections"] as? Int == 1)
        #expect(object["disconnections"] as? [String: Int] == ["0x13": 1])
        #expect(object["att"] as? [String: Int] == ["0x0a": 1, "0x0b": 1])
        #expect(object["malformed"] as? Int == 0)
        let keys = ["\"file\"", "\"format\"", "\"linktype\"", "\"records\"", "\"first_timestamp\"", "\"last_timestamp\"",
                    "\"hci\"", "\"acl_packets\"", "\"advertising_reports\"", "\"connections\"", "\"disconnections\"",
                    "\"att\"", "\"malformed\""]
        let positions = keys.compactMap { r.stdout.range(of: $0)?.lowerBound }
        #expect(positions.count == keys.count)
        #expect(positions == positions.sorted())
    }

    @Test("several files give an array; - reads standard input")
    func arrayAndStdin() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("small.log", smallCapture())
        let r = try CLI.run(["stats", "--json", path, "-"], stdin: smallCapture())
        #expect(r.status == 0)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 2)
        #expect(array.map { $0["records"] as? Int } == [6, 6])
    }

    @Test("a truncated capture is decoded up to the break, the problem located on stderr, exit 0")
    func truncated() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("cut.log", Array(smallCapture().dropLast(2)))
        let r = try CLI.run(["stats", "--json", path])
        #expect(r.status == 0)
        #expect(r.stderr.contains("record 6 at byte"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["records"] as? Int == 5)
        #expect(object["malformed"] as? Int == 1)
    }

    @Test("decode prints one line per record, filters by kind, handle and opcode, -v adds fields")
    func decode() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("small.log", smallCapture())
        let all = try CLI.run(["decode", path])
        #expect(all.status == 0)
        let lines = all.stdout.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines[0].contains("HCI Command Reset (0x0c03)"))
        #expect(lines[3].contains("ATT Read Request handle 0x002a"))
        #expect(lines[3].contains("  <  "))
        #expect(lines[5].contains("reason Remote User Terminated Connection"))
        let att = try CLI.run(["decode", "--kind", "att", path])
        #expect(att.stdout.split(separator: "\n").count == 2)
        let handle = try CLI.run(["decode", "--handle", "0x40", path])
        #expect(handle.stdout.split(separator: "\n").count == 4)
        let opcode = try CLI.run(["decode", "--opcode", "0x0c03", path])
        #expect(opcode.stdout.split(separator: "\n").count == 2)
        let verbose = try CLI.run(["decode", "-v", "--opcode", "0x0a", path])
        #expect(verbose.stdout.contains("handle: 0x0040"))
        let limited = try CLI.run(["decode", "--limit", "1", "--time", "unix", path])
        #expect(limited.stdout.split(separator: "\n").count == 1)
        #expect(limited.stdout.contains("1700000000"))
    }
}
