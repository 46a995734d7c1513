import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
import BTScenario

/// What real phone stacks do that the rules must read right, scripted with a control each: the OS's Service
/// Changed subscription, an app scan the stack restarts every few seconds, old Android restarting a scan every
/// second, keep-alives on a fast link, the OS's own accessory links, a peer that never confirms the phone's
/// indication.
@Suite("real stack behaviour")
struct RealStackBehaviourTests {
    static var appClient: AndroidScanStack.Client { AndroidScanStack.Client(index: 1, mode: .lowLatency, advertisers: []) }

    static func cccd(_ uuid: BluetoothUUID) -> UInt16 { RuleScript.database.characteristic(uuid: uuid)!.cccdHandle! }

    static func write(_ att: ATTChannel, cccd handle: UInt16, _ value: UInt16) {
        _ = att.exchange([0x12, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(value & 0xFF), UInt8(value >> 8)])
    }

    /// Discovers the sensor's database, subscribes to Service Changed (as every stack does) and, with
    /// `data`, to the sensor's data too; then the link stays idle 45 s.
    static func idleLink(data: Bool) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            _ = att.discoverEverything()
            write(att, cccd: cccd(BluetoothUUID(uuid16: GATTUUID.serviceChanged)), 0x0002)
            if data { write(att, cccd: cccd(SampleProfiles.enviroSensorData), 0x0001) }
            s.wait(seconds: 45)
            s.disconnect(att.connection)
        }
    }

    @Test("the OS's Service Changed subscription is no data subscription: the idle link lingers; with data subscribed it waits")
    func serviceChanged() throws {
        let only = Self.idleLink(data: false)
        #expect(findings(LingeringConnectionRule.self, only).count == 1)
        #expect(findings(LingeringConnectionRule.self, Self.idleLink(data: true)).isEmpty)
    }

    /// The app's unfiltered scan on, then a connection for 140 s; the stack restarts the app's client every 7 s
    /// (filter deleted and added again at once), or the app stops its scan before connecting (control).
    static func restartedScan(stopsBeforeConnecting: Bool) -> CaptureModel {
        ScriptTracker.model { s in
            let stack = AndroidScanStack(script: s)
            stack.start(Self.appClient)
            s.wait(seconds: 3)
            if stopsBeforeConnecting { stack.stop(index: Self.appClient.index) }
            let att = RuleScript.connect(s)
            for _ in 0..<20 {
                s.wait(seconds: 7)
                if !stopsBeforeConnecting {
                    stack.stop(index: Self.appClient.index, reprogram: false)
                    stack.start(Self.appClient)
                }
            }
            s.disconnect(att.connection)
        }
    }

    @Test("an app scan the stack restarts every 7 s through a 140 s connection is one scan: one finding for its whole span")
    func restartedAcrossConnection() throws {
        let model = Self.restartedScan(stopsBeforeConnecting: false)
        #expect(model.appScans.count == 1)
        #expect((model.appScans.first?.pieceStarts.count ?? 0) == 21)
        let left = findings(ScanAfterConnectRule.self, model)
        try #require(left.count == 1)
        #expect(left[0].end.seconds - left[0].start.seconds > 135, "\(left[0].message)")
        #expect(findings(ScanAfterConnectRule.self, Self.restartedScan(stopsBeforeConnecting: true)).isEmpty)
        // Every start after the first is the stack's restart of the same client: no churn either.
        #expect(findings(ScanChurnRule.self, model).isEmpty)
    }

    /// Old Android (no scan clients): the scan disabled and enabled again every second (`gap` apart), duplicates
    /// off, three advertisers at 100 ms.
    static func everySecond(gapMilliseconds: Int64, restarts: Int = 60) -> CaptureModel {
        ScriptTracker.model { s in
            let interval = HCIUnits.slots(microseconds: Micros.ms(50))
            let advertisers = (0..<3).map { i in
                SimulatedAdvertiser(peer: PeerAddress(BDAddr(rawValue: 0xC0_11_22_33_44_00 + UInt64(i)), type: LEParameter.randomAddress),
                                    kind: .legacy(LegacyReportType.nonconnInd),
                                    data: AdvertisingData([.flags(0x06)]), interval: Micros.ms(100), rssi: -60)
            }
            s.commandComplete(.leSetScanParameters(active: false, interval: interval, window: interval, ownAddressType: LEParameter.randomAddress))
            for _ in 0..<restarts {
                s.commandComplete(.leSetScanEnable(true, filterDuplicates: false))
                s.background = AdvertisingReportStream(advertisers: advertisers, mode: .legacy, active: false,
                                                       filterDuplicates: false, scanInterval: interval, scanWindow: interval,
                                                       startingAt: s.elapsed, seed: s.rng.next())
                s.wait(seconds: 1)
                s.background = nil
                s.commandComplete(.leSetScanEnable(false, filterDuplicates: false))
                s.wait(ms: gapMilliseconds)
            }
        }
    }

    @Test("a duplicates-off scan restarted every second is one flood; scans seconds apart are separate scans")
    func restartedEverySecond() throws {
        let model = Self.everySecond(gapMilliseconds: 5)
        #expect(model.scans.count == 60)
        #expect(model.appScans.count == 1)
        let flood = findings(DuplicateScanRule.self, model)
        try #require(flood.count == 1)
        #expect(flood[0].end.seconds - flood[0].start.seconds > 55, "\(flood[0].message)")
        #expect(flood[0].message.contains("3 devices"), "\(flood[0].message)")
        // Control: the same one-second scans 3 s apart are scans of their own, each under the threshold.
        let apart = Self.everySecond(gapMilliseconds: 3_000, restarts: 8)
        #expect(apart.appScans.count == 8)
        #expect(findings(DuplicateScanRule.self, apart).isEmpty)
    }

    /// A link at `interval` (×1.25 ms) with notifications on, whose only traffic is a keep-alive write and a
    /// notification every 9.9 s.
    static func keepAlive(interval: UInt16) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s, interval: interval)
            write(att, cccd: cccd(SampleProfiles.enviroSensorData), 0x0001)
            for _ in 0..<10 {
                s.wait(ms: 9_900)
                att.command([0x52] + [UInt8(RuleScript.config.valueHandle & 0xFF), UInt8(RuleScript.config.valueHandle >> 8), 0x01])
                att.notify(handle: RuleScript.data.valueHandle, value: [1, 2])
            }
            s.wait(seconds: 1)
            s.disconnect(att.connection)
        }
    }

    @Test("sparse keep-alives do not make a fast link busy, subscribed or not; at a relaxed interval it is fine")
    func keepAlives() throws {
        let fast = findings(IdleFastIntervalRule.self, Self.keepAlive(interval: 12))  // 15 ms
        try #require(fast.count == 1)
        #expect(fast[0].message.contains("idle stretches"), "\(fast[0].message)")
        #expect(fast[0].end.seconds - fast[0].start.seconds > 80)
        #expect(findings(IdleFastIntervalRule.self, Self.keepAlive(interval: 80)).isEmpty)  // 100 ms
    }

    /// A link encrypted at once that speaks on a vendor's fixed L2CAP channel (Apple's 0x003A) before the OS
    /// discovers the accessory's database, or (control) the same link without the vendor channel.
    static func accessoryLink(vendorChannel: Bool) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            s.startEncryption(att.connection, ltk: [UInt8](repeating: 0x22, count: 16), random: 0, ediv: 0)
            if vendorChannel {
                s.sendL2CAP([0x01, 0x02, 0x03], cid: L2CAPChannelID(rawValue: 0x003A), on: att.connection, from: .local)
                s.sendL2CAP([0x81, 0x02], cid: L2CAPChannelID(rawValue: 0x003A), on: att.connection, from: .remote)
            }
            _ = att.discoverEverything()
            s.wait(seconds: 1)
            s.disconnect(att.connection)
        }
    }

    @Test("a link encrypted at once on a vendor's private L2CAP channel is the OS's (iOS and its accessories)")
    func vendorAccessory() throws {
        let os = try #require(Self.accessoryLink(vendorChannel: true).connections.first)
        #expect(os.ownership == .os(reason: .vendorAccessory))
        #expect(findings(DiscoverAllServicesRule.self, Self.accessoryLink(vendorChannel: true)).isEmpty)
        let app = try #require(Self.accessoryLink(vendorChannel: false).connections.first)
        #expect(app.ownership == .app)
    }

    /// The phone's own GATT server indicates; the peer never confirms, and the link ends 35 s later (or 2 ms
    /// later: the indication went out just before the link dropped).
    static func unconfirmedIndication(seconds: Int64) -> CaptureModel {
        ScriptTracker.model { s in
            let att = RuleScript.connect(s)
            s.wait(seconds: 1)
            s.sendL2CAP([0x1D, 0x03, 0x00, 0x01, 0x00, 0xFF, 0xFF], cid: .att, on: att.connection, from: .local)
            if seconds > 0 { s.wait(seconds: seconds) } else { s.wait(ms: 2) }
            s.disconnect(att.connection)
        }
    }

    @Test("an indication of the phone's server the peer never confirms is the peer's doing (info); one sent as the link dropped is nothing")
    func unconfirmed() throws {
        let late = findings(ATTTimeoutRule.self, Self.unconfirmedIndication(seconds: 35))
        try #require(late.count == 1)
        #expect(late[0].severity == .info && late[0].message.contains("peer's doing"), "\(late[0].message)")
        #expect(late[0].message.contains("the phone's attribute 0x0003"), "\(late[0].message)")
        #expect(findings(ATTTimeoutRule.self, Self.unconfirmedIndication(seconds: 0)).isEmpty)
    }

    /// A link up before the capture began (its LE Connection Complete not in the capture) that the phone's client
    /// drives with a write every second for two minutes; the app starts an unfiltered scan 30 s in and leaves it on.
    static func joinedLink(clientWrites: Bool) -> CaptureModel {
        let connectionComplete = { (kind: RecordKind, p: UnsafeRawBufferPointer) -> Bool in
            kind == .event && p.count > 2 && p[0] == 0x3E && (p[2] == 0x01 || p[2] == 0x0A)
        }
        return ScriptTracker.model(dropping: connectionComplete) { s in
            let att = RuleScript.connect(s, interval: 24)
            let stack = AndroidScanStack(script: s)
            for second in 0..<120 {
                if second == 30 { stack.start(Self.appClient) }
                s.wait(seconds: 1)
                if clientWrites {
                    _ = att.exchange([0x12, UInt8(RuleScript.config.valueHandle & 0xFF), UInt8(RuleScript.config.valueHandle >> 8), 0x01])
                }
            }
            s.disconnect(att.connection)
        }
    }

    @Test("a link up before the capture began is judged like any when the app drives it: its scan left on is scan-after-connect")
    func joinedMidway() throws {
        let driven = Self.joinedLink(clientWrites: true)
        try #require(driven.connections.first?.implicitStart == true)
        #expect(findings(ScanAfterConnectRule.self, driven).count == 1)
        // Control: the same link carrying nothing of the phone's client (the OS's, or only the peer's traffic).
        #expect(findings(ScanAfterConnectRule.self, Self.joinedLink(clientWrites: false)).isEmpty)
    }

    @Test("without discovery, 03 00 written to a handle is a command to a value, 01 00 a subscription")
    func undiscoveredCCCD() throws {
        func subscriptions(_ value: UInt16) -> Int {
            let model = ScriptTracker.model { s in
                let att = RuleScript.connect(s)
                Self.write(att, cccd: RuleScript.config.valueHandle, value)
                s.wait(seconds: 1)
                s.disconnect(att.connection)
            }
            return model.connections.first?.events.filter { if case .subscription = $0.kind { true } else { false } }.count ?? -1
        }
        #expect(subscriptions(0x0003) == 0)
        #expect(subscriptions(0x0001) == 1)
    }
}
