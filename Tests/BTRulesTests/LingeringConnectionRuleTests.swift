import Testing
import BTCapture
import BTTrack
import BTRules
import BTScenario

/// BTL006's "kept after unsubscribe" check on hand-built links.
@Suite("lingering-connection")
struct LingeringConnectionRuleTests {
    static var cccd: UInt16 { RuleScript.data.cccdHandle! }

    /// A 7.5 ms link that subscribes to Sensor Data, gets three notifications and unsubscribes; then `after`
    /// runs, and the phone disconnects.
    static func unsubscribedLink(after: (HCIScript, ATTChannel) -> Void) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            att.subscribe(cccd: cccd)
            for i in 0..<3 {
                s.wait(seconds: 1)
                att.notify(handle: RuleScript.data.valueHandle, value: [UInt8(i), 0])
            }
            att.unsubscribe(cccd: cccd)
            after(s, att)
            s.disconnect(att.connection)
        }
    }

    @Test("kept after the last subscription was turned off")
    func keptAfterUnsubscribe() throws {
        let model = Self.unsubscribedLink { s, _ in s.wait(seconds: 15) }
        let found = findings(LingeringConnectionRule.self, model)
        #expect(found.count == 1)
        let f = try #require(found.first)
        #expect(f.message.hasSuffix("was kept 15 s after its last subscription was turned off."), "\(f.message)")
    }

    @Test("reads after the unsubscribe keep the link in use")
    func readsAfterUnsubscribe() {
        // Reads every 2–3 s for 27 s, then the disconnect.
        let model = Self.unsubscribedLink { s, att in
            for i in 0..<11 {
                s.wait(ms: i % 2 == 0 ? 2_000 : 3_000)
                _ = att.read(RuleScript.config.valueHandle)
            }
            s.wait(ms: 500)
        }
        #expect(findings(LingeringConnectionRule.self, model).isEmpty)
    }

    @Test("kept after the last operation that followed the unsubscribe")
    func keptAfterTheLastOperation() throws {
        let model = Self.unsubscribedLink { s, att in
            for _ in 0..<3 {
                s.wait(seconds: 2)
                _ = att.read(RuleScript.config.valueHandle)
            }
            s.wait(seconds: 12)
        }
        let c = try #require(model.connections.first)
        let lastRead = try #require(c.runs.last?.last)
        let found = findings(LingeringConnectionRule.self, model)
        #expect(found.count == 1)
        let f = try #require(found.first)
        #expect(f.start == lastRead.timestamp)
        #expect(f.records.contains(lastRead))
        #expect(f.message.contains("was kept 12 s after its last ATT operation, with every subscription turned off 6.0 s before it"),
                "\(f.message)")
    }

    @Test("a 0 written to a CCCD that was never on turns nothing off")
    func neverSubscribed() {
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            s.wait(seconds: 1)
            att.unsubscribe(cccd: Self.cccd)
            s.wait(seconds: 15)
            s.disconnect(att.connection)
        }
        let c = model.connections.first
        #expect(c?.events.contains { if case .subscription(_, _, 0, _) = $0.kind { true } else { false } } == true)
        #expect(findings(LingeringConnectionRule.self, model).isEmpty)
    }
}
