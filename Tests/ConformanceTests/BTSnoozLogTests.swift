import Foundation
import Testing
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTScenario
import TestSupport

/// Android's binary btsnooz log (`btsnooz_hci.log`, `.last`): the ring the Bluetooth service keeps while the full
/// snoop log is off, dumped at each bug report as btsnoop H4 records cut short (AOSP snoop_logger.cc). Read on its
/// own, inside a bug report, beside the text summary; the `.last` dump overlaps the current one.
@Suite("Android btsnooz log")
struct BTSnoozLogTests {
    static let logs = "FS/data/misc/bluetooth/logs/"
    static let start: UInt64 = 1_768_471_200_000_000  // 2026-01-15 10:00:00 UTC, µs

    /// Three packets as the full log has them: HCI_Reset, a notification of 20 bytes on handle 0x0040, an ISO packet.
    static let reset: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
    static let notification: [UInt8] = [0x02,
                                        0x40, 0x20, 0x1B, 0x00,  // ACL: handle 0x0040, first fragment, 27 bytes
                                        0x17, 0x00, 0x04, 0x00,  // L2CAP: 23 bytes on CID 4 (ATT)
                                        0x1B, 0x2A, 0x00]  // ATT Handle Value Notification, handle 0x002A
        + (0..<20).map { UInt8($0) }
    static let iso: [UInt8] = [0x05, 0x60, 0x00, 0x04, 0x00, 0xAA, 0xBB, 0xCC, 0xDD]

    static func fullLog() -> [UInt8] {
        CaptureBytes.btsnoopHeader(datalink: 1002)
            + CaptureBytes.btsnoopRecord(reset, flags: 2, unixMicros: start)
            + CaptureBytes.btsnoopRecord(notification, flags: 1, unixMicros: start + 1_000)
            + CaptureBytes.btsnoopRecord(iso, flags: 0, unixMicros: start + 2_000)
    }

    @Test("annotated bytes: the generator keeps what AOSP's snoop logger keeps, and the reader reads every record")
    func annotatedBytes() throws {
        let expected = CaptureBytes.btsnoopHeader(datalink: 1002)  // "btsnoop\0", version 1, datalink 1002 (H4)
            // Command: whole. orig 4, incl 4, flags 2 (command), drops 0, time; type 01, opcode 0x0C03, 0 bytes.
            + CaptureBytes.be32(4) + CaptureBytes.be32(4) + CaptureBytes.be32(2) + CaptureBytes.be32(0)
            + CaptureBytes.be64(Self.start + CaptureBytes.btsnoopUnixOffset) + Self.reset
            // ACL off the signalling channel: orig 32 (type + 31), incl 15 (type + ACL header + L2CAP header + 6).
            + CaptureBytes.be32(32) + CaptureBytes.be32(15) + CaptureBytes.be32(1) + CaptureBytes.be32(0)
            + CaptureBytes.be64(Self.start + 1_000 + CaptureBytes.btsnoopUnixOffset) + Array(Self.notification.prefix(15))
            // ISO: only the type byte (orig 9, incl 1).
            + CaptureBytes.be32(9) + CaptureBytes.be32(1) + CaptureBytes.be32(0) + CaptureBytes.be32(0)
            + CaptureBytes.be64(Self.start + 2_000 + CaptureBytes.btsnoopUnixOffset) + [0x05]
        #expect(BTSnoozLog.dump(fromBTSnoop: Self.fullLog()) == expected)

        let dir = try TemporaryDirectory()
        let path = try dir.write("btsnooz_hci.log", expected)
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1)
        #expect(inputs[0].notices.contains { $0.contains("btsnooz log btsnooz_hci.log") && $0.contains("ACL payloads cut short") })
        let capture = try inputs[0].open()
        #expect(capture.info.format == .btsnoop(datalink: BTSnoopDatalink.h4))
        var records: [(RecordKind, Int, Int, Bool)] = []
        while let r = capture.nextRecord() { records.append((r.kind, r.payload.count, r.originalLength, r.isCutShort)) }
        try #require(records.count == 3)
        #expect(records[0] == (.command, 3, 3, false))
        #expect(records[1] == (.acl, 14, 31, true))
        #expect(records[2] == (.iso, 0, 8, true))
        #expect(capture.issues.count == 0)
    }

    @Test("an L2CAP signalling packet is kept whole; a packet is never kept past 150 bytes a record")
    func keptLengths() {
        // Connection Parameter Update Request on CID 5 (LE signalling) is cut; on CID 1 (BR/EDR signalling) kept.
        let onCID1: [UInt8] = [0x02, 0x01, 0x20, 0x10, 0x00, 0x0C, 0x00, 0x01, 0x00] + [UInt8](repeating: 0x11, count: 12)
        #expect(BTSnoozLog.kept(onCID1[...]) == onCID1.count - 1)
        var onCID5 = onCID1
        onCID5[7] = 0x05
        #expect(BTSnoozLog.kept(onCID5[...]) == BTSnoozLog.aclKept)
        let longEvent: [UInt8] = [0x04, 0x3E, 0xFF] + [UInt8](repeating: 0, count: 255)
        #expect(BTSnoozLog.kept(longEvent[...]) == 150 - 25)
    }

    static func heartRate() throws -> [UInt8] {
        try TemporaryDirectory.contents(of: try ScenarioFixtures.path("heart-rate-session"))
    }

    static func records(_ input: CaptureInput) throws -> (count: Int, first: Timestamp?, last: Timestamp?, issues: IssueLog) {
        let capture = try input.open()
        var count = 0
        var first: Timestamp?
        var last: Timestamp?
        while let r = capture.nextRecord() {
            count += 1
            if first == nil { first = r.timestamp }
            if let l = last { #expect(r.timestamp >= l, "record \(r.number) goes back in time") }
            last = r.timestamp
        }
        return (count, first, last, capture.issues)
    }

    @Test("in a bug report: .last and the log overlap and are read once, as one capture, with the caveat")
    func bugReport() throws {
        let original = try Self.heartRate()
        let packets = BTSnoozLog.packetCount(original)
        let ring = packets / 2, lastDumpAt = packets * 3 / 4
        let (last, current) = BTSnoozLog.files(fromBTSnoop: original, lastDumpAt: lastDumpAt, ring: ring)
        let dir = try TemporaryDirectory()
        let path = dir.file("bugreport.zip")
        try ArchiveFixtures.write(path, .zip, members: [
            // Beside a text summary (Android 12 may write both): the binary log is read.
            ("bugreport-sdk_gphone64-UE1A.260115.001-2026-01-15-10-02-00.txt",
             ArchiveFixtures.bugReportText(summary: ArchiveFixtures.btsnooz(fromBTSnoop: original, version: 2))),
            (Self.logs + "btsnooz_hci.log.last", last),
            (Self.logs + "btsnooz_hci.log", current),
        ])
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1, "\(inputs.map(\.path))")
        #expect(inputs[0].displayName == "bugreport.zip:\(Self.logs)btsnooz_hci.log.last+btsnooz_hci.log")
        #expect(inputs[0].notices.filter { $0.contains("btsnooz log") && $0.contains("only the last packets") }.count == 1)
        #expect(inputs[0].notices.contains { $0.contains("btsnooz log is read (not a btsnooz summary") })
        let read = try Self.records(inputs[0])
        // The union of the two dumps: from the older's first packet to the end, each once.
        #expect(read.count == packets - (lastDumpAt - ring))
        let plain = ArchiveFixtures.btsnoopRecords(original).records
        #expect(read.first?.nanoseconds == BTSnoopTime.timestamp(fromBTSnoop: plain[lastDumpAt - ring].timestamp).nanoseconds)
        #expect(read.last?.nanoseconds == BTSnoopTime.timestamp(fromBTSnoop: plain[packets - 1].timestamp).nanoseconds)
        #expect(read.issues.notices.contains { $0.contains("repeats \(lastDumpAt - (packets - ring)) packets") })

        // The rules are told: ACL payloads were cut, so ATT-reading rules see nothing and absence rules skip the link.
        var collector = TrackingCollector()
        let model = try inputs[0].open().accept(&collector)
        #expect(model.connections.contains { $0.aclPacketsCutShort > 0 && $0.hidesTraffic })
        let notes = AuditNotes.notes(model)
        #expect(notes.contains { $0.contains("cut ACL payloads short") && $0.contains("BTL005") && $0.contains("BTL006") })
        let findings = Auditor().audit(model, file: "x")
        #expect(!findings.contains { ["BTL006", "BTL011", "BTL010"].contains($0.id) }, "\(findings.map(\.id))")
    }

    @Test("given as files, on its own or with .last; a full log in the same bug report wins over it")
    func filesAndFullLog() throws {
        let original = try Self.heartRate()
        let packets = BTSnoozLog.packetCount(original)
        let (last, current) = BTSnoozLog.files(fromBTSnoop: original, lastDumpAt: packets / 2)
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("same"), withIntermediateDirectories: true)
        let lastPath = try dir.write("btsnooz_hci.log.last", last)
        let currentPath = try dir.write("btsnooz_hci.log", current)
        // The ring holds every packet here: the log repeats all of .last.
        let both = CaptureInputs.resolve([currentPath, lastPath])
        try #require(both.count == 1)
        let joined = try both[0].get()
        #expect(joined.displayName == "btsnooz_hci.log.last+btsnooz_hci.log")
        #expect(try Self.records(joined).count == packets)
        // Two bug reports with no packet between them: the same dump twice, read once.
        let samePath = try dir.write("same/btsnooz_hci.log", current)
        _ = try dir.write("same/btsnooz_hci.log.last", current)
        let same = CaptureInputs.resolve([dir.file("same/btsnooz_hci.log.last"), samePath])
        try #require(same.count == 1)
        #expect(try Self.records(try same[0].get()).count == packets)
        let alone = try CaptureInputs.resolve(currentPath)
        #expect(alone.count == 1 && alone[0].notices.contains { $0.contains("btsnooz log btsnooz_hci.log,") })

        let path = dir.file("bugreport.zip")
        try ArchiveFixtures.write(path, .zip, members: [
            (Self.logs + "btsnooz_hci.log", current), (Self.logs + "btsnoop_hci.log", original),
        ])
        #expect(try CaptureInputs.resolve(path).map(\.displayName) == ["bugreport.zip:\(Self.logs)btsnoop_hci.log"])
    }

    @Test("a truncated log: every whole record is read, the cut one is reported")
    func truncated() throws {
        let current = BTSnoozLog.dump(fromBTSnoop: try Self.heartRate())
        let cut = BTSnoozLog.truncated(current, share: 2.0 / 3)
        let dir = try TemporaryDirectory()
        let inputs = try CaptureInputs.resolve(try dir.write("btsnooz_hci.log", cut))
        let read = try Self.records(try #require(inputs.first))
        let whole = BTSnoozLog.packetCount(current)
        #expect(read.count == Int(Double(whole) * 2 / 3))
        #expect(read.issues.issues.filter { $0.code == .truncatedRecord }.count == 1)
    }

    @Test("the btsnooz fuzz seeds in Tests/Fuzz/Seeds are what the generator writes")
    func fuzzSeeds() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Seeds").path
        let original = try Self.heartRate()
        let (last, current) = BTSnoozLog.files(fromBTSnoop: original, lastDumpAt: 120, ring: 100)
        #expect(try TemporaryDirectory.contents(of: seeds + "/heart-rate-session.btsnooz_hci.log.last") == last)
        #expect(try TemporaryDirectory.contents(of: seeds + "/heart-rate-session.btsnooz_hci.log") == current)
    }
}
