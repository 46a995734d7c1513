import Testing
import BTCapture
import BTTrack
import BTRules
import BTScenario

/// Issue 25: whose scan it was (Android's APCF scan clients), whose link, and subscriptions in the idle rules, on
/// scripted phone stacks whose bytes follow the real captures (yeelock, Pokémon GO Plus).
@Suite("scan and link ownership")
struct ScanOwnershipTests {
    static var osClient: AndroidScanStack.Client {
        AndroidScanStack.Client(index: 10, mode: .lowPower, conditions: [.apcfAddServiceUUID(index: 10, uuid16: 0xFE2C)],
                                features: APCF.Feature.serviceUUID, advertisers: [])
    }
    static var appClient: AndroidScanStack.Client { AndroidScanStack.Client(index: 1, mode: .lowLatency, advertisers: []) }

    /// The OS's filtered scan runs; the app scans unfiltered (all-pass index 1) for 3 s, then either stops before
    /// connecting (as AOSP apps should) or leaves its scan on, and the link stays up 20 s.
    static func handover(appStopsFirst: Bool) -> CaptureModel {
        ScriptTracker.model { s in
            let stack = AndroidScanStack(script: s)
            stack.start(osClient)
            s.wait(seconds: 5)
            stack.start(appClient)
            s.wait(seconds: 3)
            if appStopsFirst { stack.stop(index: appClient.index, reprogram: false) }
            let att = RuleScript.connect(s)
            stack.reprogram()
            s.wait(seconds: 20)
            s.disconnect(att.connection)
        }
    }

    @Test("APCF feature selections are scan clients: the all-pass filter is the app's, the others the OS's")
    func clients() throws {
        let model = Self.handover(appStopsFirst: true)
        #expect(model.scanClients.map(\.filterIndex) == [10, 1])
        let app = try #require(model.scanClients.first { $0.isAllPass })
        #expect(app.removed != nil)
        #expect(model.scanClients.first { $0.filterIndex == 10 }?.removed == nil)  // still installed at the end
        try #require(model.appScans.count == 1)
        let scan = model.appScans[0]
        #expect(scan.attribution == .allPassFilter && scan.client?.filterIndex == 1)
        #expect(scan.dutyCycle == 1)  // low latency: window = interval
        #expect(scan.endTimestamp == app.removed?.timestamp)
        // The OS's scan before and after the app's is context, not the app's.
        let background = try #require(model.backgroundScanning.first)
        #expect(background.clients == 1 && background.nanoseconds > 20_000_000_000)
        #expect(abs(background.dutyCycle - 0.1) < 1e-9)
    }

    @Test("the OS's scan that runs on after the app stopped its own is not scan-after-connect; the app's left on is")
    func scanAfterConnect() throws {
        #expect(findings(ScanAfterConnectRule.self, Self.handover(appStopsFirst: true)).isEmpty)
        let left = findings(ScanAfterConnectRule.self, Self.handover(appStopsFirst: false))
        try #require(left.count == 1)
        #expect(left[0].message.contains("all-pass filter index 1"), "\(left[0].message)")
        #expect(left[0].message.contains("duty cycle 100 %"), "\(left[0].message)")
        // Charged once, for the time after the connection came up (20 s at 100 %), not for the OS's scan.
        #expect((left[0].cost?.phone.radioSeconds ?? 0) > 19 && (left[0].cost?.phone.radioSeconds ?? 0) < 21.5)
    }

    @Test("scan-churn: six app scan starts in 30 s fire; a scan paused for each connection and resumed does not")
    func churn() {
        let churning = ScriptTracker.model { s in
            let stack = AndroidScanStack(script: s)
            for _ in 0..<6 {
                stack.start(Self.appClient)
                s.wait(seconds: 2)
                stack.stop(index: Self.appClient.index)
                s.wait(seconds: 2)
            }
        }
        #expect(findings(ScanChurnRule.self, churning).count == 1)
        let paused = ScriptTracker.model { s in
            let stack = AndroidScanStack(script: s)
            for i in 0..<6 {
                stack.start(Self.appClient)
                s.wait(seconds: 1)
                stack.stop(index: Self.appClient.index)
                let att = RuleScript.connect(s, handle: UInt16(0x40 + i))
                s.wait(seconds: 1)
                s.disconnect(att.connection)
            }
        }
        #expect(paused.appScans.count == 6)
        #expect(findings(ScanChurnRule.self, paused).isEmpty)
    }

    @Test("without scan clients each controller session is the app's scan (iOS, Linux, older Android)")
    func noClients() {
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            s.wait(seconds: 1)
            s.disconnect(att.connection)
        }
        #expect(model.scanClients.isEmpty && model.backgroundScanning.isEmpty)
        #expect(model.appScans.allSatisfy { $0.attribution == .controllerSession })
        #expect(model.appScans.count == model.scans.count)
    }

    @Test("a link waiting with notifications on is not lingering (but idles fast); once they are off it lingers")
    func subscriptions() throws {
        func link(unsubscribe: Bool) -> CaptureModel {
            ScriptTracker.model { s in
                let att = RuleScript.connect(s)
                let cccd = RuleScript.data.valueHandle + 1
                _ = att.exchange([0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00])
                s.wait(seconds: 1)
                att.notify(handle: RuleScript.data.valueHandle, value: [1, 0])
                if unsubscribe { _ = att.exchange([0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x00, 0x00]) }
                s.wait(seconds: 45)
                s.disconnect(att.connection)
            }
        }
        let waiting = link(unsubscribe: false)
        let c = try #require(waiting.connections.first)
        #expect(c.isSubscribed(atNanoseconds: (c.lastATT?.timestamp.nanoseconds ?? 0)))
        #expect(findings(LingeringConnectionRule.self, waiting).isEmpty)
        // The subscription justifies keeping the link, not keeping it fast: 45 s idle at 7.5 ms is reported.
        #expect(findings(IdleFastIntervalRule.self, waiting).count == 1)
        #expect(findings(LingeringConnectionRule.self, link(unsubscribe: true)).count == 1)
        #expect(findings(IdleFastIntervalRule.self, link(unsubscribe: true)).count == 1)
    }

    @Test("a bonded accessory's link, encrypted before any ATT and without the phone's requests, is the OS's")
    func bondedAccessory() throws {
        let model = ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            s.startEncryption(att.connection, ltk: [UInt8](repeating: 0x11, count: 16), random: 0, ediv: 0)
            s.wait(seconds: 40)
            s.disconnect(att.connection)
        }
        let c = try #require(model.connections.first)
        guard case .os(let reason) = c.ownership else { Issue.record("the link should be the OS's"); return }
        #expect(reason == .bondedAccessory && reason.description.contains("bonded"))
        #expect(model.appConnections.isEmpty)
        #expect(findings(LingeringConnectionRule.self, model).isEmpty)
        #expect(AuditNotes.notes(model).contains { $0.contains("left out of the app's rules") })
    }
}
