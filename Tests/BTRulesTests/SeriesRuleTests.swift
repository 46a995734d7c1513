import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
import BTReport
import BTScenario
import TestSupport

/// Issue 17: polls judged on a value's whole series (whatever traffic comes between), GATT knowledge from any
/// link to the peer, discovery judged by what it revealed and the app never used, scan floods by what they
/// delivered.
@Suite("Rules over series, shared GATT knowledge and floods")
struct SeriesRuleTests {
    static let temperature = BluetoothUUID(uuid16: 0x2A6E)
    static let humidity = BluetoothUUID(uuid16: 0x2A6F)
    static let manufacturer = BluetoothUUID(uuid16: 0x2A29)
    static let heartRate = BluetoothUUID(uuid16: 0x2A37)
    /// Environmental Sensing with two notifying values, and a read-only string.
    static let database = BTScenario.GATTDatabase([
        SampleProfiles.gap(name: "Weather", appearance: 0x0540),
        SampleProfiles.gatt,
        GATTServiceDefinition(0x181A, [
            GATTCharacteristicDefinition(0x2A6E, [.read, .notify], value: [0x10, 0x09]),
            GATTCharacteristicDefinition(0x2A6F, [.read, .notify], value: [0x88, 0x13]),
        ]),
        GATTServiceDefinition(0x180A, [GATTCharacteristicDefinition(0x2A29, [.read], value: Array("Acme".utf8))]),
    ])
    static func handle(_ uuid: BluetoothUUID) -> UInt16 { database.characteristic(uuid: uuid)!.valueHandle }
    static let interval = HCIUnits.connectionInterval(microseconds: 45_000)

    static func connect(_ s: HCIScript, handle: UInt16, to peer: PeerAddress = RuleScript.sensor,
                        database: BTScenario.GATTDatabase = database) -> ATTChannel {
        let parameters = BTScenario.ConnectionParameters(intervalMin: interval, intervalMax: interval,
                                                         supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: Micros.seconds(4)))
        s.stopScan()
        let link = s.connect(to: peer, handle: handle, parameters: parameters, scanInterval: RuleScript.scanInterval,
                             scanWindow: RuleScript.scanInterval, chosenInterval: interval)
        return ATTChannel(script: s, connection: link, server: GATTServer(database: database), clientSide: .local)
    }

    /// A first link discovers; a second, relying on the cache, polls Temperature six times 2 s apart.
    static func discoverThenPollCached(_ s: HCIScript) {
        let first = connect(s, handle: 0x0041)
        _ = first.discoverEverything()
        s.disconnect(first.connection)
        let cached = connect(s, handle: 0x0042)
        poll(cached, s, handles: [handle(temperature)], rounds: 6, periodMs: 2_000)
        s.disconnect(cached.connection)
    }

    /// Reads of `handles` in turn, `rounds` times, `period` ms apart (± 5 %), with a write between.
    static func poll(_ att: ATTChannel, _ s: HCIScript, handles: [UInt16], rounds: Int, periodMs: Int64, writeEvery: Int = 0) {
        for round in 0..<rounds {
            for h in handles {
                _ = att.read(h)
                s.pause(1...20)
            }
            if writeEvery > 0 && round % writeEvery == 0 { _ = att.write(handle(manufacturer) + 0, value: [1]) }
            s.advance(Micros.ms(periodMs) + s.delay(-Micros.ms(periodMs / 20)...Micros.ms(periodMs / 20)))
        }
    }

    @Test("two values polled alternately every 10 s, with writes between: a finding for each, one timeline line each")
    func interleavedPolls() throws {
        let model = ScriptTracker.model(seed: 7) { s in
            let att = Self.connect(s, handle: 0x0041)
            _ = att.discoverEverything()
            Self.poll(att, s, handles: [Self.handle(Self.temperature), Self.handle(Self.humidity)], rounds: 40, periodMs: 10_000,
                      writeEvery: 7)
            s.disconnect(att.connection)
        }
        let found = findings(PollInsteadOfNotifyRule.self, model)
        #expect(found.map(\.attributeHandle) == [Self.handle(Self.temperature), Self.handle(Self.humidity)])
        let first = try #require(found.first)
        #expect(first.message.contains("40 times every 10 s") && first.message.contains("interleaved with reads of Humidity"),
                "\(first.message)")
        let c = try #require(model.connections.first)
        let series = try #require(c.series.first { $0.kind == .read && $0.handle == Self.handle(Self.temperature) })
        #expect(series.count == 40 && series.isRegular() && series.runs == 40)
        // The timeline reads each regular series once, where it starts.
        // (The Humidity line names Temperature too, as interleaved.)
        let lines = TimelineReport.eventLines(c).map(\.text).filter { $0.contains("read Temperature") || $0.contains("reads Temperature") }
        #expect(lines.count == 1 && lines[0].hasPrefix("40 reads Temperature (2a6e)"), "\(lines.prefix(4))")
        #expect(lines.first?.contains(" s over 6m") == true && lines.first?.contains("interleaved with reads of Humidity (2a6f)") == true,
                "\(lines.prefix(1))")
    }

    @Test("a poll the app paused (irregular as a whole): its steady stretch is reported; five steady reads are not")
    func pausedPoll() throws {
        let model = ScriptTracker.model(seed: 14) { s in
            let att = Self.connect(s, handle: 0x0041)
            _ = att.discoverEverything()
            Self.poll(att, s, handles: [Self.handle(Self.temperature)], rounds: 10, periodMs: 5_000)
            s.wait(seconds: 60)
            Self.poll(att, s, handles: [Self.handle(Self.temperature)], rounds: 8, periodMs: 5_000)
            // Humidity: five steady reads, a pause, four more: no stretch of six.
            Self.poll(att, s, handles: [Self.handle(Self.humidity)], rounds: 5, periodMs: 3_000)
            s.wait(seconds: 40)
            Self.poll(att, s, handles: [Self.handle(Self.humidity)], rounds: 4, periodMs: 3_000)
            s.disconnect(att.connection)
        }
        let c = try #require(model.connections.first)
        let series = try #require(c.series.first { $0.kind == .read && $0.handle == Self.handle(Self.temperature) })
        #expect(!series.isRegular() && series.steady.count >= 10)
        let found = findings(PollInsteadOfNotifyRule.self, model)
        #expect(found.map(\.attributeHandle) == [Self.handle(Self.temperature)], "\(found.map(\.message))")
        #expect(found.first?.message.contains("of 18 reads") == true, "\(found.map(\.message))")
    }

    @Test("controls: a read-only value polled, two reads, irregular reads of a notifying value: no finding")
    func pollControls() {
        let model = ScriptTracker.model(seed: 8) { s in
            let att = Self.connect(s, handle: 0x0041)
            _ = att.discoverEverything()
            Self.poll(att, s, handles: [Self.handle(Self.manufacturer)], rounds: 20, periodMs: 5_000)
            Self.poll(att, s, handles: [Self.handle(Self.temperature)], rounds: 2, periodMs: 5_000)
            for gap: Int64 in [300, 9_000, 1_200, 25_000, 700, 14_000, 2_000] {
                _ = att.read(Self.handle(Self.humidity))
                s.wait(ms: gap)
            }
            s.disconnect(att.connection)
        }
        #expect(findings(PollInsteadOfNotifyRule.self, model).isEmpty)
    }

    @Test("a cached reconnect polls before any discovery; a later connection discovers: the database is learned later")
    func learnedLater() throws {
        let model = ScriptTracker.model(seed: 9) { s in
            let cached = Self.connect(s, handle: 0x0041)
            Self.poll(cached, s, handles: [Self.handle(Self.temperature)], rounds: 12, periodMs: 3_000)
            s.disconnect(cached.connection)
            s.wait(seconds: 5)
            let fresh = Self.connect(s, handle: 0x0042)
            _ = fresh.discoverEverything()
            s.disconnect(fresh.connection)
        }
        #expect(model.connections.map(\.gatt.origin) == [.learnedLater, .discovered])
        #expect(model.connections[0].gatt.inheritedFrom == 2)
        let found = findings(PollInsteadOfNotifyRule.self, model)
        #expect(found.count == 1 && found.first?.connection?.id == 1)
        #expect(found.first?.message.contains("connection #2, which discovered it later") == true, "\(found)")
    }

    @Test("the same peer behind a resolvable private address: its identity (SMP) carries the database")
    func identityAddress() throws {
        let identity = PeerAddress(BDAddr(rawValue: 0xC1_22_33_44_55_66), type: LEParameter.randomAddress)
        let resolvable = PeerAddress(BDAddr(rawValue: 0x5A_11_22_33_44_55), type: LEParameter.randomAddress)
        let model = ScriptTracker.model(seed: 13) { s in
            let first = Self.connect(s, handle: 0x0041, to: resolvable)
            _ = first.discoverEverything()
            s.smp(BTScenario.SMPPDU.identityAddressInformation(identity), first.connection, from: .remote)
            s.disconnect(first.connection)
            let later = Self.connect(s, handle: 0x0042, to: identity)
            Self.poll(later, s, handles: [Self.handle(Self.temperature)], rounds: 6, periodMs: 2_000)
            s.disconnect(later.connection)
        }
        #expect(model.connections.first?.peerIdentityAddress == identity.address)
        #expect(model.connections.map(\.gatt.origin) == [.discovered, .inherited])
        #expect(findings(PollInsteadOfNotifyRule.self, model).count == 1)
    }

    @Test("a Service Changed indication stops an earlier database from being carried forward")
    func serviceChangedBarrier() {
        let model = ScriptTracker.model(seed: 10) { s in
            let first = Self.connect(s, handle: 0x0041)
            _ = first.discoverEverything()
            s.disconnect(first.connection)
            let second = Self.connect(s, handle: 0x0042)
            let changed = Self.database.characteristic(uuid: BluetoothUUID(uuid16: 0x2A05))!.valueHandle
            second.indicate(handle: changed, value: [0x01, 0x00, 0xFF, 0xFF])
            Self.poll(second, s, handles: [Self.handle(Self.temperature)], rounds: 6, periodMs: 2_000)
            s.disconnect(second.connection)
        }
        #expect(model.connections.map(\.gatt.isEmpty) == [false, true])
        #expect(findings(PollInsteadOfNotifyRule.self, model).isEmpty)
    }

    @Test("an earlier discovery is inherited; one that disagrees with a later discovery is not trusted")
    func inheritedAndConflicting() {
        let model = ScriptTracker.model(seed: 11) { s in Self.discoverThenPollCached(s) }
        #expect(model.connections.map(\.gatt.origin) == [.discovered, .inherited])
        #expect(findings(PollInsteadOfNotifyRule.self, model).count == 1)

        // The same, then a third link discovers another layout (a firmware update added a service in front).
        let moved = BTScenario.GATTDatabase([
            SampleProfiles.gap(name: "Weather", appearance: 0x0540), SampleProfiles.gatt,
            GATTServiceDefinition(0x180F, [GATTCharacteristicDefinition(0x2A19, [.read], value: [50])]),
            GATTServiceDefinition(0x181A, [GATTCharacteristicDefinition(0x2A6E, [.read, .notify], value: [0x10, 0x09])]),
        ])
        let changed = ScriptTracker.model(seed: 11) { s in
            Self.discoverThenPollCached(s)
            let updated = Self.connect(s, handle: 0x0043, database: moved)
            _ = updated.discoverEverything()
            s.disconnect(updated.connection)
        }
        #expect(changed.connections.map(\.gatt.isEmpty) == [false, true, false])
        #expect(findings(PollInsteadOfNotifyRule.self, changed).isEmpty)
    }

    @Test("discover-all-services: every service used is no finding; unused ones are, more severe the more unused")
    func discoverAllServices() throws {
        let usedAll = ScriptTracker.model(seed: 12) { s in
            let att = Self.connect(s, handle: 0x0041)
            _ = att.discoverEverything()
            _ = att.read(Self.handle(Self.temperature))
            _ = att.read(Self.handle(Self.manufacturer))
            s.disconnect(att.connection)
        }
        #expect(findings(DiscoverAllServicesRule.self, usedAll).isEmpty)
        let usedOne = ScriptTracker.model(seed: 12) { s in
            let att = Self.connect(s, handle: 0x0041)
            _ = att.discoverEverything()
            _ = att.read(Self.handle(Self.manufacturer))
            s.disconnect(att.connection)
        }
        let found = try #require(findings(DiscoverAllServicesRule.self, usedOne).first)
        #expect(found.severity == .warning && found.message.contains("left 1 of the 2 unused (Environmental Sensing (181a))"),
                "\(found.message)")
        let byUUID = ScriptTracker.model(seed: 12) { s in
            let att = Self.connect(s, handle: 0x0041)
            _ = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: 0x180A))
            _ = att.read(Self.handle(Self.manufacturer))
            s.disconnect(att.connection)
        }
        #expect(findings(DiscoverAllServicesRule.self, byUUID).isEmpty)
    }

    // MARK: Scans

    static let devices: [PeerAddress] = (0..<6).map { PeerAddress(BDAddr(rawValue: 0xC0_00_00_00_10_00 + UInt64($0)), type: LEParameter.randomAddress) }

    /// A duplicates-off active scan of `seconds` in which each device advertises every `everyMs`.
    static func scan(_ s: HCIScript, seconds: Int64, everyMs: Int64, devices: [PeerAddress] = devices, filterDuplicates: Bool = false) {
        s.startScan(active: true, interval: RuleScript.scanInterval, window: RuleScript.scanInterval, filterDuplicates: filterDuplicates)
        var t: Int64 = 0
        while t < seconds * 1000 {
            s.report(devices.map { LegacyAdvertisingReport(eventType: LegacyReportType.advInd, peer: $0, data: AdvertisingData([]), rssi: -60) })
            s.wait(ms: everyMs)
            t += everyMs
        }
        s.stopScan()
    }

    @Test("duplicate-scan: a 3 s dense scan is a flood; a short sparse one and a duplicates-on one are not")
    func floods() throws {
        let dense = ScriptTracker.model { s in Self.scan(s, seconds: 3, everyMs: 30) }
        let flood = try #require(findings(DuplicateScanRule.self, dense).first)
        #expect(flood.severity == .error || flood.severity == .warning)
        #expect(flood.message.contains("reports of devices already reported"), "\(flood.message)")
        let sparse = ScriptTracker.model { s in Self.scan(s, seconds: 1, everyMs: 200) }
        #expect(findings(DuplicateScanRule.self, sparse).isEmpty)
        let filtered = ScriptTracker.model { s in Self.scan(s, seconds: 3, everyMs: 30, filterDuplicates: true) }
        #expect(findings(DuplicateScanRule.self, filtered).isEmpty)
        // Long but slow: 101+ redundant reports at 1 per second is info.
        let trickle = ScriptTracker.model { s in Self.scan(s, seconds: 30, everyMs: 1_000) }
        let slow = try #require(findings(DuplicateScanRule.self, trickle).first)
        #expect(slow.severity == .info, "\(slow.message)")
    }

    /// Android's LE Get Vendor Capabilities and APCF commands: enable, then one service-UUID filter.
    static func offloadFilters(_ s: HCIScript) {
        s.commandComplete(HCICommand(HCIOpcode(rawValue: 0xFD53)), returning: [0x00])
        s.commandComplete(HCICommand(ScanFilterOffload.opcode, parameters: [0x00, 0x01]), returning: [0x00, 0x00])
        s.commandComplete(HCICommand(ScanFilterOffload.opcode, parameters: [0x03, 0x00, 0x00, 0x0D, 0x18]), returning: [0x00, 0x03])
    }

    @Test("Android: the platform is found; offloaded filters that keep reports few give no finding, a flood through them does")
    func androidOffload() throws {
        let quiet = ScriptTracker.model { s in
            Self.offloadFilters(s)
            Self.scan(s, seconds: 20, everyMs: 500, devices: [Self.devices[0]])
        }
        #expect(quiet.platform.platform == .android)
        #expect(quiet.scans.first?.offloadedFilters == true)
        #expect(findings(DuplicateScanRule.self, quiet).isEmpty)
        let loud = ScriptTracker.model { s in
            Self.offloadFilters(s)
            Self.scan(s, seconds: 3, everyMs: 30)
        }
        let flood = try #require(findings(DuplicateScanRule.self, loud).first)
        #expect(flood.message.contains("offloaded to the controller") && flood.message.contains("Android's stack"), "\(flood.message)")
        #expect(flood.advice.hasPrefix("Android:") && !flood.advice.contains("CoreBluetooth"))
        let plain = ScriptTracker.model { s in Self.scan(s, seconds: 3, everyMs: 30) }
        #expect(plain.platform.platform == nil)
    }
}
