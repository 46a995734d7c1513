import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTReport
import BTScenario
import TestSupport

/// `TrackingCollector` tracks links and scans on a second thread (`LinkThreadPolicy`): the model, and the
/// issues found on the way, must be exactly those of the one-thread path, on every sample and real capture.
@Suite("Tracking on a second thread")
struct LinkThreadTests {
    /// Timeline, GATT and devices JSON plus the issue log, tracked with `policy`.
    static func reports(_ path: String, policy: LinkThreadPolicy) throws -> [String] {
        try PipelineExercise.trackingReports(path: path, linkThread: policy)
    }

    static var samples: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "samples")) ?? []).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted()
    }

    @Test("samples: the same reports with and without the link thread", arguments: samples)
    func sample(name: String) throws {
        let path = "samples/" + name
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        #expect(one.count == 5)
        for (a, b) in zip(one, two) { #expect(a == b, "\(name)") }
    }

    @Test("real captures: the same reports with and without the link thread", arguments: RealCaptures.names)
    func real(name: String) throws {
        let path = RealCaptures.directory.appendingPathComponent(name).path
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        #expect(one.count == 5)
        for (a, b) in zip(one, two) { #expect(a == b, "\(name)") }
    }

    /// The reading thread walks advertising events and hands the link thread only each report's sender: an
    /// event that declares more reports than it holds must be reported once, and its reports that fit counted,
    /// as on one thread.
    @Test("an advertising event with fewer reports than it declares: the same issue and counts either way")
    func truncatedAdvertisingEvent() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "samples/wasteful-central.btsnoop")))
        // btsnoop: a 16-byte file header, then records of a 24-byte header (included length at +4) and H4
        // bytes. The first LE Advertising Report event (04 3E len 02 count) gets a count of 3 for its one report.
        var offset = 16
        var patched = false
        while offset + 24 <= bytes.count && !patched {
            let length = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])
            let h4 = offset + 24
            if bytes[h4] == 0x04 && bytes[h4 + 1] == 0x3E && bytes[h4 + 3] == 0x02 && bytes[h4 + 4] == 1 {
                bytes[h4 + 4] = 3
                patched = true
            }
            offset = h4 + length
        }
        #expect(patched)
        // The same file name as the sample's, so the reports can be compared whole.
        let directory = try TemporaryDirectory()
        let path = directory.file("wasteful-central.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        for (a, b) in zip(one, two) { #expect(a == b) }
        let issueLog = one[4]
        #expect(issueLog.hasPrefix("1 issues:"))
        #expect(issueLog.contains("declares 3 reports, 1 fit in the event"))
        // The one report that fits is still counted: the first scan session has all of the original's reports.
        let original = try Self.reports("samples/wasteful-central.btsnoop", policy: .never)
        #expect(one[0] == original[0])
    }

    /// With two threads, L2CAP is decoded on the link thread, which reports its issues into a log of its own,
    /// merged into the reading thread's at the end: the merged log must read as the one-thread log does, in
    /// record order, next to the reader's own issues for the same records.
    @Test("damaged ACL data: the same L2CAP issues, in the same order, on one thread and two")
    func damagedACL() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "samples/fragmented-acl.btsnoop")))
        // btsnoop: a 16-byte file header, then records of a 24-byte header (original length at +0, included
        // length at +4) and H4 bytes; an ACL packet (H4 type 2) has its packet boundary flag in bits 4-5 of its
        // second byte. Every 5th continuation becomes a start (interrupting a PDU, then a bad length or an
        // orphan), every 7th start a continuation (orphan), and every 11th ACL record is cut short. Between them,
        // every 3rd Number Of Completed Packets event (04 13) declares more parameters than it has: an issue the
        // reading thread reports.
        var offset = 16
        var acl = 0, events = 0, damaged = 0
        while offset + 24 <= bytes.count {
            let length = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])
            let h4 = offset + 24
            if bytes[h4] == 0x04 && bytes[h4 + 1] == 0x13 {
                events += 1
                if events % 3 == 0 { bytes[h4 + 2] = 0xFF }
            }
            if bytes[h4] == 0x02 && length > 6 {
                acl += 1
                let pb = bytes[h4 + 2] >> 4 & 3
                if pb == 1 && acl % 5 == 0 {
                    bytes[h4 + 2] = bytes[h4 + 2] & 0xCF | 0x20
                    damaged += 1
                } else if pb != 1 && acl % 7 == 0 {
                    bytes[h4 + 2] = bytes[h4 + 2] & 0xCF | 0x10
                    damaged += 1
                } else if acl % 11 == 0 {
                    bytes[offset + 3] &+= 5  // the original was longer than what the capture kept
                    damaged += 1
                }
            }
            offset = h4 + length
        }
        #expect(damaged >= 20)
        let directory = try TemporaryDirectory()
        let path = directory.file("fragmented-acl.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        for (a, b) in zip(one, two) { #expect(a == b) }
        let issueCount = Int(one[4].prefix { $0 != " " }) ?? 0
        #expect(issueCount >= 10, "\(one[4].prefix(300))")
        #expect(one[4].contains("shorter") || one[4].contains("declares"), "\(one[4].prefix(600))")
    }

    /// Messages to the link thread give their record as differences from the previous message's, and the whole
    /// record when a difference does not fit: more than 65 535 records apart (advertising reports cross without
    /// a record of their own), seconds apart, or time going backwards.
    @Test("records far apart, seconds apart and out of time order reach the link thread whole")
    func recordPlaces() throws {
        let start: UInt64 = 1_768_471_200_000_000
        func createConnection() -> [UInt8] {
            [0x01, 0x0D, 0x20, 25, 0x60, 0x00, 0x30, 0x00, 0x00, 0x00, 0x75, 0x19, 0x1A, 0xBF, 0xC0, 0x60, 0x00,
             0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00]
        }
        // Command Status: Command Disallowed for LE Create Connection.
        let refused: [UInt8] = [0x04, 0x0F, 0x04, 0x0C, 0x01, 0x0D, 0x20]
        var bytes = CaptureBytes.btsnoopHeader(datalink: 1002)
        bytes += CaptureBytes.btsnoopRecord(createConnection(), flags: 2, unixMicros: start)
        for n in 0..<70_000 {
            let report: [UInt8] = [0x04, 0x3E, 12, 0x02, 0x01, 0x00, 0x00, UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), 0x01, 0x02, 0x03, 0xC0, 0x00, 0xC4]
            bytes += CaptureBytes.btsnoopRecord(report, flags: 3, unixMicros: start + 1000 + UInt64(n))
        }
        bytes += CaptureBytes.btsnoopRecord(refused, flags: 3, unixMicros: start + 500)  // earlier than the reports
        bytes += CaptureBytes.btsnoopRecord(createConnection(), flags: 2, unixMicros: start + 10_000_000)
        bytes += CaptureBytes.btsnoopRecord(refused, flags: 3, unixMicros: start + 10_000_001)
        let directory = try TemporaryDirectory()
        let path = directory.file("places.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        for (a, b) in zip(one, two) { #expect(a == b) }
        #expect(one[0].contains("\"record\": 70002"), "\(one[0].prefix(600))")
        #expect(one[0].contains("\"record\": 70004"))
        #expect(one[0].contains("1768471210.000001"))
    }

    /// Random damage (bytes overwritten, as the fuzzing of the bad-input suites does) to every btsnoop sample:
    /// whatever the decoders make of it, both paths must agree, issues included.
    @Test("randomly damaged samples: the same reports and issues on one thread and two", arguments: 1...40)
    func randomlyDamaged(seed: UInt64) throws {
        let compared = try Self.compareDamaged(seed: seed, samples: Self.samples.filter { $0.hasSuffix(".btsnoop") })
        #expect(compared.refused == 0)  // the damage spares btsnoop's 16-byte file header
        #expect(compared.issues > 0)
    }

    /// The same for the other formats (pcap and its monitor and H4 linktypes, PacketLogger both byte orders),
    /// whose readers frame records differently. Damage that reaches a file's header makes it foreign, refused
    /// whole (which the bad-input suites test): such a copy is skipped, and most copies must still be compared.
    @Test("randomly damaged pcap and PacketLogger samples: the same reports and issues on one thread and two",
          arguments: 1...40)
    func randomlyDamagedOtherFormats(seed: UInt64) throws {
        let others = Self.samples.filter { !$0.hasSuffix(".btsnoop") }
        let compared = try Self.compareDamaged(seed: seed, samples: others)
        #expect(others.count >= 4)
        #expect(compared.refused * 2 < others.count, "\(compared.refused) of \(others.count) refused")
        #expect(compared.issues > 0)
    }

    /// Writes a damaged copy of each sample (8 to 31 bytes overwritten past the first 16), tracks it both ways and
    /// expects the same reports; returns the issues found and the copies refused as foreign.
    static func compareDamaged(seed: UInt64, samples: [String]) throws -> (issues: Int, refused: Int) {
        var rng = SplitMix64(seed: seed)  // the same bytes damaged on every run
        let directory = try TemporaryDirectory()
        var issues = 0
        var refused = 0
        for name in samples {
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "samples/" + name)))
            for _ in 0..<(8 + Int(rng.next() % 24)) {
                let at = 16 + Int(rng.next() % UInt64(bytes.count - 16))
                bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            }
            let path = directory.file(name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let one: [String]
            do {
                one = try Self.reports(path, policy: .never)
            } catch is CaptureError {
                refused += 1
                continue
            }
            let two = try Self.reports(path, policy: .always)
            for (a, b) in zip(one, two) { #expect(a == b, "\(name), seed \(seed)") }
            issues += Int(one[4].prefix { $0 != " " }) ?? 0
        }
        return (issues, refused)
    }

    @Test("samples exist, so the comparison above is not empty")
    func samplesPresent() {
        #expect(Self.samples.count >= 5)
    }
}
