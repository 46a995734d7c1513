import Foundation
import Testing
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTScenario
import TestSupport

/// A `btsnooz_hci.log` as found in a real Android bug report: an ordinary btsnoop file header, then btsnooz
/// version 2 records (the bug report summary's layout, uncompressed) to the end of the file. Recognised by its
/// content, read to the last record with the btsnooz caveat and no absolute time base; a damaged tail is reported
/// where it is; an ordinary btsnoop file is never taken for it.
@Suite("Android btsnooz log: btsnooz records behind a btsnoop header")
struct BTSnoozRecordsLogTests {
    static let logs = BTSnoozLogTests.logs

    static func read(_ input: CaptureInput) throws -> (records: [(kind: RecordKind, direction: Direction, payload: Int,
                                                                   original: Int, nanoseconds: Int64, offset: Int64, length: Int)],
                                                        format: CaptureFormat, issues: IssueLog) {
        let capture = try input.open()
        var records: [(kind: RecordKind, direction: Direction, payload: Int, original: Int, nanoseconds: Int64, offset: Int64, length: Int)] = []
        while let r = capture.nextRecord() {
            records.append((r.kind, r.direction, r.payload.count, r.originalLength, r.timestamp.nanoseconds, r.offset, r.length))
        }
        return (records, capture.info.format, capture.issues)
    }

    static func only(_ path: String) throws -> CaptureInput {
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1)
        return inputs[0]
    }

    static func isCaveat(_ notice: String) -> Bool { notice.contains("only the last packets") && notice.contains("ACL payloads cut") }

    @Test("annotated bytes: the generator writes the layout, the reader decodes each record as the summary's are")
    func annotatedBytes() throws {
        let expected = CaptureBytes.btsnoopHeader(datalink: 1002)  // "btsnoop\0", version 1, datalink 1002 (H4)
            // HCI_Reset: length 4 (type + 3), packet length 4, no record before it (delta 0), type 0x20 (command).
            + CaptureBytes.le16(4) + CaptureBytes.le16(4) + CaptureBytes.le32(0) + [0x20, 0x03, 0x0C, 0x00]
            // The notification, cut to 14 bytes: length 15, packet length 32, 1000 µs later, type 0x11 (ACL in).
            + CaptureBytes.le16(15) + CaptureBytes.le16(32) + CaptureBytes.le32(1_000) + [0x11]
            + Array(BTSnoozLogTests.notification[1..<15])
            // ISO, only its type: length 1, packet length 9, 1000 µs later, type 0x2D (ISO out).
            + CaptureBytes.le16(1) + CaptureBytes.le16(9) + CaptureBytes.le32(1_000) + [0x2D]
        #expect(BTSnoozLog.dump(fromBTSnoop: BTSnoozLogTests.fullLog(), layout: .btsnoozRecords) == expected)

        let dir = try TemporaryDirectory()
        // Recognised by content, whatever the name.
        let read = try Self.read(try Self.only(try dir.write("capture.log", expected)))
        #expect(read.format == .btsnoozLog && read.format.name == "btsnooz")
        try #require(read.records.count == 3)
        #expect(read.records.map(\.kind) == [.command, .acl, .iso])
        #expect(read.records.map(\.direction) == [.sent, .received, .sent])
        #expect(read.records.map(\.payload) == [3, 14, 0])
        #expect(read.records.map(\.original) == [3, 31, 8])
        // No time base: the first record at 0, the others at the deltas after it.
        #expect(read.records.map(\.nanoseconds) == [0, 1_000_000, 2_000_000])
        let offsets: [Int64] = [16, 28, 51]  // after the file header; then 9 + 3 bytes on; then 9 + 14
        #expect(read.records.map(\.offset) == offsets)
        #expect(read.records.last.map { Int($0.offset) + $0.length } == expected.count)
        #expect(read.issues.count == 0)
        #expect(read.issues.notices.filter(Self.isCaveat).count == 1)
        #expect(read.issues.notices.contains { $0.contains("no absolute time base") })
        #expect(read.issues.notices.contains { $0.contains("btsnooz log capture.log,") })
    }

    /// The file seen in a bug report: 6,990 records, 3,723 events and 3,267 commands, filling it exactly
    /// (more than the bytes looked at to recognise it). Each command and its Command Complete, then the rest
    /// of the events; the first record's delta reaches back before the ring.
    static func bugReportSizedLog() -> [UInt8] {
        typealias T = BTSnoozReader.PacketType
        var log = CaptureBytes.btsnoopHeader(datalink: 1002)
        func record(_ type: UInt8, _ packet: [UInt8], delta: UInt64) {
            log += BTSnoozLog.btsnoozRecord(type: type, kept: packet[...], packetLength: packet.count, deltaMicroseconds: delta, version: 2)
        }
        for i in 0..<3_267 {
            let enable = UInt8(i & 1)
            record(T.outCommand, [0x0C, 0x20, 0x02, enable, 0x01], delta: i == 0 ? 123_456_789 : 40_000)  // LE Set Scan Enable
            record(T.inEvent, [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], delta: 600)  // its Command Complete
        }
        for _ in 0..<(3_723 - 3_267) {
            record(T.inEvent, [0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00], delta: 1_000)  // Number Of Completed Packets
        }
        return log
    }

    @Test("a bug report's btsnooz_hci.log in this layout: every record to the last, kinds, the caveat once")
    func bugReport() throws {
        let log = Self.bugReportSizedLog()
        #expect(log.count > BTSnoozReader.logSniffLength)
        let dir = try TemporaryDirectory()
        let path = dir.file("bugreport.zip")
        try ArchiveFixtures.write(path, .zip, members: [
            ("bugreport-sdk_gphone64-UE1A.260115.001-2026-01-15-10-02-00.txt", ArchiveFixtures.bugReportText(summary: nil)),
            (Self.logs + "btsnooz_hci.log", log),
        ])
        let input = try Self.only(path)
        #expect(input.displayName == "bugreport.zip:\(Self.logs)btsnooz_hci.log")
        #expect(input.notices.filter(Self.isCaveat).count == 1)
        #expect(input.notices.contains { $0.contains("no absolute time base") })
        let read = try Self.read(input)
        #expect(read.format == .btsnoozLog)
        #expect(read.records.count == 6_990)
        #expect(read.records.filter { $0.kind == .event && $0.direction == .received }.count == 3_723)
        #expect(read.records.filter { $0.kind == .command && $0.direction == .sent }.count == 3_267)
        #expect(read.records.last.map { Int($0.offset) + $0.length } == log.count)
        #expect(read.issues.count == 0)
        #expect(read.issues.notices.filter(Self.isCaveat).count == 1)
        #expect(read.records.first?.nanoseconds == 0)
        let span: Int64 = 3_266 * 40_000_000 + 3_267 * 600_000 + 456 * 1_000_000
        #expect(read.records.last?.nanoseconds == span)
    }

    @Test("a scenario's ring in this layout reads as the btsnoop ring does: same packets, kinds, span and cut ACL")
    func scenario() throws {
        let original = try BTSnoozLogTests.heartRate()
        let dir = try TemporaryDirectory()
        let headed = try Self.read(try Self.only(try dir.write("btsnooz_hci.log", BTSnoozLog.dump(fromBTSnoop: original, layout: .btsnoozRecords))))
        let ringDir = try TemporaryDirectory()
        let ring = try Self.read(try Self.only(try ringDir.write("btsnooz_hci.log", BTSnoozLog.dump(fromBTSnoop: original))))
        #expect(ring.format == .btsnoop(datalink: BTSnoopDatalink.h4))
        #expect(headed.records.count == BTSnoozLog.packetCount(original))
        #expect(headed.records.map(\.kind) == ring.records.map(\.kind))
        #expect(headed.records.map(\.direction) == ring.records.map(\.direction))
        #expect(headed.records.map(\.payload) == ring.records.map(\.payload))
        #expect(headed.records.map(\.original) == ring.records.map(\.original))
        let start = try #require(ring.records.first?.nanoseconds)
        #expect(headed.records.map(\.nanoseconds) == ring.records.map { $0.nanoseconds - start })

        // The rules are told as for the other btsnooz captures: cut ACL payloads, an Android phone.
        var collector = TrackingCollector()
        let model = try Self.only(dir.file("btsnooz_hci.log")).open().accept(&collector)
        #expect(model.connections.contains { $0.aclPacketsCutShort > 0 && $0.hidesTraffic })
        #expect(model.platform.platform == .android)
    }

    @Test("a damaged tail: the whole records are read, the damage reported with its record and byte offset")
    func damagedTail() throws {
        let log = BTSnoozLog.dump(fromBTSnoop: try BTSnoozLogTests.heartRate(), layout: .btsnoozRecords)
        let starts = BTSnoozLog.recordStarts(log, layout: .btsnoozRecords)
        let dir = try TemporaryDirectory(), zeroDir = try TemporaryDirectory()

        // Cut inside a record, as an interrupted copy.
        let cut = BTSnoozLog.truncated(log, share: 2.0 / 3, layout: .btsnoozRecords)
        let whole = Int(Double(starts.count) * 2 / 3)
        let truncated = try Self.read(try Self.only(try dir.write("btsnooz_hci.log", cut)))
        #expect(truncated.format == .btsnoozLog)
        #expect(truncated.records.count == whole)
        try #require(truncated.issues.issues.count == 1)
        let issue = truncated.issues.issues[0]
        #expect(issue.code == .truncatedRecord && issue.recordNumber == whole + 1 && issue.byteOffset == Int64(starts[whole]))
        #expect(issue.message.contains("file ends inside the record"))

        // A record of length 0 further on: what follows cannot be found.
        var zero = log
        let bad = starts.count - 10
        zero[starts[bad]] = 0
        zero[starts[bad] + 1] = 0
        let damaged = try Self.read(try Self.only(try zeroDir.write("btsnooz_hci.log", zero)))
        #expect(damaged.records.count == bad)
        try #require(damaged.issues.issues.count == 1)
        #expect(damaged.issues.issues[0].code == .absurdLength)
        #expect(damaged.issues.issues[0].recordNumber == bad + 1 && damaged.issues.issues[0].byteOffset == Int64(starts[bad]))
    }

    @Test("an ordinary btsnoop file is never taken for it, nor a damaged one whose bytes are no btsnooz records")
    func ordinaryBTSnoop() throws {
        let dir = try TemporaryDirectory()
        var files: [(String, [UInt8])] = []
        for name in ScenarioRegistry.names {
            for format in [ScenarioFormat.btsnoopH4, .btsnoopH1, .btsnoopMonitor] {
                files.append(("\(name).\(format.rawValue)", try TemporaryDirectory.contents(of: try ScenarioFixtures.path(name, format: format))))
            }
        }
        let original = try BTSnoozLogTests.heartRate()
        files.append(("ring", BTSnoozLog.dump(fromBTSnoop: original)))
        files.append(("header-only", CaptureBytes.btsnoopHeader(datalink: 1002)))
        // A first record whose lengths are impossible, followed by bytes that are not btsnooz records.
        files.append(("garbage", CaptureBytes.btsnoopHeader(datalink: 1002) + [UInt8](repeating: 0xFF, count: 200)))
        for (name, bytes) in files {
            let capture = try Self.only(try dir.write(name, bytes)).open()
            guard case .btsnoop = capture.info.format else {
                Issue.record("\(name) read as \(capture.info.format)")
                continue
            }
            #expect(!capture.issues.notices.contains { $0.contains("no absolute time base") }, "\(name)")
        }
    }

    @Test("the fuzz seed in this layout is what the generator writes, and reads whole")
    func fuzzSeed() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Seeds/heart-rate-session.btsnooz-records.btsnooz_hci.log").path
        let expected = BTSnoozLog.dump(fromBTSnoop: try BTSnoozLogTests.heartRate(), ring: 100, layout: .btsnoozRecords)
        #expect(try TemporaryDirectory.contents(of: seed) == expected)
        let read = try Self.read(try Self.only(seed))
        #expect(read.format == .btsnoozLog && read.records.count == 100 && read.issues.count == 0)
    }

    @Test("with its .last: two captures, since times that count from each file's start cannot say they overlap")
    func withLast() throws {
        let original = try BTSnoozLogTests.heartRate()
        let packets = BTSnoozLog.packetCount(original)
        let (last, current) = BTSnoozLog.files(fromBTSnoop: original, lastDumpAt: packets / 2, layout: .btsnoozRecords)
        let dir = try TemporaryDirectory()
        let lastPath = try dir.write("btsnooz_hci.log.last", last)
        let currentPath = try dir.write("btsnooz_hci.log", current)
        let inputs = try CaptureInputs.resolve([lastPath, currentPath]).map { try $0.get() }
        #expect(inputs.map(\.displayName) == ["btsnooz_hci.log.last", "btsnooz_hci.log"])
        #expect(try inputs.map { try Self.read($0).records.count } == [packets / 2, packets])

        let zip = dir.file("bugreport.zip")
        try ArchiveFixtures.write(zip, .zip, members: [(Self.logs + "btsnooz_hci.log.last", last), (Self.logs + "btsnooz_hci.log", current)])
        let members = try CaptureInputs.resolve(zip)
        #expect(members.count == 2)
        #expect(members.allSatisfy { $0.notices.contains { $0.contains("no absolute time base") } })
    }
}
