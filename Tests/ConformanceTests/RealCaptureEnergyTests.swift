import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import TestSupport

/// The energy model against the controller's own activity counters (Android vendor command 0xFD59) in the real
/// captures that hold them: the model's calibration and its honest error bar on real phones.
@Suite("Real captures: energy model against the controller's counters")
struct RealCaptureEnergyTests {
    /// Captures with counters and how many reads each holds (issue 18).
    static let withCounters: [String: Int] = [
        "yeelock_smartlock_btsnoop_hci.log": 6, "pokemongo_plus_pairing_btsnoop.log": 2,
        "xiaomi_wx_vband_smartpen_btsnoop_hci.log": 4, "oppo_earbuds_classic_hfp_avrcp_btsnoop.log": 5,
    ]
    static var names: [String] { RealCaptures.available ? withCounters.keys.sorted() : [] }

    static func report(_ name: String, profile: EnergyProfile = EnergyProfile()) throws -> (CaptureModel, EnergyReport) {
        let capture = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(name).path)
        var collector = TrackingCollector(options: .withoutAdvertisers)
        let model = try capture.accept(&collector)
        return (model, EnergyReport(model: model, energy: EnergyModel(profile: profile)))
    }

    /// Intervals the comparison is asserted on: LE only (no BR/EDR link or paging), at least 5 s, and with at
    /// least 1 s of measured radio time (below that, a few hundred ms the host never sees — the controller's
    /// own background listening — dominate the ratio: yeelock's 13 s interval at 13:11:48 measured 0.2 s of rx
    /// with no scan, link or advertising in the capture).
    static func judged(_ m: EnergyReport.Measured) -> Bool {
        !m.brEdrActive && m.seconds >= 5 && m.txSeconds + m.rxSeconds >= 1
    }

    static func print(_ name: String, _ r: EnergyReport, label: String) {
        for m in r.measured {
            let error = m.error.map { "\(Int(($0 * 100).rounded())) %" } ?? "n/a"
            FileHandle.standardError.write(Data("ENERGY \(label) \(name) \(m.start.decimalString())+\(Int(m.seconds)) s: measured tx \(m.txSeconds) rx \(m.rxSeconds), model tx \(DecimalText.fixed(m.modelTxSeconds, fractionDigits: 3)) rx \(DecimalText.fixed(m.modelRxSeconds, fractionDigits: 3)), error \(error)\(m.brEdrActive ? " (BR/EDR)" : "")\(judged(m) ? "" : " [not judged]")\n".utf8))
        }
    }

    @Test("every read is decoded; yeelock and pokemongo within 25 % on judged intervals with the default profile",
          arguments: names)
    func defaults(name: String) throws {
        let (model, report) = try Self.report(name)
        #expect(model.controllerActivity.count == Self.withCounters[name])
        #expect(report.measured.count == (Self.withCounters[name] ?? 0) - 1)
        Self.print(name, report, label: "default")
        for m in report.measured where Self.judged(m) {
            let error = try #require(m.error)
            if name.hasPrefix("xiaomi") {
                // 15–45 ms links, idle: the controller counts ~0.53 ms tx and ~0.88 ms rx of radio-on time per
                // connection event (ramp-up, turnarounds), the packet-level model 0.08 and 0.25 ms; the model is
                // low by about half (the page scan priced) until a profile gives the per-event overhead (next test).
                #expect(error < -0.3, "\(name): \(error)")
            } else {
                #expect(abs(error) <= 0.25, "\(name) at \(m.start.decimalString()): \(error)")
            }
        }
    }

    @Test("calibrated on xiaomi's first interval (per-event radio overhead), its later intervals agree within 25 %")
    func calibrated() throws {
        guard RealCaptures.available else { return }
        let name = "xiaomi_wx_vband_smartpen_btsnoop_hci.log"
        let (model, plain) = try Self.report(name)
        let first = try #require(plain.measured.first)
        // Connection events in the first interval: every LE link's phases prorated to it.
        var events = 0.0
        for link in plain.links where link.modelled {
            for p in link.phases {
                let total = Double(p.end.nanoseconds - p.start.nanoseconds) / 1e9
                let overlap = Double(min(p.end, first.end).nanoseconds - max(p.start, first.start).nanoseconds) / 1e9
                guard total > 0, overlap > 0 else { continue }
                let interval = (p.parameters?.intervalMilliseconds ?? model.connections.first { $0.id == link.connection.id }?.parameters?.intervalMilliseconds ?? 30) / 1000
                events += overlap / interval
            }
        }
        #expect(events > 100)
        var profile = EnergyProfile()
        profile.phone.eventTxOverheadSeconds = (first.txSeconds - first.modelTxSeconds) / events
        profile.phone.eventRxOverheadSeconds = (first.rxSeconds - first.modelRxSeconds) / events
        let calibrated = EnergyReport(model: model, energy: EnergyModel(profile: profile))
        Self.print(name, calibrated, label: "calibrated")
        for m in calibrated.measured.dropFirst() where Self.judged(m) {
            #expect(abs(try #require(m.error)) <= 0.25, "\(m.start.decimalString()): \(String(describing: m.error))")
        }
        // The fitted overhead is physical: well under a millisecond and a half per event each way.
        #expect(profile.phone.eventTxOverheadSeconds > 0 && profile.phone.eventTxOverheadSeconds < 1.5e-3)
        #expect(profile.phone.eventRxOverheadSeconds > 0 && profile.phone.eventRxOverheadSeconds < 1.5e-3)
    }

    @Test("the total leads with the counters where they count: energy's and the audit's the same, the model's elsewhere",
          arguments: names)
    func accountedTotal(name: String) throws {
        let (model, r) = try Self.report(name)
        let t = r.accountedTotal
        let m = try #require(t.measured, "\(name): counters read")
        // The audit's total (from the model, without a report) is energy's.
        let audit = EnergyReport.accountedTotal(model: model)
        #expect(abs(audit.cost.chargeMC - t.cost.chargeMC) <= 1e-6 * max(1, t.cost.chargeMC))
        // The counted intervals' radio time is all in the total, the background or said unexplained.
        let consistent = r.measured.filter(\.countersConsistent)
        let counted = consistent.reduce(0) { $0 + $1.txSeconds + $1.rxSeconds }
        #expect(abs(m.radioSeconds + m.backgroundSeconds + m.unexplainedSeconds - counted) < 1e-6)
        // What the model gave the same activities there is its share of the intervals (bins against the exact sweep).
        let modelled = consistent.reduce(0) { $0 + $1.shares.total - $1.shares.classicRx }
        #expect(m.modelRadioSeconds <= modelled + 1e-6 * max(1, modelled))
        #expect(abs(t.cost.radioSeconds - (t.model.radioSeconds - m.modelRadioSeconds + m.radioSeconds)) < 1e-9)
        #expect(m.seconds <= r.captureSeconds + 1e-6)
    }

    @Test("the controller's chip is read from Read Local Version Information, and energy names it")
    func controllerVersion() throws {
        guard RealCaptures.available else { return }
        let (model, r) = try Self.report("xiaomi_wx_vband_smartpen_btsnoop_hci.log")
        let v = try #require(model.controllerVersion)
        // tshark: HCI 5.0 (0x09), manufacturer Qualcomm (0x001d), LMP subversion 702.
        #expect(v.manufacturer == 0x001D && v.lmpSubversion == 702 && v.hciVersion == 0x09)
        #expect(v.description == "Qualcomm, Bluetooth 5.0, LMP subversion 702")
        #expect(r.controllerVersion == v)
        // pokemongo's capture begins after the stack's start-up: no answer, nothing named.
        #expect(try Self.report("pokemongo_plus_pairing_btsnoop.log").0.controllerVersion == nil)
    }

    @Test("over the whole capture, the reasons the model is far, counted: rbp's controller counts no scan listening")
    func gapsCounted() throws {
        guard RealCaptures.available else { return }
        let (_, r) = try Self.report("rbp_device_android2016_spp_19h_apcf_btsnoop_hci.log")
        let t = try #require(r.measuredTotal)
        let first = try #require(t.gaps.first)
        #expect(first.gap == .listeningNotCounted)
        // Every interval a reason explains is one whose gap is that reason.
        for (gap, n) in t.gaps {
            #expect(r.measured.filter { $0.countersConsistent && $0.gap == gap }.count == n)
        }
        // yeelock agrees within 25 % on all but its short intervals.
        let (_, y) = try Self.report("yeelock_smartlock_btsnoop_hci.log")
        #expect(try #require(y.measuredTotal).gaps.map(\.intervals).reduce(0, +) <= 1)
    }
}
