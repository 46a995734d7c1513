import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules
import BTScenario
import TestSupport

/// Each rule's cost on a planted waste of known size: the saving the finding reports is what the model's
/// formula gives for that waste, within 5 % (the rest is the script's own timing: connect, discovery).
@Suite("Findings' cost: planted waste of known size")
struct RuleCostTests {
    static let phone = PhoneProfile()
    static let peripheral = PeripheralProfile()
    static func within(_ v: Double, _ expected: Double, _ tolerance: Double = 0.05) -> Bool { abs(v - expected) <= expected * tolerance }

    /// Phone charge of `events` idle connection events (an empty packet each way, the central's guard): mC.
    static func idleEvents(_ events: Double) -> Double {
        events * (phone.txMilliamps * 80e-6 + phone.rxMilliamps * (80e-6 + phone.listenGuardSeconds))
    }

    static func cost(_ f: Finding?) -> FindingCost? { f?.cost }

    @Test("scan-after-connect: a 100 % duty scan left on 30 s after connecting saves 30 s of listening (5.8 mA × 30 s = 174 mC)")
    func scanAfterConnect() throws {
        let model = ScriptTracker.model { s in
            s.startScan(active: false, interval: RuleScript.scanInterval, window: RuleScript.scanInterval, filterDuplicates: true)
            s.wait(seconds: 1)
            let att = RuleScript.connect(s, interval: HCIUnits.connectionInterval(microseconds: 50_000))
            s.wait(seconds: 30)
            s.stopScan()
            s.disconnect(att.connection)
        }
        let c = try #require(Self.cost(findings(ScanAfterConnectRule.self, model).first))
        #expect(Self.within(c.phone.chargeMC, Self.phone.rxMilliamps * 30), "\(c.phone.chargeMC)")
        #expect(Self.within(c.phone.radioSeconds, 30) && c.peripheral == nil)
    }

    @Test("lingering-connection: 60 s idle at 50 ms saves 1200 idle events on both sides")
    func lingering() throws {
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s, interval: HCIUnits.connectionInterval(microseconds: 50_000))
            _ = att.read(RuleScript.config.valueHandle)
            s.wait(seconds: 60)
            s.disconnect(att.connection)
        }
        let c = try #require(Self.cost(findings(LingeringConnectionRule.self, model).first))
        #expect(Self.within(c.phone.chargeMC, Self.idleEvents(1200)), "\(c.phone.chargeMC)")
        // The peripheral: 6 µC an event, 1.5 µA of sleep.
        let expected = 1200 * Self.peripheral.emptyEventMicrocoulombs / 1000 + Self.peripheral.sleepMicroamps / 1000 * 60
        #expect(Self.within(try #require(c.peripheral).chargeMC, expected), "\(String(describing: c.peripheral))")
        #expect(c.phone.lowMC <= c.phone.chargeMC && c.phone.chargeMC <= c.phone.highMC)
    }

    @Test("idle-fast-interval: 20 s idle at 7.5 ms against 100 ms saves 2667 − 200 idle events")
    func idleFastInterval() throws {
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            _ = att.read(RuleScript.config.valueHandle)
            s.wait(seconds: 20)
            _ = att.read(RuleScript.config.valueHandle)
            s.disconnect(att.connection)
        }
        let f = try #require(findings(IdleFastIntervalRule.self, model).first)
        let seconds = Double(f.end.nanoseconds - f.start.nanoseconds) / 1e9
        let expected = Self.idleEvents(seconds / 0.0075) - Self.idleEvents(seconds / 0.1)
        #expect(Self.within(try #require(f.cost).phone.chargeMC, expected), "\(String(describing: f.cost)) vs \(expected)")
    }

    @Test("att-timeout: the 30 s the link waited, as idle events")
    func attTimeout() throws {
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s, interval: HCIUnits.connectionInterval(microseconds: 30_000))
            att.sendUnanswered(BTScenario.ATTPDU.writeRequest(handle: RuleScript.config.valueHandle, value: [1]))
            s.wait(seconds: 31)
            s.disconnect(att.connection)
        }
        let f = try #require(findings(ATTTimeoutRule.self, model).first)
        let waited = Double(f.end.nanoseconds - f.start.nanoseconds) / 1e9
        #expect(Self.within(try #require(f.cost).phone.chargeMC, Self.idleEvents(waited / 0.03)), "\(String(describing: f.cost))")
    }

    @Test("duplicate-scan: 47 s of reports every 30 ms keep the host awake 45 s longer than one report per device")
    func duplicateScan() throws {
        let model = ScriptTracker.model { s in SeriesRuleTests.scan(s, seconds: 47, everyMs: 30) }
        let f = try #require(findings(DuplicateScanRule.self, model).first)
        let seconds = Double(f.end.nanoseconds - f.start.nanoseconds) / 1e9
        let c = try #require(f.cost)
        let expected = Self.phone.awakeMilliamps * (seconds - 2 * Self.phone.holdSeconds)
        #expect(Self.within(c.phone.chargeMC, expected) && c.hostMC == c.phone.chargeMC && c.phone.radioSeconds == 0,
                "\(c) vs \(expected)")
    }

    @Test("every finding of the samples has a cost, within its range, and the report's total is their sum")
    func everyFinding() throws {
        for name in ["wasteful-central", "connection-churn", "peripheral-role", "beacons"] {
            let model = try trackScenario(name)
            for f in Auditor().audit(model, file: name) {
                let c = try #require(f.cost, "\(name) \(f.rule)")
                #expect(c.phone.lowMC <= c.phone.chargeMC + 1e-9 && c.phone.chargeMC <= c.phone.highMC + 1e-9, "\(name) \(f.rule) \(c)")
                #expect(c.phone.chargeMC > 0, "\(name) \(f.rule): \(c)")
            }
        }
    }
}
