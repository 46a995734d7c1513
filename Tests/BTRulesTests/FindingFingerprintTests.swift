import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTScenario
import TestSupport
@testable import BTRules

@Suite("Finding fingerprints")
struct FindingFingerprintTests {
    @Test("numbers are dropped from the message; the ASCII fast path matches the Character-by-Character rule",
          arguments: [
              "connection #2 (handle 0x0041) stayed up 30 s without ATT traffic",
              "42 notifications at 1.0 Hz, 7.5 ms interval",
              "no digits at all",
              "",
              "Write Request to Heart Rate Control Point [0x001d] — 3×, ½ of them ²",  // not ASCII: the slow path
              "ID ٣ in Arabic-Indic digits, 10 µs",
          ])
    func withoutNumbers(message: String) {
        #expect(Finding.withoutNumbers(message) == message.filter { !$0.isNumber })
        #expect(!Finding.withoutNumbers(message).contains { $0.isASCII && $0.isNumber })
    }

    /// Every capture in samples/ (the checked-in files, every format).
    static let samples: [String] = {
        let directory = SchemaValidation.packageRoot.appendingPathComponent("samples")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasSuffix(".md") && !$0.hasPrefix(".") }.sorted()
            .map { directory.appendingPathComponent($0).path }
    }()

    /// Every rule's findings on `model`, before the auditor's de-duplication could hide two that share one.
    static func everyRule(_ model: CaptureModel) -> [Finding] {
        RuleRegistry.all.flatMap { rule in
            rule.init().evaluate(model, context: RuleContext(description: rule.description, overrides: [:]))
        }
    }

    static func model(_ path: String) throws -> CaptureModel {
        var collector = TrackingCollector(options: .withoutAdvertisers)  // as `btlens audit` tracks
        return try OpenedCapture.open(path: path).accept(&collector)
    }

    @Test("the samples are all there")
    func samplesFound() {
        #expect(Self.samples.count >= 13)
        #expect(Self.samples.contains { $0.hasSuffix("/wasteful-central.btsnoop") })
    }

    @Test("within a capture, different findings have different fingerprints", arguments: samples)
    func uniquePerCapture(path: String) throws {
        let model = try Self.model(path)
        let found = Self.everyRule(model)
        let fingerprints = found.map(\.fingerprint)
        let repeated = Dictionary(grouping: fingerprints, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "\(path): \(repeated)")
        // The auditor keeps them all.
        #expect(Auditor().audit(model, file: path).count == found.count)
        for f in found {
            #expect(f.fingerprint.hasPrefix("v2|\(f.id)|hci\(f.controller)|"), "\(f.fingerprint)")
            #expect(f.fingerprint.split(separator: "|", omittingEmptySubsequences: false).count == 6, "\(f.fingerprint)")
            // Never the connection's handle: the controller picks another one next time.
            if let c = f.connection { #expect(!f.fingerprint.contains(Hex.u16(c.handle)), "\(f.fingerprint)") }
        }
    }

    @Test("the wasteful-central sample's fingerprints, field by field")
    func wastefulCentral() throws {
        let path = try #require(Self.samples.first { $0.hasSuffix("/wasteful-central.btsnoop") })
        let fingerprints = Auditor().audit(try Self.model(path), file: path).map(\.fingerprint)
        let peer = "E1:7F:03:9A:42:42"
        #expect(fingerprints.contains("v2|BTL002|hci0|no-peer|-|-"))
        #expect(fingerprints.contains("v2|BTL002|hci0|no-peer|-|#2"))  // the second unfiltered scan session
        #expect(fingerprints.contains("v2|BTL006|hci0|\(peer)/1|-|-"))
        #expect(fingerprints.contains("v2|BTL006|hci0|\(peer)/2|-|-"))  // the second link to the same sensor
        #expect(fingerprints.contains("v2|BTL012|hci0|\(peer)/1|2a05|-"))  // Service Changed, by UUID
        #expect(fingerprints.contains("v2|BTL010|hci0|\(peer)/2|\(SampleProfiles.enviroConfig)|0x12"))  // Write Request
    }

    /// Fingerprints of the findings of every rule on the model, in order.
    static func fingerprints(_ model: CaptureModel) -> [String] {
        Auditor().audit(model, file: "x").map(\.fingerprint)
    }

    /// `scenario` played straight into the tracker, as `btlens audit` tracks a file.
    static func model(_ scenario: Scenario) throws -> CaptureModel {
        let sink = ScriptTracker()
        try scenario.run(into: sink)
        return sink.tracker.finish()
    }

    @Test("the same session recorded with other connection handles has the same fingerprints")
    func otherHandles() throws {
        let sample = Self.fingerprints(try Self.model(WastefulCentral.scenario))
        let again = try Self.model(WastefulCentral.scenario(firstHandle: 0x004B, secondHandle: 0x0E2F))
        #expect(again.connections.map(\.handle) == [0x004B, 0x0E2F])
        let audited = Auditor().audit(again, file: "x")
        #expect(sample.count == 16)
        #expect(audited.map(\.fingerprint) == sample)
        // What the message-based fingerprint of version 1 made of it: other handles, other fingerprints.
        let before = Auditor().audit(try Self.model(WastefulCentral.scenario), file: "x").map(\.legacyFingerprint)
        #expect(audited.map(\.legacyFingerprint) != before)
    }

    /// A link that discovers the sensor, polls Sensor Data every `period` ms, then idles 40 s at 7.5 ms.
    static func polling(handle: UInt16, period: Int) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s, handle: handle)
            _ = att.discoverEverything()
            for _ in 0..<5 {
                s.wait(ms: Int64(period))
                _ = att.read(RuleScript.data.valueHandle)
            }
            s.wait(seconds: 40)
            s.disconnect(att.connection)
        }
    }

    @Test("numbers whose unit changes with their size (ms, s) and other handles (0x0040, 0x0abc) leave it alone")
    func otherMagnitudes() throws {
        let fast = Auditor().audit(Self.polling(handle: 0x0040, period: 800), file: "x")
        let slow = Auditor().audit(Self.polling(handle: 0x0ABC, period: 1_500), file: "x")
        let poll = try #require(fast.first { $0.id == "BTL005" })
        // The read's round trip adds a little to the period: "every 813 ms" and "every 1.5 s".
        #expect(poll.message.contains(" ms over"), "\(poll.message)")
        let slowPoll = try #require(slow.first { $0.id == "BTL005" })
        #expect(slowPoll.message.contains("every 1.") && !slowPoll.message.contains(" ms over"), "\(slowPoll.message)")
        #expect(poll.fingerprint == "v2|BTL005|hci0|\(RuleScript.sensor.address)/1|\(SampleProfiles.enviroSensorData)|-")
        #expect(fast.map(\.fingerprint) == slow.map(\.fingerprint))
        #expect(fast.map(\.legacyFingerprint) != slow.map(\.legacyFingerprint))
    }

    @Test("attributes by what they are in the database: value, declaration, descriptor, service, unknown")
    func attributes() throws {
        let model = try trackScenario("wasteful-central")
        let c = try #require(model.connections.first)
        let data = try #require(c.gatt.characteristics.first { $0.uuid == SampleProfiles.enviroSensorData })
        let cccd = try #require(c.gatt.descriptors(of: data).first { $0.isCCCD })
        let key = SampleProfiles.enviroSensorData.description
        #expect(Finding.attribute(data.valueHandle, in: c.gatt) == key)
        #expect(Finding.attribute(data.declarationHandle, in: c.gatt) == key + "/declaration")
        #expect(Finding.attribute(cccd.handle, in: c.gatt) == key + "/2902")
        let service = try #require(c.gatt.services.first { $0.uuid == BluetoothUUID(uuid16: 0x1800) })
        #expect(Finding.attribute(service.startHandle, in: c.gatt) == "service:1800")
        #expect(Finding.attribute(0xFFF0, in: c.gatt) == "0xfff0")
        #expect(Finding.attribute(data.valueHandle, in: nil) == Hex.u16(data.valueHandle))
    }

    @Test("links are numbered per peer; a link the capture joined midway counts among the unknown peers")
    func subjects() throws {
        #expect(Finding.subject(nil, perPeer: false) == "no-peer")
        let peer = try #require(BDAddr("E1:7F:03:9A:42:42"))
        #expect(Finding.subject((peer, 2), perPeer: false) == "E1:7F:03:9A:42:42/2")
        #expect(Finding.subject((peer, 2), perPeer: true) == "E1:7F:03:9A:42:42")
        #expect(Finding.subject((nil, 1), perPeer: false) == "unknown-peer/1")
    }

    @Test("repeats of one discriminator are numbered per key")
    func repeats() {
        var r = RepeatNumbering()
        #expect(r.discriminator(key: "1") == "")
        #expect(r.discriminator(key: "1") == "#2")
        #expect(r.discriminator("0x12", key: "1") == "0x12")
        #expect(r.discriminator(key: "2") == "")
        #expect(r.discriminator("0x12", key: "1") == "0x12#2")
        #expect(r.discriminator(key: "1") == "#3")
    }
}
