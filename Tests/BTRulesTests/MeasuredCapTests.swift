import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
@testable import BTRules

/// A finding's saving never exceeds the radio time the controller's own counters measured over its span.
@Suite("Savings capped by the controller's counters")
struct MeasuredCapTests {
    /// A 0xFD59 answer at `second` counting `txMs` and `rxMs` since the previous read.
    static func read(_ second: Int64, txMs: UInt32, rxMs: UInt32) -> ControllerActivityReport {
        var bytes: [UInt8] = [0]
        for v in [txMs, rxMs, 1000, 0] as [UInt32] { bytes += withUnsafeBytes(of: v.littleEndian, Array.init) }
        let at = RecordRef(number: Int(second), offset: second, timestamp: Timestamp(nanoseconds: second * 1_000_000_000), controller: 0)
        return bytes.withUnsafeBytes { ControllerActivityReport(returnParameters: $0, at: at)! }
    }

    static func finding(from: Int64, to: Int64, radio: Double, host: Double = 0) -> Finding {
        var f = Finding(rule: ScanAfterConnectRule.description, controller: 0,
                        start: Timestamp(nanoseconds: from * 1_000_000_000), end: Timestamp(nanoseconds: to * 1_000_000_000),
                        records: [], message: "")
        f.cost = FindingCost(phone: RadioCost(radioSeconds: radio, chargeMC: host + radio * 5.8, lowMC: host + radio * 5,
                                              highMC: host + radio * 6), hostMC: host)
        return f
    }

    @Test("a saving over its span's measured radio time is scaled to it, the host part kept; one within it or uncovered is not")
    func capped() throws {
        // 0–10 s: 1 s of radio measured; 10–20 s: 4 s.
        let cap = MeasuredCap([Self.read(0, txMs: 0, rxMs: 0), Self.read(10, txMs: 200, rxMs: 800), Self.read(20, txMs: 0, rxMs: 4000)])
        #expect(cap.measured(from: 5_000_000_000, to: 15_000_000_000) == 0.5 + 2)
        #expect(cap.measured(from: 15_000_000_000, to: 25_000_000_000) == nil)
        var out = [Self.finding(from: 5, to: 15, radio: 5, host: 1), Self.finding(from: 12, to: 14, radio: 0.5),
                   Self.finding(from: 18, to: 30, radio: 9)]
        cap.apply(to: &out)
        let first = try #require(out[0].cost)
        #expect(first.measuredCap && first.phone.radioSeconds == 2.5)
        #expect(abs(first.phone.chargeMC - (1 + 2.5 * 5.8)) < 1e-9 && first.hostMC == 1)
        #expect(first.phone.lowMC <= first.phone.chargeMC && first.phone.chargeMC <= first.phone.highMC)
        #expect(out[1].cost?.measuredCap == false && out[1].cost?.phone.radioSeconds == 0.5)
        #expect(out[2].cost?.measuredCap == false && out[2].cost?.phone.radioSeconds == 9)
    }

    @Test("counters that cannot be right cap nothing: a read repeating the previous one's tx and rx, or more radio than time")
    func inconsistent() {
        let stale = MeasuredCap([Self.read(0, txMs: 100, rxMs: 900), Self.read(10, txMs: 100, rxMs: 900)])
        #expect(stale.measured(from: 1_000_000_000, to: 2_000_000_000) == nil)
        let impossible = MeasuredCap([Self.read(0, txMs: 0, rxMs: 0), Self.read(1, txMs: 800, rxMs: 900)])
        #expect(impossible.measured(from: 0, to: 500_000_000) == nil)
        let fine = MeasuredCap([Self.read(0, txMs: 0, rxMs: 0), Self.read(1, txMs: 100, rxMs: 900)])
        #expect(fine.measured(from: 0, to: 500_000_000) == 0.5)
    }
}
