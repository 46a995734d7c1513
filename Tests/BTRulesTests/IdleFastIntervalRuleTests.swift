import Testing
import BTCapture
import BTTrack
import BTRules
import BTScenario

/// BTL011 on hand-built links: idle stretches are gaps in all ATT activity, however the activity runs overlap.
@Suite("idle-fast-interval")
struct IdleFastIntervalRuleTests {
    /// The phone writes Config with a Write Command: traffic that subscribes to nothing (a link with
    /// notifications on is waiting, not idle, and the rule does not judge it).
    static func write(_ att: ATTChannel, _ value: [UInt8]) {
        let h = RuleScript.config.valueHandle
        // Three bytes: a two-byte write of 1 or 2 to an undiscovered handle may be a CCCD being switched on.
        att.command([0x52, UInt8(h & 0xFF), UInt8(h >> 8)] + value + [0xA5])
    }

    /// A 7.5 ms link with a Write Command every second for 61 s and one read 2 s in, then `idleAfter` seconds
    /// without traffic before the disconnect.
    static func notifyingLink(idleAfter: Int64) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            for second in 1...61 {
                s.wait(seconds: 1)
                Self.write(att, [UInt8(truncatingIfNeeded: second), 0])
                if second == 2 { _ = att.read(RuleScript.config.valueHandle) }
            }
            s.wait(seconds: idleAfter)
            s.disconnect(att.connection)
        }
    }

    @Test("a link busy with writes is not idle because a shorter run started later")
    func overlappingRuns() {
        let model = Self.notifyingLink(idleAfter: 1)
        // The read's run starts after the writes' run and ends long before it.
        #expect(model.connections.first?.runs.count == 2)
        #expect(findings(IdleFastIntervalRule.self, model).isEmpty)
    }

    @Test("idle time is counted from the end of the latest run")
    func idleAfterTheLongestRun() throws {
        let model = Self.notifyingLink(idleAfter: 20)
        let c = try #require(model.connections.first)
        let lastNotification = try #require(c.runs.map(\.last).max())
        let found = findings(IdleFastIntervalRule.self, model)
        #expect(found.count == 1)
        let f = try #require(found.first)
        #expect(f.start == lastNotification.timestamp)
        #expect(f.records.contains(lastNotification))
        #expect(f.message.contains("7.5 ms connection interval for 20 s without ATT traffic"), "\(f.message)")
    }

    @Test("gaps inside a run are not seen: idle_seconds below the run gap acts as the run gap")
    func belowTheRunGap() {
        // A write every 4.5 s: one run, with 4.5 s gaps the timeline does not keep. The 4.5 s from the
        // connection to the first notification is a gap between runs, but reporting it while the equal gaps
        // inside the run go unseen would be arbitrary: below the run gap, idle_seconds acts as the run gap.
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            for i in 0..<12 {
                s.wait(ms: 4_500)
                Self.write(att, [UInt8(i), 0])
            }
            s.wait(seconds: 1)
            s.disconnect(att.connection)
        }
        #expect(model.connections.first?.runs.count == 1)
        #expect(findings(IdleFastIntervalRule.self, model).isEmpty)
        #expect(findings(IdleFastIntervalRule.self, model, options: ["idle_seconds": 2]).isEmpty)
        // A 7 s gap between two runs is seen.
        let gap = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            s.wait(seconds: 1)
            Self.write(att, [0, 0])
            s.wait(seconds: 7)
            Self.write(att, [1, 0])
            s.wait(seconds: 1)
            s.disconnect(att.connection)
        }
        #expect(findings(IdleFastIntervalRule.self, gap).count == 1)
        #expect(findings(IdleFastIntervalRule.self, gap, options: ["idle_seconds": 2]).count == 1)
    }

    @Test("a link of many interval changes: each idle stretch judged at the interval of its own piece")
    func manyChanges() throws {
        // Forty rounds of: fast, 6 s without traffic, slow, 6 s without traffic, a write. Only the fast pieces
        // count, each cut where the interval changed (the walk over the changes starts past those behind it).
        let rounds = 40
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            func parameters(_ interval: UInt16) -> BTScenario.ConnectionParameters {
                BTScenario.ConnectionParameters(intervalMin: interval, intervalMax: interval,
                                                supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: Micros.seconds(2)))
            }
            let slow = HCIUnits.connectionInterval(microseconds: 100_000)
            for round in 0..<rounds {
                s.updateConnection(att.connection, parameters: parameters(RuleScript.fastInterval))
                s.wait(seconds: 6)
                s.updateConnection(att.connection, parameters: parameters(slow))
                s.wait(seconds: 6)
                Self.write(att, [UInt8(truncatingIfNeeded: round), 0])
            }
            s.wait(seconds: 1)
            s.disconnect(att.connection)
        }
        let c = try #require(model.connections.first)
        #expect(c.events.filter { if case .parametersChanged = $0.kind { true } else { false } }.count == 2 * rounds)
        let found = findings(IdleFastIntervalRule.self, model)
        let f = try #require(found.first)
        #expect(found.count == 1)
        #expect(f.message.contains("in \(rounds) idle stretches"), "\(f.message)")
        // 6 s at 7.5 ms per round, and the few connection events each update waits for its instant.
        let words = f.message.split(separator: " ")
        let idle = try #require(words.firstIndex(of: "for").flatMap { Int(words[$0 + 1]) })
        #expect((240...245).contains(idle), "\(f.message)")
    }
}
