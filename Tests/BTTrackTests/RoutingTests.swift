import BTCapture
import BTDecode
import BTScenario
import BTTrack
import BTWire
import Testing

/// `CaptureTracker` (what `btlens devices` runs) and the test harness's direct routing agree, so the other
/// suites' facts hold for the real pipeline too.
@Suite("CaptureTracker routing to the scan and advertiser trackers")
struct RoutingTests {
    @Test("beacons: the same scan sessions and advertisers through CaptureTracker", arguments: [Beacons.name, HeartRateSession.name])
    func sameResults(scenario: String) throws {
        let h = try TrackingHarness.run(scenario: scenario)
        let model = h.tracker.finish()
        let direct = h.scanSessions()
        #expect(model.scans.count == direct.count)
        for (a, b) in zip(model.scans, direct) {
            #expect(a.start == b.start && a.end == b.end && a.endReason == b.endReason)
            #expect(a.reports == b.reports && a.uniqueDevices == b.uniqueDevices)
            #expect(a.reportsPerDevice == b.reportsPerDevice)
            #expect(a.phys == b.phys && a.filterDuplicatesMode == b.filterDuplicatesMode)
        }
        let advertisers = h.advertiserList()
        #expect(model.advertisers.count == advertisers.count && !advertisers.isEmpty)
        for (a, b) in zip(model.advertisers, advertisers) {
            #expect(a.address == b.address && a.reports == b.reports && a.names == b.names)
            #expect(a.rssi == b.rssi && a.iBeacon == b.iBeacon && a.manufacturerData == b.manufacturerData)
        }
        #expect(model.firstTimestamp != nil)
    }

    @Test("peripheral-role: extended sets end by Advertising Set Terminated through CaptureTracker")
    func ownAdvertising() throws {
        let h = try TrackingHarness.run(scenario: PeripheralRole.name)
        let sessions = h.tracker.finish().ownAdvertising
        let extended = sessions.filter(\.isExtended)
        #expect(extended.count == 3)
        #expect(extended.first?.endReason == .connected && extended.first?.completedEvents == 37)
        #expect(extended.last?.resumedAfterConnection != nil)
        #expect(sessions.filter { !$0.isExtended }.allSatisfy { $0.localName == "btlens Demo" })
    }
}
