import Foundation
import Testing
import BTWire
import BTTrack
import BTEnergy

/// The total the reports lead with: the model's, the controller's counters in its place where they count.
@Suite("Energy: the phone's total with the controller's counters")
struct PhoneTotalTests {
    typealias Feed = ClassicLinkEnergyTests.Feed
    static func close(_ a: Double, _ b: Double, within: Double = 1e-6) -> Bool { abs(a - b) <= within }
    static let s: Int64 = 1_000_000_000

    @Test("bins spread an activity evenly, prorate a bin cut by a read and keep their sums when they widen")
    func bins() {
        var b = ActivityBins()
        b.spread(from: 0, to: 10 * Self.s, .init(chargeMC: 10, radioSeconds: 1, backgroundRadioSeconds: 2))
        #expect(Self.close(b.amount(from: 0, to: 10 * Self.s).chargeMC, 10))
        #expect(Self.close(b.amount(from: 2 * Self.s, to: 5 * Self.s).radioSeconds, 0.3))
        // A read inside a bin: half of a 1 s bin.
        #expect(Self.close(b.amount(from: 0, to: 500_000_000).backgroundRadioSeconds, 2 * 0.5 / 10))
        #expect(b.amount(from: 20 * Self.s, to: 30 * Self.s) == ActivityBins.Bin())
        // An activity 40 hours later (and one before the first): the bins widen, the sums stay.
        b.spread(from: 40 * 3600 * Self.s, to: (40 * 3600 + 100) * Self.s, .init(chargeMC: 5, radioSeconds: 0.5))
        b.spread(from: -100 * Self.s, to: -50 * Self.s, .init(chargeMC: 1, radioSeconds: 0.1))
        #expect(b.width > 1_000_000_000)
        let all = b.amount(from: -3600 * Self.s, to: 50 * 3600 * Self.s)
        #expect(Self.close(all.chargeMC, 16) && Self.close(all.radioSeconds, 1.6) && Self.close(all.backgroundRadioSeconds, 2))
        // A query cut inside a wide bin is off by at most what that bin holds of the activity.
        #expect(Self.close(b.amount(from: 0, to: 10 * Self.s).chargeMC, 10, within: 10 * Double(b.width) / 1e10))
        // Bins made apart and added are the bins made together.
        var first = ActivityBins(), second = ActivityBins()
        first.spread(from: 0, to: 5 * Self.s, .init(chargeMC: 3, radioSeconds: 0.3))
        second.spread(from: 30 * 3600 * Self.s, to: (30 * 3600 + 5) * Self.s, .init(chargeMC: 4, radioSeconds: 0.4))
        first.add(second)
        #expect(Self.close(first.amount(from: 0, to: 31 * 3600 * Self.s).chargeMC, 7))
    }

    @Test("counters replace the model over the intervals they cover; the BR/EDR background and time the model cannot explain stay out")
    func counters() throws {
        var f = Feed()
        // 0–10 s: a 10 s BR/EDR link in active mode (in the total), counted 1 s of radio time.
        f.counters(tx: 0, rx: 0, idle: 0, at: 0)
        f.connectionComplete(handle: 0x0C, at: 0)
        f.disconnection(handle: 0x0C, at: 10)
        f.counters(tx: 400, rx: 600, idle: 9_000, at: 10)
        // 10–20 s: nothing the model prices but the OS's page scan (Android's, assumed): the count goes to it.
        // 20–30 s: a link the counters do not cover (no read after it).
        f.counters(tx: 100, rx: 200, idle: 9_700, at: 20)
        f.connectionComplete(handle: 0x0D, at: 20)
        f.disconnection(handle: 0x0D, at: 30)
        let r = f.report()
        let t = r.accountedTotal
        let m = try #require(t.measured)
        #expect(m.intervals == 2 && Self.close(m.seconds, 20))
        let link = r.links[0].phone
        // The model's link over 0–10 s is what the counters replace.
        #expect(Self.close(m.modelChargeMC, link.chargeMC, within: 1e-6 * link.chargeMC + 1e-9))
        // Without a page scan in this synthetic capture (not Android), the whole count goes to the link.
        #expect(Self.close(m.radioSeconds + m.backgroundSeconds + m.unexplainedSeconds, 1.3))
        #expect(Self.close(t.cost.chargeMC, t.model.chargeMC - m.modelChargeMC + m.chargeMC))
        #expect(Self.close(t.cost.chargeMC - r.links[1].phone.chargeMC, m.chargeMC, within: 1e-6))
        // The interval with nothing the model prices: its 0.3 s is not in the total, and said.
        #expect(Self.close(m.unexplainedSeconds, 0.3))
        // A capture without counters leads with the model.
        var g = Feed()
        g.connectionComplete(handle: 0x0C, at: 0)
        g.disconnection(handle: 0x0C, at: 10)
        let plain = g.report()
        #expect(plain.accountedTotal.measured == nil && plain.accountedTotal.cost == plain.phoneTotal)
    }
}
