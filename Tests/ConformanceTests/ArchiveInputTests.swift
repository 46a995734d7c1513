import Foundation
import Testing
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport
import BTScenario
import TestSupport

/// Captures as people have them: compressed, in archives, in Android bug reports (full log or btsnooz summary),
/// rotated, in iOS sysdiagnoses. Every fixture is built here from scenario captures; each must give the same
/// counts and findings as the plain capture inside.
@Suite("captures in archives")
struct ArchiveInputTests {
    /// Counts (stats JSON without the file name) and findings of one capture.
    struct Summary: Equatable, CustomStringConvertible {
        var stats: String
        var findings: [String]
        var connections: Int
        var description: String { "\(connections) connections\n\(stats)\n\(findings.joined(separator: "\n"))" }
    }

    static func summary(_ input: CaptureInput) throws -> Summary {
        var statistics = StatisticsCollector()
        let capture = try input.open()
        let counted = try capture.accept(&statistics)
        let stats = StatisticsJSON.object(file: "x", info: capture.info, statistics: counted).serialized()
        var collector = TrackingCollector()
        let model = try input.open().accept(&collector)
        let findings = Auditor().audit(model, file: "x").map {
            "\($0.rule) \($0.severity) \($0.message) records \($0.records.map { String($0.number) }.joined(separator: ","))"
        }
        return Summary(stats: stats, findings: findings, connections: model.connections.count)
    }

    static func summary(path: String) throws -> Summary {
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1, "\(path) holds \(inputs.map(\.path))")
        return try summary(inputs[0])
    }

    static func bytes(_ scenario: String, _ format: ScenarioFormat = .btsnoopH4) throws -> [UInt8] {
        try TemporaryDirectory.contents(of: try ScenarioFixtures.path(scenario, format: format))
    }

    @Test("gzip, xz, zstd, bzip2, zip, tar, tar.gz and tar.xz give what the capture inside gives",
          arguments: ArchiveFixtures.Container.allCases)
    func containers(_ container: ArchiveFixtures.Container) throws {
        let dir = try TemporaryDirectory()
        for (scenario, format) in [("wasteful-central", ScenarioFormat.btsnoopH4), ("heart-rate-session", .pcapH4WithDirection),
                                   ("heart-rate-session", .packetLoggerLE)] {
            let plain = try ScenarioFixtures.path(scenario, format: format)
            // A name that says nothing: the format is found from the content.
            let path = dir.file("\(scenario)-\(format.rawValue).bin")
            try ArchiveFixtures.write(path, container, members: [("captures/\(scenario).log", try TemporaryDirectory.contents(of: plain))])
            let inputs = try CaptureInputs.resolve(path)
            #expect(inputs.count == 1)
            let isSingleFile = [.gzip, .xz, .zstd, .bzip2].contains(container)
            #expect(inputs.first?.path == (isSingleFile ? path : path + ":captures/\(scenario).log"))
            #expect(try Self.summary(path: path) == Self.summary(path: plain), "\(container) \(scenario) \(format)")
        }
    }

    @Test("an archive with several captures is several inputs, each named archive:path; other files are skipped")
    func severalCaptures() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("captures.zip")
        try ArchiveFixtures.write(path, .zip, members: [
            ("README.txt", Array("captures from the lab\n".utf8)),
            ("a/beacons.btsnoop", try Self.bytes("beacons")),
            ("b/heart.pcap", try Self.bytes("heart-rate-session", .pcapH4WithDirection)),
        ])
        let inputs = try CaptureInputs.resolve(path)
        #expect(inputs.map(\.displayName) == ["captures.zip:a/beacons.btsnoop", "captures.zip:b/heart.pcap"])
        #expect(try Self.summary(inputs[1]) == Self.summary(path: try ScenarioFixtures.path("heart-rate-session", format: .pcapH4WithDirection)))
    }

    @Test("a compressed capture inside an archive (btsnoop_hci.log.gz, .zst in a zip) is read one level deep")
    func nested() throws {
        let dir = try TemporaryDirectory()
        let plain = try ScenarioFixtures.path("wasteful-central")
        var members: [(String, [UInt8])] = []
        for container in [ArchiveFixtures.Container.gzip, .zstd, .xz] {
            let inner = dir.file("inner.\(container.rawValue)")
            try ArchiveFixtures.write(inner, container, members: [("x", try TemporaryDirectory.contents(of: plain))])
            members.append(("logs/btsnoop_hci.log.\(container.rawValue)", try TemporaryDirectory.contents(of: inner)))
        }
        let path = dir.file("outer.zip")
        try ArchiveFixtures.write(path, .zip, members: members)
        let inputs = try CaptureInputs.resolve(path)
        #expect(inputs.map(\.displayName) == ["outer.zip:logs/btsnoop_hci.log.gzip", "outer.zip:logs/btsnoop_hci.log.zstd", "outer.zip:logs/btsnoop_hci.log.xz"])
        for input in inputs { #expect(try Self.summary(input) == Self.summary(path: plain)) }
    }

    /// The layout `adb bugreport` writes: the text at the top, the file system under FS/.
    static func bugReport(_ path: String, log: [UInt8]?, last: [UInt8]? = nil, summary: [UInt8]? = nil) throws {
        var members: [(String, [UInt8])] = [
            ("version.txt", Array("2.0".utf8)),
            ("main_entry.txt", Array("bugreport-sdk_gphone64-UE1A.260115.001-2026-01-15-10-02-00.txt".utf8)),
            ("bugreport-sdk_gphone64-UE1A.260115.001-2026-01-15-10-02-00.txt", ArchiveFixtures.bugReportText(summary: summary)),
            ("FS/data/misc/bluetooth/logs/btsnoop_hci.log.filtered.last", []),
        ]
        if let last { members.append(("FS/data/misc/bluetooth/logs/btsnoop_hci.log.last", last)) }
        if let log { members.append(("FS/data/misc/bluetooth/logs/btsnoop_hci.log", log)) }
        members.append(("FS/proc/version", Array("Linux version 6.1\n".utf8)))
        try ArchiveFixtures.write(path, .zip, members: members)
    }

    @Test("an Android bug report: its snoop log, named inside the zip, says it was used")
    func bugReportLog() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("bugreport.zip")
        let plain = try ScenarioFixtures.path("wasteful-central")
        try Self.bugReport(path, log: try Self.bytes("wasteful-central"),
                           summary: ArchiveFixtures.btsnooz(fromBTSnoop: try Self.bytes("wasteful-central"), version: 2))
        let inputs = try CaptureInputs.resolve(path)
        #expect(inputs.map(\.displayName) == ["bugreport.zip:FS/data/misc/bluetooth/logs/btsnoop_hci.log"])
        #expect(inputs[0].notices.contains { $0.contains("full snoop log") })
        #expect(try Self.summary(inputs[0]) == Self.summary(path: plain))
    }

    @Test("a rotated log inside a bug report: .last then the current log, one connection across the cut")
    func bugReportRotated() throws {
        let dir = try TemporaryDirectory()
        let original = try Self.bytes("heart-rate-session")
        let cut = try Self.recordInsideConnection(original)
        let (last, current) = ArchiveFixtures.rotate(original, at: cut)
        let path = dir.file("bugreport.zip")
        try Self.bugReport(path, log: current, last: last)
        let inputs = try CaptureInputs.resolve(path)
        #expect(inputs.map(\.displayName) == ["bugreport.zip:FS/data/misc/bluetooth/logs/btsnoop_hci.log.last+btsnoop_hci.log"])
        let joined = try Self.summary(inputs[0])
        let plain = try Self.summary(path: try ScenarioFixtures.path("heart-rate-session"))
        #expect(joined.connections == 1)
        #expect(joined == plain)
    }

    /// The number of a record in the middle of the scenario's connection (ACL between its connect and disconnect).
    static func recordInsideConnection(_ bytes: [UInt8]) throws -> Int {
        let acl = ArchiveFixtures.btsnoopRecords(bytes).records.enumerated().filter { $0.element.data.first == 2 }.map(\.offset)
        try #require(acl.count > 10)
        return acl[acl.count / 2]
    }

    @Test("rotated files given on the command line are one capture, one connection across the cut; out of order they stay two")
    func rotatedFiles() throws {
        let dir = try TemporaryDirectory()
        let original = try Self.bytes("heart-rate-session")
        let (last, current) = ArchiveFixtures.rotate(original, at: try Self.recordInsideConnection(original))
        let lastPath = try dir.write("btsnoop_hci.log.last", last)
        let currentPath = try dir.write("btsnoop_hci.log", current)
        for order in [[lastPath, currentPath], [currentPath, lastPath]] {
            let resolved = CaptureInputs.resolve(order)
            #expect(resolved.count == 1)
            let input = try resolved[0].get()
            #expect(input.displayName == "btsnoop_hci.log.last+btsnoop_hci.log")
            let joined = try Self.summary(input)
            #expect(joined.connections == 1)
            #expect(joined == (try Self.summary(path: try ScenarioFixtures.path("heart-rate-session"))))
        }
        // Apart, the current log starts mid-connection: an implicit connection, so two in all.
        let apart = try Self.summary(path: currentPath).connections + Self.summary(path: lastPath).connections
        #expect(apart == 2)
        // A ".last" that is newer than the log (Bluetooth restarted with a wrong clock) is not joined.
        let (early, late) = ArchiveFixtures.rotate(original, at: 40)
        let swappedLast = try dir.write("x.log.last", late)
        let swappedCurrent = try dir.write("x.log", early)
        #expect(CaptureInputs.resolve([swappedLast, swappedCurrent]).count == 2)
    }

    @Test("a bug report without a snoop log: the btsnooz summary in its text, versions 1 and 2", arguments: [1, 2])
    func btsnooz(version: Int) throws {
        let dir = try TemporaryDirectory()
        let original = try Self.bytes("heart-rate-session")
        let path = dir.file("bugreport-v\(version).zip")
        try Self.bugReport(path, log: nil, summary: ArchiveFixtures.btsnooz(fromBTSnoop: original, version: version))
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1)
        #expect(inputs[0].displayName == "bugreport-v\(version).zip:bugreport-sdk_gphone64-UE1A.260115.001-2026-01-15-10-02-00.txt")
        #expect(inputs[0].notices.contains { $0.contains("btsnooz summary") && $0.contains("ACL payloads cut") })
        let capture = try inputs[0].open()
        #expect(capture.info.format == .btsnooz(version: version))
        // Same packets and times; ACL payloads were cut, so no ATT is decoded past the first bytes.
        var statistics = StatisticsCollector()
        let counted = try capture.accept(&statistics)
        var plainStatistics = StatisticsCollector()
        let plain = try OpenedCapture.open(path: try ScenarioFixtures.path("heart-rate-session")).accept(&plainStatistics)
        #expect(counted.records == plain.records)
        #expect(counted.firstTimestamp == plain.firstTimestamp && counted.lastTimestamp == plain.lastTimestamp)
        #expect(counted.commands == plain.commands && counted.events == plain.events)
        #expect(counted.connections == plain.connections)
        #expect(counted.aclSent == plain.aclSent && counted.aclReceived == plain.aclReceived)
        // A bug report text on its own (as a colleague might send it) is read too.
        let text = try dir.write("bugreport.txt", ArchiveFixtures.bugReportText(summary: ArchiveFixtures.btsnooz(fromBTSnoop: original, version: version)))
        #expect(try CaptureInputs.resolve(text).first?.open().info.format == .btsnooz(version: version))
    }

    /// PacketLogger records (little-endian length, then what it counts) split in `parts` at record boundaries.
    static func splitPacketLogger(_ bytes: [UInt8], parts: Int) -> [[UInt8]] {
        var starts: [Int] = []
        var at = 0
        while at + 4 <= bytes.count {
            starts.append(at)
            at += 4 + Int(bytes[at..<at + 4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        let cuts = (1..<parts).map { starts[starts.count * $0 / parts] }
        return zip([0] + cuts, cuts + [bytes.count]).map { Array(bytes[$0..<$1]) }
    }

    @Test("a sysdiagnose: the PacketLogger files under logs/Bluetooth, oldest first, as one capture")
    func sysdiagnose() throws {
        let dir = try TemporaryDirectory()
        let original = try Self.bytes("heart-rate-session", .packetLoggerLE)
        let parts = Self.splitPacketLogger(original, parts: 3)
        let path = dir.file("sysdiagnose_2026.01.15_10-02-00_iPhone-OS_iPhone_23A341.tar.gz")
        let root = "sysdiagnose_2026.01.15_10-02-00_iPhone-OS_iPhone_23A341/"
        // Names in another order than time: the files are put in order by their first record.
        try ArchiveFixtures.write(path, .tarGzip, members: [
            (root + "logs/Bluetooth/bluetoothd-hci-latest.pklg", parts[2]),
            (root + "logs/Bluetooth/bluetoothd-hci-2026_01_15_10_00_00.pklg", parts[0]),
            (root + "logs/Bluetooth/bluetoothd-hci-2026_01_15_10_00_30.pklg", parts[1]),
            (root + "summaries/sysdiagnose.log", Array("done\n".utf8)),
        ])
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1)
        #expect(inputs[0].path.hasSuffix("bluetoothd-hci-2026_01_15_10_00_00.pklg+bluetoothd-hci-2026_01_15_10_00_30.pklg+bluetoothd-hci-latest.pklg"))
        #expect(try Self.summary(inputs[0]) == Self.summary(path: try ScenarioFixtures.path("heart-rate-session", format: .packetLoggerLE)))
    }

    @Test("standard input: a compressed capture, or the first capture of an archive")
    func standardInputHandling() throws {
        // Standard input is covered by the CLI tests (a pipe); here the archive opener on a ByteSource is.
        let dir = try TemporaryDirectory()
        let path = dir.file("x.zst")
        try ArchiveFixtures.write(path, .zstd, members: [("x", try Self.bytes("beacons"))])
        let source = try ByteSource(path: path)
        let archive = try ArchiveReader(source: source)
        let member = try #require(try archive.nextMember())
        #expect(member.path == nil)
        let capture = try OpenedCapture.open(source: ByteSource(input: archive.memberInput()))
        var statistics = StatisticsCollector()
        #expect(try capture.accept(&statistics).records > 500)
    }

    // MARK: - Bad archives

    @Test("a truncated tar.gz: the records before the cut are read, the cut is counted and located")
    func truncated() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("cut.tar.gz")
        try ArchiveFixtures.write(path, .tarGzip, members: [("btsnoop_hci.log", try Self.bytes("wasteful-central"))])
        let whole = try TemporaryDirectory.contents(of: path)
        let cut = try dir.write("cut-short.tgz", Array(whole.prefix(whole.count * 2 / 3)))
        let inputs = try CaptureInputs.resolve(cut)
        try #require(inputs.count == 1)
        let capture = try inputs[0].open()
        var statistics = StatisticsCollector()
        let counted = try capture.accept(&statistics)
        #expect(counted.records > 100 && counted.records < 1523)
        #expect(capture.issues.count >= 1)
        let issue = try #require(capture.issues.issues.first)
        #expect(issue.code == .readError || issue.code == .truncatedRecord)
        #expect(issue.recordNumber == counted.records + 1)
        #expect(capture.issues.refusal == nil)
    }

    @Test("a corrupt zip: what can be read is, the damage is counted; garbage after a zip magic is refused")
    func corrupt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("bug.zip")
        try ArchiveFixtures.write(path, .zip, members: [("btsnoop_hci.log", try Self.bytes("wasteful-central"))])
        var bytes = try TemporaryDirectory.contents(of: path)
        for i in stride(from: bytes.count / 2, to: bytes.count / 2 + 64, by: 1) { bytes[i] ^= 0x5A }
        let damaged = try dir.write("damaged.zip", bytes)
        if let inputs = try? CaptureInputs.resolve(damaged), let input = inputs.first {
            let capture = try input.open()
            var statistics = StatisticsCollector()
            let counted = try capture.accept(&statistics)
            #expect(counted.records < 1523)
            #expect(capture.issues.count >= 1)
        }
        let garbage = try dir.write("garbage.zip", [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0xEE, count: 300))
        #expect(throws: CaptureError.self) { try CaptureInputs.resolve(garbage) }
        let empty = dir.file("empty.zip")
        try ArchiveFixtures.write(empty, .zip, members: [("notes.txt", Array("no capture\n".utf8))])
        #expect(throws: CaptureError(.notACapture, "")) { try CaptureInputs.resolve(empty) }
    }

    @Test("decompression bombs are refused, not expanded: by ratio while reading, by declared size at the header")
    func bombs() throws {
        let dir = try TemporaryDirectory()
        // A valid btsnoop header, then 64 MiB of zeros: 24-byte empty records for ever, 1000-fold compressed.
        let bomb = CaptureBytes.btsnoopHeader(datalink: 1002) + [UInt8](repeating: 0, count: 64 << 20)
        for (container, options) in [(ArchiveFixtures.Container.xz, nil), (.zip, "zip:compression-level=9"), (.zstd, nil), (.gzip, "gzip:compression-level=9")] as [(ArchiveFixtures.Container, String?)] {
            let path = dir.file("bomb.\(container.rawValue)")
            try ArchiveFixtures.write(path, container, members: [("btsnoop_hci.log", bomb)], options: options)
            let inputs = try CaptureInputs.resolve(path)
            let capture = try inputs[0].open()
            var statistics = StatisticsCollector()
            let counted = try capture.accept(&statistics)
            let refusal = try #require(capture.issues.refusal, "\(container)")
            #expect(refusal.contains("decompression bomb"))
            #expect(counted.records < (20 << 20) / 24)
        }
        // A header that declares more than the limit is refused before a byte is expanded.
        let path = dir.file("big.tar")
        try ArchiveFixtures.write(path, .tar, members: [("btsnoop_hci.log", try Self.bytes("beacons"))])
        var limits = ArchiveReader.Limits()
        limits.maximumMemberSize = 1024
        let archive = try ArchiveReader(path: path, limits: limits)
        #expect(throws: CaptureError(.refused, "")) { try archive.nextMember() }
    }
}
