import Foundation
import Testing
import TestSupport

/// Archives, bug reports and rotated logs through the commands, as a user types them.
@Suite("btlens with archives and bug reports")
struct ArchiveCommandTests {
    static func bugReport(in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("bugreport-panther-UQ1A.2026-01-15.zip")
        try ArchiveFixtures.write(path, .zip, members: [
            ("version.txt", Array("2.0".utf8)),
            ("bugreport-panther-UQ1A-2026-01-15-10-02-00.txt", ArchiveFixtures.bugReportText(summary: nil)),
            ("FS/data/misc/bluetooth/logs/btsnoop_hci.log", try TemporaryDirectory.contents(of: try writeScenario("wasteful-central"))),
        ])
        return path
    }

    @Test("every command that takes a file takes an archive; reports name the capture inside")
    func everyCommand() throws {
        let dir = try TemporaryDirectory()
        let zip = try Self.bugReport(in: dir)
        let member = "bugreport-panther-UQ1A.2026-01-15.zip:FS/data/misc/bluetooth/logs/btsnoop_hci.log"
        let stats = try CLI.run(["stats", "--json", zip])
        #expect(stats.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        #expect(object["file"] as? String == member)
        #expect(object["records"] as? Int == 1523)
        #expect(stats.stderr.contains("note: the bug report's full snoop log is read"))
        for command in [["decode", "--limit", "3"], ["timeline"], ["gatt"], ["devices"], ["audit", "--fail-on", "never"]] {
            let r = try CLI.run(command + [zip])
            #expect(r.status == 0, "\(command): \(r.stderr)")
            #expect(!r.stdout.isEmpty)
        }
        let audit = try CLI.run(["audit", "--format", "json", "--fail-on", "never", zip])
        #expect(audit.stdout.contains(dir.path + "/" + member))
        let plain = try CLI.run(["audit", "--fail-on", "warning", try writeScenario("wasteful-central")])
        #expect(try CLI.run(["audit", zip]).status == plain.status)
    }

    @Test("standard input: a gzip-compressed capture and a zip")
    func standardInput() throws {
        let dir = try TemporaryDirectory()
        let gz = dir.file("capture.gz")
        try ArchiveFixtures.write(gz, .gzip, members: [("x", smallCapture())])
        let r = try CLI.run(["stats", "--json", "-"], stdin: try TemporaryDirectory.contents(of: gz))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"records\": 8") || r.stdout.contains("\"records\":"))
        let zip = try Self.bugReport(in: dir)
        let z = try CLI.run(["stats", "-"], stdin: try TemporaryDirectory.contents(of: zip))
        #expect(z.status == 0)
        #expect(z.stdout.contains("records              1523"))
    }

    @Test("rotated logs on the command line: one capture, one timeline")
    func rotated() throws {
        let dir = try TemporaryDirectory()
        let original = try TemporaryDirectory.contents(of: try writeScenario("heart-rate-session"))
        let (last, current) = ArchiveFixtures.rotate(original, at: 70)
        let a = try dir.write("btsnoop_hci.log.last", last)
        let b = try dir.write("btsnoop_hci.log", current)
        let r = try CLI.run(["timeline", "--json", a, b])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["file"] as? String == "btsnoop_hci.log.last+btsnoop_hci.log")
        #expect((object["connections"] as? [Any])?.count == 1)
        #expect(r.stderr.contains("read as one capture"))
    }

    @Test("bad archives: no capture inside, a bomb, garbage — one-line errors and exit 3")
    func badArchives() throws {
        let dir = try TemporaryDirectory()
        let empty = dir.file("notes.zip")
        try ArchiveFixtures.write(empty, .zip, members: [("notes.txt", Array("nothing\n".utf8))])
        let r = try CLI.run(["stats", empty])
        #expect(r.status == 3)
        #expect(r.stderr == "btlens: \(empty): zip archive without a Bluetooth capture (btsnoop, pcap, pcapng, PacketLogger or a bug report's btsnooz summary) in its 1 member\n")

        let bomb = dir.file("bomb.xz")
        try ArchiveFixtures.write(bomb, .xz, members: [("x", CaptureBytes.btsnoopHeader(datalink: 1002) + [UInt8](repeating: 0, count: 64 << 20))])
        for command in [["stats"], ["timeline"], ["audit"]] {
            let b = try CLI.run(command + [bomb])
            #expect(b.status == 3, "\(command)")
            #expect(b.stderr.contains("btlens: \(bomb): ") && b.stderr.contains("refused as a decompression bomb"), "\(command): \(b.stderr)")
        }
        let garbage = try dir.write("garbage.tgz", [0x1F, 0x8B, 0x08, 0x00] + [UInt8](repeating: 0x41, count: 200))
        let g = try CLI.run(["stats", garbage])
        #expect(g.status == 3)
        #expect(g.stderr.hasPrefix("btlens: \(garbage): "))
        #expect(g.stderr.split(separator: "\n").count == 1)
    }

    @Test("audit of a folder: the bug report inside is audited, a text file beside it is not")
    func folder() throws {
        let dir = try TemporaryDirectory()
        _ = try Self.bugReport(in: dir)
        _ = try dir.write("notes.txt", Array("not a capture\n".utf8))
        let r = try CLI.run(["audit", "--fail-on", "never", dir.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("btsnoop_hci.log"))
        #expect(!r.stdout.contains("notes.txt"))
    }
}
