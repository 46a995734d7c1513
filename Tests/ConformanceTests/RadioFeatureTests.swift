import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules
@testable import BTReport
import BTScenario
import TestSupport

/// Bluetooth Quality Reports (vendor event 0x58) and the Bluetooth 5.3–6.2 link features (subrating, Shorter
/// Connection Intervals, Channel Sounding): annotated bytes for each report and event, and the generator's
/// links priced against radio time counted by hand.
@Suite("quality reports and Bluetooth 6 link features")
struct RadioFeatureTests {
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// The BQR v6 link-quality common part (85 bytes) for handle 0x0040, field by field.
    static func linkQualityCommon(id: UInt8) -> [UInt8] {
        var b: [UInt8] = [id, 0x18] + le16(0x0040)  // report id, packet type, handle
        b += [0x01, 0x08, 0xA8, 0x14, 0x03, 0x02]  // role peripheral, tx power 8, rssi -88, snr 20, unused 3, unideal 2
        b += le16(16_000) + le32(0x1234)  // LSTO (clocks), piconet clock
        b += le32(150) + le32(7) + le32(75) + le32(0) + le32(1) + le32(0) + le32(0) + le32(0)  // retx, no rx, NAKs, …
        b += [0x42, 0x42, 0x9A, 0x03, 0x7F, 0xE1, 0x00]  // peer E1:7F:03:9A:42:42, calibration failures 0
        b += le32(333) + le32(150) + le32(0) + le32(0) + le32(4) + le32(5)  // tx packets, unacked, flushed, last, CRC, dup
        b += le32(6) + le16(0)  // rx unreceived, coex
        return b
    }

    static func decode(_ report: [UInt8]) -> BluetoothQualityReport? {
        ([BluetoothQualityReport.subeventCode] + report).withUnsafeBytes { BluetoothQualityReport(vendorEventParameters: $0) }
    }

    @Test("annotated bytes: a v6 link-quality report, with the approaching-LSTO part after it")
    func linkQuality() throws {
        var bytes = Self.linkQualityCommon(id: 0x02)
        #expect(bytes.count == BluetoothQualityReport.LinkQuality.v6Length)
        bytes += [0x01] + Self.le32(9) + Self.le32(10) + Self.le16(11) + Self.le16(12) + Self.le16(13) + Self.le32(14) + Self.le32(15)
        let r = try #require(Self.decode(bytes))
        #expect(r.id == .approachingLSTO && r.handle == 0x0040)
        guard case .linkQuality(let q, let specific) = r.body else { Issue.record("not link quality"); return }
        #expect(q.role == 1 && q.txPowerLevel == 8 && q.rssi == -88 && q.snr == 20)
        #expect(q.retransmissions == 150 && q.naks == 75 && q.txPackets == 333 && q.crcErrors == 4 && q.rxUnreceived == 6)
        #expect(q.peer == BDAddr(rawValue: 0xE1_7F_03_9A_42_42))
        #expect(q.retransmissionShare.map { abs($0 - 150.0 / 333) < 1e-9 } == true)
        #expect(specific.map(\.value) == [1, 9, 10, 11, 12, 13, 14, 15])
        #expect(QualityReport(at: RecordRef(number: 1, offset: 0, timestamp: Timestamp(nanoseconds: 0), controller: 0), report: r).showsHeavyRetransmissions)
        // The first version's 48 bytes: no address, no packet counters.
        let old = try #require(Self.decode(Array(Self.linkQualityCommon(id: 0x01).prefix(48))))
        guard case .linkQuality(let q1, let s1) = old.body else { Issue.record("not link quality"); return }
        #expect(q1.peer == nil && q1.txPackets == nil && s1.isEmpty && q1.retransmissions == 150)
        let text = QualityReportDescription.describe(r).0
        #expect(text.contains("approaching link supervision timeout") && text.contains("retransmissions 150 of 333 sent (45"))
    }

    @Test("annotated bytes: Energy Monitor, RF statistics, root inflammation, a log dump, and what is not BQR")
    func otherReports() throws {
        var energy: [UInt8] = [0x06] + Self.le16(12)  // id, average current 12 mA
        energy += Self.le32(19_000) + Self.le32(500) + Self.le32(1_000) + Self.le32(500)  // idle ms, count, active ms, count
        energy += Self.le32(0) + Self.le32(0) + [0xFC] + Self.le32(0) + Self.le32(0)  // BR/EDR tx, count, power -4, rx, count
        energy += Self.le32(53) + Self.le32(666) + [0x04] + Self.le32(164) + Self.le32(666)  // LE tx, count, power 4, rx, count
        energy += Self.le32(20_000) + (0..<6).flatMap { _ in Self.le32(0) }  // period, chain times
        #expect(energy.count == BluetoothQualityReport.EnergyMonitor.length)
        let e = try #require(Self.decode(energy))
        guard case .energyMonitor(let m) = e.body else { Issue.record("not energy"); return }
        #expect(m.averageCurrentMilliamps == 12 && m.leTxMilliseconds == 53 && m.leRxMilliseconds == 164 && m.leTxPower == 4)
        #expect(m.brEdrTxPower == -4 && m.periodMilliseconds == 20_000 && m.idleMilliseconds == 19_000)
        #expect(Self.decode(Array(energy.dropLast())).map { $0.body == .undecoded(bytes: energy.count - 2) } == true)

        let rf: [UInt8] = [0x09, 0x01] + Self.le32(1_000) + (1...19).flatMap { Self.le32(UInt32($0)) }
        #expect(rf.count == BluetoothQualityReport.RFStats.length)
        guard case .rfStats(let s)? = Self.decode(rf)?.body else { Issue.record("not RF stats"); return }
        #expect(s.periodMilliseconds == 1_000 && s.txPowerPackets == [1, 2, 3, 4] && s.rssiPackets.first == 5 && s.rssiDeltaPackets.last == 19)

        #expect(Self.decode([0x05, 0x21, 0x07])?.body == .rootInflammation(errorCode: 0x21, vendorErrorCode: 0x07))
        #expect(Self.decode([0x11] + Self.le16(0x0041) + [1, 2, 3])?.body == .logDump(handle: 0x0041, vendorBytes: 3))
        #expect(Self.decode([0x7E, 1, 2])?.body == .undecoded(bytes: 2))
        // Another vendor sub-event is not a quality report.
        #expect([0x55, 0x01].withUnsafeBytes { BluetoothQualityReport(vendorEventParameters: $0) } == nil)
    }

    @Test("annotated bytes: LE Subrate Change, Connection Rate Change, Frame Space Update, CS Procedure Enable")
    func linkFeatureEvents() throws {
        let subrate: [UInt8] = [0x00] + Self.le16(0x0040) + Self.le16(4) + Self.le16(0) + Self.le16(2) + Self.le16(500)
        let s = try #require(subrate.withUnsafeBytes { LESubrateChange(subevent: .subrateChange, $0) })
        #expect(s.handle == 0x0040 && s.subrateFactor == 4 && s.continuationNumber == 2 && s.fineInterval == nil && s.supervisionTimeout == 500)
        // 0x37 puts the interval (125 µs units) after the handle: 20 = 2.5 ms.
        let rate: [UInt8] = [0x00] + Self.le16(0x0040) + Self.le16(20) + Self.le16(1) + Self.le16(0) + Self.le16(0) + Self.le16(500)
        let r = try #require(rate.withUnsafeBytes { LESubrateChange(subevent: .connectionRateChange, $0) })
        #expect(r.fineInterval == 20 && r.subrateFactor == 1)
        var p = ConnectionParameters(interval: 2, latency: 0, supervisionTimeout: 500)
        p.fineInterval = 20
        #expect(p.intervalMilliseconds == 2.5 && p.effectiveIntervalMilliseconds == 2.5)
        p.subrateFactor = 4
        #expect(p.effectiveIntervalMilliseconds == 10 && p.description.contains("subrated ×4: effective interval 10 ms"))
        let frame: [UInt8] = [0x00] + Self.le16(0x0040) + [0x01] + Self.le16(62) + [0x03] + Self.le16(0x0001)
        #expect(frame.withUnsafeBytes { LEFrameSpaceUpdateComplete($0) }?.frameSpaceMicroseconds == 62)
        let cs: [UInt8] = [0x00] + Self.le16(0x0040) + [0, 1, 0, 0xF6] + [0x88, 0x13, 0x00] + [1] + Self.le16(0) + Self.le16(1)
            + Self.le16(8) + Self.le16(50) + Self.le16(9)
        let c = try #require(cs.withUnsafeBytes { LEChannelSoundingProcedureEnable($0) })
        #expect(c.state == 1 && c.selectedTxPower == -10 && c.subeventMicroseconds == 5_000 && c.procedureCount == 50)
    }

    // MARK: - Scenarios against radio time counted by hand

    static func model(_ name: String) throws -> CaptureModel {
        var collector = TrackingCollector()
        return try OpenedCapture.open(path: try ScenarioFixtures.path(name)).accept(&collector)
    }

    /// An idle 1M link's phone radio time per connection event: an empty packet each way (80 µs) and the
    /// receiver's guard (166 µs, the default profile's).
    static let idleEventSeconds = 80e-6 + 80e-6 + 166e-6

    static func seconds(_ a: Timestamp, _ b: Timestamp) -> Double { Double(b.nanoseconds - a.nanoseconds) / 1e9 }

    static func close(_ model: Double, _ hand: Double) -> Bool { abs(model - hand) / hand < 0.02 }

    @Test("quality-report-link: reports on their link, heavy retransmissions named, Energy Monitor beside the model")
    func qualityReportLink() throws {
        let model = try Self.model(RadioFeatureLinks.qualityName)
        #expect(model.qualityReports.count == RadioFeatureLinks.qualityReports + RadioFeatureLinks.qualityReports / 2)
        let report = EnergyReport(model: model)
        let link = try #require(report.links.first)
        #expect(link.qualityReports.count == model.qualityReports.count - RadioFeatureLinks.qualityReports / 2)
        #expect(link.heavyRetransmissions?.linkQuality?.retransmissions == RadioFeatureLinks.heavyRetransmissions)
        let hand = Self.seconds(link.start, link.end) / 0.030 * Self.idleEventSeconds
        #expect(Self.close(link.radio.total, hand), "model \(link.radio.total) s, by hand \(hand) s")
        #expect(report.monitored.count == RadioFeatureLinks.qualityReports / 2)
        for m in report.monitored {
            let error = try #require(m.error)
            #expect(abs(error) < 0.02, "Energy Monitor at \(m.end): model \(m.modelTxSeconds + m.modelRxSeconds) s, measured \(m.leTxSeconds + m.leRxSeconds) s")
        }
        let energyText = EnergyText.render(file: "x", report: report)
        #expect(energyText.contains("heavy retransmissions") && energyText.contains("energy monitor (BQR v6) against the model"))
        let timeline = TimelineReport.text(file: "x", model: model)
        #expect(timeline.contains("Bluetooth Quality Report: link quality (monitoring) handle 0x0040"))
        #expect(timeline.contains("heavy retransmissions in this phase (interval 30 ms latency 0)"))
        let json = EnergyJSON.object(file: "x", report: report).serialized()
        try SchemaValidation.validate(json, schema: "Sources/BTReport/Schemas/energy.schema.json")
    }

    @Test("subrated-link: the phase says so, the model counts the events that happen, BTL011 judges 120 ms")
    func subratedLink() throws {
        let model = try Self.model(RadioFeatureLinks.subratedName)
        let link = try #require(EnergyReport(model: model).links.first)
        try #require(link.phases.count == 2)
        let before = link.phases[0], after = link.phases[1]
        #expect(after.name.contains("subrated ×16: effective interval 120 ms"))
        let hand = Self.seconds(before.start, before.end) / 0.0075 * Self.idleEventSeconds
            + Self.seconds(after.start, after.end) / 0.120 * Self.idleEventSeconds
        #expect(Self.close(link.radio.total, hand), "model \(link.radio.total) s, by hand \(hand) s")
        #expect(TimelineReport.text(file: "x", model: model).contains("subrated ×16: effective interval 120 ms"))
        let findings = Auditor().audit(model, file: "x")
        #expect(!findings.contains { $0.id == "BTL011" }, "\(findings.map(\.message))")
    }

    @Test("short-interval-link: 2.5 ms counted, BTL011 reports it")
    func shortIntervalLink() throws {
        let model = try Self.model(RadioFeatureLinks.shortIntervalName)
        let link = try #require(EnergyReport(model: model).links.first)
        try #require(link.phases.count == 2)
        let hand = Self.seconds(link.phases[0].start, link.phases[0].end) / 0.030 * Self.idleEventSeconds
            + Self.seconds(link.phases[1].start, link.phases[1].end) / 0.0025 * Self.idleEventSeconds
        #expect(Self.close(link.radio.total, hand), "model \(link.radio.total) s, by hand \(hand) s")
        #expect(link.phases[1].name.hasPrefix("interval 2.5 ms"))
        let findings = Auditor().audit(model, file: "x").filter { $0.id == "BTL011" }
        #expect(findings.count == 1 && findings.first?.message.contains("2.5 ms") == true, "\(Auditor().audit(model, file: "x").map(\.message))")
    }

    @Test("channel-sounding-link: the subevents are radio time of their link")
    func channelSoundingLink() throws {
        let model = try Self.model(RadioFeatureLinks.channelSoundingName)
        let link = try #require(EnergyReport(model: model).links.first)
        let ranging = Double(RadioFeatureLinks.channelSoundingSubevents) * Double(RadioFeatureLinks.channelSoundingSubeventMicroseconds) / 1e6
        let hand = Self.seconds(link.start, link.end) / 0.030 * Self.idleEventSeconds + ranging
        #expect(Self.close(link.radio.total, hand), "model \(link.radio.total) s, by hand \(hand) s")
        #expect(model.connections.first?.phases.reduce(0) { $0 + $1.channelSoundingSubevents } == RadioFeatureLinks.channelSoundingSubevents)
    }

    @Test("the quality-report fuzz seed in Tests/Fuzz/Seeds is what the generator writes")
    func fuzzSeed() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Seeds").path
        #expect(try TemporaryDirectory.contents(of: seeds + "/quality-report-link.btsnoop")
                == TemporaryDirectory.contents(of: try ScenarioFixtures.path(RadioFeatureLinks.qualityName)))
    }
}
