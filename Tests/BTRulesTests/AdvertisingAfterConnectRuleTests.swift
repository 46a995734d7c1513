import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
import BTScenario

/// BTL013: which advertising set a finding blames when several overlap the connection.
@Suite("advertising-after-connect")
struct AdvertisingAfterConnectRuleTests {
    static let tablet = SampleDevices.tabletCentral
    static let tabletHandle: UInt16 = 0x0003
    static let interval = HCIUnits.slots24(microseconds: Micros.ms(200))
    static let connectable = ExtendedAdvertisingProperties.legacyPDU | ExtendedAdvertisingProperties.connectable
        | ExtendedAdvertisingProperties.scannable
    static let broadcast = ExtendedAdvertisingProperties.includeTxPower
    static var data: AdvertisingData { AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly)]) }

    /// Extended sets `sets` (handle, properties) on; a central connects to set 0 (Advertising Set
    /// Terminated), `whileConnected` runs, the central leaves.
    static func peripheral(sets: [(UInt8, UInt16)], whileConnected: (HCIScript) -> Void) -> CaptureModel {
        ScriptTracker.model { s in
            s.setUpController()
            for (handle, properties) in sets {
                s.startExtendedAdvertising(handle: handle, properties: properties, intervalMin: interval,
                                           intervalMax: interval, data: data, scanResponse: nil, sid: handle)
            }
            s.wait(seconds: 2)
            let link = s.acceptConnection(from: tablet, handle: tabletHandle,
                                          interval: HCIUnits.connectionInterval(microseconds: 45_000),
                                          supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: 720_000),
                                          enhanced: true)
            s.emit(.leAdvertisingSetTerminated(advertisingHandle: 0, connectionHandle: tabletHandle, completedEvents: 10))
            whileConnected(s)
            s.peerDisconnects(link)
            s.wait(seconds: 1)
        }
    }

    @Test("peripheral-role: connection #2 is blamed on connectable set 0, turned back on, not broadcast set 1")
    func fixtureNamesTheResumedSet() throws {
        let model = try ScenarioModels.model(PeripheralRole.name)
        let found = findings(AdvertisingAfterConnectRule.self, model)
        let second = try #require(found.first { $0.connection?.id == 2 })
        let resumed = try #require(model.ownAdvertising.first {
            $0.setHandle == PeripheralRole.connectableSet && $0.resumedAfterConnection != nil && $0.isExtended
        })
        // Broadcast set 1 overlaps the connection longer, but it cannot be connected to.
        let broadcast = try #require(model.ownAdvertising.first { $0.setHandle == PeripheralRole.broadcastSet })
        #expect(!broadcast.isConnectable)
        #expect(second.records.contains(resumed.start))
        #expect(second.message.hasPrefix("Advertising (set 0) was on for "), "\(second.message)")
        #expect(second.message.contains("after the central connected"), "\(second.message)")
        let first = try #require(found.first { $0.connection?.id == 1 })
        #expect(first.message.hasPrefix("Advertising (set 0) was on for "), "\(first.message)")
    }

    @Test("a connectable set turned back on is reported before a longer non-connectable one")
    func connectableFirst() throws {
        let model = Self.peripheral(sets: [(0, Self.connectable), (1, Self.broadcast)]) { s in
            s.wait(seconds: 3)
            s.setExtendedAdvertising(enabled: true, handles: [0])
            s.wait(seconds: 10)
        }
        let found = findings(AdvertisingAfterConnectRule.self, model)
        #expect(found.count == 1)
        let f = try #require(found.first)
        #expect(f.message.hasPrefix("Advertising (set 0) was on for 10 s"), "\(f.message)")
    }

    @Test("among equally suspect sets, the longest overlap is reported")
    func longestOverlap() throws {
        let model = Self.peripheral(sets: [(0, Self.connectable), (1, Self.broadcast), (2, Self.broadcast)]) { s in
            s.wait(seconds: 4)
            s.setExtendedAdvertising(enabled: false, handles: [1])
            s.wait(seconds: 8)
        }
        let found = findings(AdvertisingAfterConnectRule.self, model)
        #expect(found.count == 1)
        let f = try #require(found.first)
        #expect(f.message.hasPrefix("Advertising (set 2) was on for 12 s"), "\(f.message)")
    }

    @Test("advertising stopped within the grace period is not reported")
    func stoppedInTime() {
        let model = Self.peripheral(sets: [(0, Self.connectable), (1, Self.broadcast)]) { s in
            s.wait(ms: 500)
            s.setExtendedAdvertising(enabled: false, handles: [1])
            s.wait(seconds: 10)
        }
        #expect(findings(AdvertisingAfterConnectRule.self, model).isEmpty)
    }
}
