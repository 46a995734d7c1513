import Foundation
import Testing
import TestSupport

/// `btlens live`: the exit codes and one-line errors (contracts), and a stream on standard input that ends.
/// Signals and growing files are tested in BTLiveTests.
@Suite("btlens live")
struct LiveCommandTests {
    /// Whether the kernel knows Bluetooth at all, decided apart from btlens: socket(AF_BLUETOOTH, SOCK_RAW,
    /// BTPROTO_HCI) fails with EAFNOSUPPORT when it does not. nil: the socket failed another way (undecided).
    static func kernelHasBluetooth() -> Bool? {
        let afBluetooth: Int32 = 31, btprotoHCI: Int32 = 1  // <sys/socket.h>, <bluetooth/bluetooth.h> on Linux
        let fd = socket(afBluetooth, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), btprotoHCI)
        if fd >= 0 {
            close(fd)
            return true
        }
        return errno == EAFNOSUPPORT ? false : nil
    }

    @Test("without Bluetooth in the kernel the monitor socket gives exit 4 and one line naming Bluetooth, with a hint")
    func noBluetooth() throws {
        let hasBluetooth = Self.kernelHasBluetooth()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["live"]
        let err = Pipe()
        // Standard output is not checked, and a capture that runs must never block on a full pipe.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Run with a deadline: on a machine that does have Bluetooth and the capability, live would capture
        // until stopped.
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            guard hasBluetooth != false else {
                // No Bluetooth in the kernel: live must fail at once. Still running means it hangs.
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                Issue.record("socket(AF_BLUETOOTH) fails with EAFNOSUPPORT here, yet btlens live was still running after 10 s instead of exiting 4")
                return
            }
            // The socket opened and a controller answered: this machine has Bluetooth. Then SIGINT must end it.
            #expect(ChildSignals.waitUntilCaught(SIGINT, by: process.processIdentifier), "btlens live has no SIGINT handler")
            process.interrupt()
            let stopDeadline = Date().addingTimeInterval(20)
            while process.isRunning && Date() < stopDeadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                Issue.record("this machine has Bluetooth: live ran, and SIGINT did not end it within 20 s")
                return
            }
            #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                    "this machine has Bluetooth: live ran, and SIGINT must end it with 0")
            return
        }
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus): \(stderr)")
        let status = process.terminationStatus
        if hasBluetooth == false {
            // EAFNOSUPPORT (these machines): exactly 4.
            #expect(status == 4, "\(stderr)")
        } else {
            // 5 would mean socket() worked but bind() needs CAP_NET_RAW (EPERM); 6 that the kernel has Bluetooth
            // but no controller. Both are right answers elsewhere.
            #expect([4, 5, 6].contains(status), "\(stderr)")
        }
        #expect(stderr.hasPrefix("btlens: Bluetooth: "))
        #expect(stderr.split(separator: "\n").count == 1)
        #expect(stderr.contains("; hint: "))
        if status == 4 {
            #expect(stderr.contains("Address family not supported by protocol"))
            #expect(stderr.contains("modprobe bluetooth"))
        } else if status == 5 {
            #expect(stderr.contains("setcap cap_net_raw+ep"))
        }
    }

    @Test("usage errors exit 2")
    func usage() throws {
        #expect(try CLI.run(["live", "capture.log"]).status == 2)
        #expect(try CLI.run(["live", "--from-end"]).status == 2)
        #expect(try CLI.run(["live", "-", "--follow", "x.log"]).status == 2)
        #expect(try CLI.run(["live", "--format", "xml", "-"]).status == 2)
        #expect(try CLI.run(["live", "--index", "-1"]).status == 2)
    }

    @Test("--follow a missing file or a pcap exits 3 with one line naming the file")
    func unreadable() throws {
        let dir = try TemporaryDirectory()
        let missing = try CLI.run(["live", "--follow", dir.path + "/nope.log"])
        #expect(missing.status == 3)
        #expect(missing.stderr == "btlens: \(dir.path)/nope.log: No such file or directory\n")
        let pcap = try writeScenario("heart-rate-session", format: .pcapH4WithDirection)
        let refused = try CLI.run(["live", "--follow", pcap])
        #expect(refused.status == 3)
        #expect(refused.stderr.hasPrefix("btlens: \(pcap): btlens live --follow reads btsnoop or PacketLogger files"))
        let text = try CLI.run(["live", "-"], stdin: Array("hello, not a capture\n".utf8))
        #expect(text.status == 3)
        #expect(text.stderr.hasPrefix("btlens: <stdin>: not a Bluetooth capture"))
    }

    @Test("--write to a place that cannot be written exits 3")
    func unwritable() throws {
        let dir = try TemporaryDirectory()
        let r = try CLI.run(["live", "-", "--write", dir.path + "/no/such/dir/out.btsnoop"], stdin: smallCapture())
        #expect(r.status == 3)
        #expect(r.stderr.contains("cannot write the capture"))
        // The file is named once, by the command, not again in the writer's cause.
        #expect(r.stderr == "btlens: \(dir.path)/no/such/dir/out.btsnoop: cannot write the capture: No such file or directory\n")
    }

    @Test("live - on a finished stream: records, connection events, then the summary and audit's findings; exit 0")
    func standardInput() throws {
        let path = try writeScenario("wasteful-central")
        let bytes = try TemporaryDirectory.contents(of: path)
        let r = try CLI.run(["live", "-"], stdin: bytes)
        #expect(r.status == 0)
        #expect(r.stdout.contains("      1        0.000000  <  0  HCI Command Reset (0x0c03)"))
        #expect(r.stdout.contains("== connection #1 up: E1:7F:03:9A:42:42 (random), handle 0x0040, central"))
        #expect(r.stdout.contains("== connection #2 down: E1:7F:03:9A:42:42 (random), handle 0x0041, reason Connection Terminated By Local Host (0x16)"))
        #expect(r.stdout.contains("--- btlens live: end of input: 1523 records, 2 connections"))

        let live = try CLI.run(["live", "--format", "json", "-"], stdin: bytes)
        let audit = try CLI.run(["audit", "--format", "json", "--fail-on", "never", path])
        let summary = try #require(live.stdout.split(separator: "\n").last)
        let liveObject = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        let auditObject = try #require(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [String: Any])
        let fingerprints = { (o: [String: Any]) in ((o["findings"] as? [[String: Any]]) ?? []).compactMap { $0["fingerprint"] as? String } }
        #expect(!fingerprints(auditObject).isEmpty)
        #expect(fingerprints(liveObject) == fingerprints(auditObject))

        // The rule switches are audit's: --disable takes a rule out, a bad --config is a usage error naming it.
        let ids = { (o: [String: Any]) in Set(((o["findings"] as? [[String: Any]]) ?? []).compactMap { $0["rule"] as? String }) }
        #expect(ids(auditObject).contains("discover-all-services"))
        let disabled = try CLI.run(["live", "--format", "json", "--disable", "BTL003", "-"], stdin: bytes)
        let disabledSummary = try #require(disabled.stdout.split(separator: "\n").last)
        let disabledObject = try #require(try JSONSerialization.jsonObject(with: Data(disabledSummary.utf8)) as? [String: Any])
        #expect(!ids(disabledObject).contains("discover-all-services") && !ids(disabledObject).isEmpty)
        let dir = try TemporaryDirectory()
        let bad = try dir.write("bad.yml", Array("rules: [".utf8))
        let badRun = try CLI.run(["live", "--config", bad, "-"], stdin: bytes)
        #expect(badRun.status == 2 && badRun.stderr.hasPrefix("btlens: \(bad): "))
    }

    @Test("help lists live; its help documents the exit codes")
    func help() throws {
        #expect(try CLI.run(["--help"]).stdout.contains("live"))
        let help = try CLI.run(["live", "--help"])
        #expect(help.status == 0)
        for code in ["4 no Bluetooth", "5 no permission", "6 no Bluetooth controller"] {
            #expect(help.stdout.replacingOccurrences(of: "\n", with: " ").contains(code), "\(code)")
        }
    }
}
