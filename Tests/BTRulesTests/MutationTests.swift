import Foundation
import Testing
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport
import BTScenario
import TestSupport

/// Bad input must never crash or hang btlens: every sample is damaged in many seeded ways (flipped bytes,
/// cut short, garbage inserted, lengths rewritten) and run through reading, decoding, tracking and every rule.
/// A trap anywhere fails the whole test process; a hang is caught by the record budget below.
@Suite("damaged captures")
struct MutationTests {
    static let samples = ["heart-rate-session", "wasteful-central", "peripheral-role", "beacons", "fragmented-acl"]
    static let formats: [ScenarioFormat] = [.btsnoopH4, .btsnoopMonitor, .packetLoggerLE, .pcapH4WithDirection]

    /// Reads, tracks and audits `bytes`; returns the record count (nil when the file is refused outright).
    static func survive(_ bytes: [UInt8], in dir: TemporaryDirectory, name: String) throws -> Int? {
        let path = try dir.write(name, bytes)
        // What `btlens decode -v` does: describe every record, fields included.
        if let capture = try? OpenedCapture.open(path: path) {
            struct Describe: RecordSourceVisitor {
                mutating func visit<S: RecordSource>(_ source: S) throws -> Int {
                    var decoder = PacketDecoder(issues: source.issues)
                    var characters = 0
                    while let record = source.next() {
                        let frame = decoder.decode(record)
                        characters += FrameDescription.summary(frame).count + FrameDescription.fields(frame).count
                    }
                    return characters
                }
            }
            var describe = Describe()
            _ = try capture.accept(&describe)
        }
        guard let capture = try? OpenedCapture.open(path: path) else { return nil }
        var collector = TrackingCollector()
        let model = try capture.accept(&collector)
        let findings = Auditor().audit(model, file: name)
        // Every report renders.
        _ = TimelineReport.text(file: name, model: model)
        _ = TimelineReport.json(file: name, model: model).serialized()
        _ = GATTReport.text(file: name, model: model)
        _ = GATTReport.json(file: name, model: model).serialized()
        let run = AuditRun(captures: [AuditedCapture(file: name, findings: findings)], failOn: .warning, version: "test")
        _ = AuditSARIF.render(run) + AuditJUnit.render(run) + AuditMarkdown.render(run) + AuditJSON.render(run)
        _ = AuditHTML.render(run, models: [name: model])
        let devices = DevicesReport(file: name, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
        _ = DevicesText.render(devices) + DevicesJSON.object(devices).serialized()
        // Bounded: never more records than bytes could hold, and issues are counted, not kept without end.
        #expect(model.records <= bytes.count / 4 + 1)
        #expect(capture.issues.issues.count <= capture.issues.keepLimit)
        return model.records
    }

    @Test("seeded corruption of every sample in four formats", arguments: samples)
    func corrupt(scenario: String) throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0xF00D ^ UInt64(scenario.utf8.count))
        var survived = 0
        for format in Self.formats {
            let original = try TemporaryDirectory.contents(of: try ScenarioFixtures.path(scenario, format: format))
            for round in 0..<40 {
                var bytes = original
                switch round % 4 {
                case 0:  // flip bytes anywhere, header included
                    for _ in 0..<rng.int(in: 1...20) {
                        let i = rng.int(in: 0...(bytes.count - 1))
                        bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                    }
                case 1:  // cut short at a random point
                    bytes = Array(bytes.prefix(rng.int(in: 0...bytes.count)))
                case 2:  // garbage inserted in the middle
                    let at = rng.int(in: 0...bytes.count)
                    let junk = (0..<rng.int(in: 1...300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    bytes.insert(contentsOf: junk, at: at)
                default:  // a run of 0xFF (absurd lengths) over a random place
                    let at = rng.int(in: 0...(bytes.count - 1))
                    for i in at..<min(bytes.count, at + rng.int(in: 1...8)) { bytes[i] = 0xFF }
                }
                if try Self.survive(bytes, in: dir, name: "\(scenario)-\(format.rawValue)-\(round).cap") != nil {
                    survived += 1
                }
            }
        }
        #expect(survived > 0)
    }

    @Test("random bytes, and random bytes behind a valid header")
    func garbage() throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 0xBAD_C0DE)
        let headers: [[UInt8]] = [
            CaptureBytes.btsnoopHeader(datalink: 1002), CaptureBytes.btsnoopHeader(datalink: 2001),
            CaptureBytes.btsnoopHeader(datalink: 1001), CaptureBytes.pcapHeader(linktype: 201),
            CaptureBytes.pcapHeader(linktype: 254), [],
        ]
        var opened = 0
        for round in 0..<120 {
            let body = (0..<rng.int(in: 0...4000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if try Self.survive(headers[round % headers.count] + body, in: dir, name: "garbage-\(round)") != nil {
                opened += 1
            }
        }
        #expect(opened >= 80)  // every file with a valid header opens; pure noise is refused
    }
}
