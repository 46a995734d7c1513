import BTCapture
import BTDecode
import BTScenario
import BTTrack
import BTWire
import Testing

@Suite("Advertiser table")
struct AdvertiserTrackerTests {
    static let a = Build.random(0xC0_00_00_00_00_0A)
    static let b = Build.random(0xC0_00_00_00_00_0B)

    @Test("beacons: iBeacon UUID, big-endian major/minor and power; names from scan responses; service data")
    func beacons() throws {
        let h = try TrackingHarness.run(scenario: Beacons.name)
        let all = h.advertiserList()
        #expect(all.count == 13)
        let beacons = all.compactMap(\.iBeacon)
        #expect(beacons.count == Beacons.iBeacons.count)
        for expected in Beacons.iBeacons {
            let b = try #require(beacons.first { $0.major == expected.major && $0.minor == expected.minor },
                                 "iBeacon \(expected.major)/\(expected.minor)")
            #expect(b.proximityUUID == Beacons.iBeaconUUID)
            #expect(b.measuredPower == Beacons.iBeaconPower)
        }
        // 0x0002/0x0A0B must read as 2/2571, not byte-swapped (btmon reads them little-endian).
        #expect(beacons.contains { $0.major == 2 && $0.minor == 2571 })
        for beacon in all where beacon.iBeacon != nil {
            #expect(!beacon.isConnectable && beacon.eventTypes.names == ["ADV_NONCONN_IND"])
            #expect(beacon.flags == AdvertisingDataView.Flags(rawValue: 0x06))
            // Heard by the legacy and the extended scan with identical data: never a change.
            #expect(beacon.dataChanges == 0)
        }

        let treadmill = try #require(h.advertiser(named: "Treadmill 44"))
        #expect(treadmill.serviceUUIDs == [BluetoothUUID(uuid16: 0x180D), BluetoothUUID(uuid16: 0x180F)])
        #expect(treadmill.txPowerLevel == -4)
        #expect(treadmill.isConnectable)
        #expect(treadmill.eventTypes.names == ["ADV_IND", "SCAN_RSP"])
        #expect(treadmill.scanResponses > 0 && treadmill.scanResponses < treadmill.reports)

        // The scale sends a Shortened Name in its advertisement and the Complete Name in its scan response.
        let scale = try #require(h.advertiser(named: "Kitchen Scale Pro"))
        #expect(Set(scale.names) == ["Scale", "Kitchen Scale Pro"])
        #expect(!scale.isConnectable)
        #expect(scale.manufacturerData.first?.company.rawValue == 0x0059)

        let eddystone = try #require(all.first { $0.serviceData.contains { $0.uuid == BluetoothUUID(uuid16: Beacons.eddystone) } && $0.name == nil })
        #expect(eddystone.serviceData.first?.data.first == Beacons.eddystoneUID)
        #expect(eddystone.serviceUUIDs == [BluetoothUUID(uuid16: Beacons.eddystone)])
        #expect(h.advertisers.overflow == AdvertiserOverflow())
    }

    @Test("beacons: chained extended reports are joined before parsing; a truncated chain is counted")
    func chainedExtendedReports() throws {
        let h = try TrackingHarness.run(scenario: Beacons.name)
        let guide = try #require(h.advertiser(named: "Exhibit Guide 1001"))
        #expect(guide.usesExtendedAdvertising && guide.isConnectable)
        #expect(guide.reportedTxPower == 5)
        #expect(guide.advertisingSIDs == 1 << 3)
        // 150 bytes of manufacturer data and 150 of service data only fit once the fragments are joined.
        let garmin = try #require(guide.manufacturerData.first)
        #expect(garmin.data == (0..<Beacons.longDataLength / 2).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let service = try #require(guide.serviceData.first)
        #expect(service.uuid == BluetoothUUID(uuid16: Beacons.eddystone))
        #expect(service.data.count == Beacons.longDataLength / 2)
        #expect(guide.truncatedAdvertisements == 0 && !guide.malformedData)
        #expect(guide.dataChanges == 0)

        let sensor = try #require(h.advertiser(named: "Long Range Sensor"))
        #expect(sensor.eventTypes.names == ["ext-nonconnectable"] && !sensor.isConnectable)
        #expect(sensor.serviceData.first?.data.count == Beacons.codedSensorDataLength)

        let flaky = try #require(h.advertiser(named: "Flaky Chain"))
        #expect(flaky.truncatedAdvertisements == 1)
    }

    @Test("fragments of two advertisers interleaved are joined per address and SID")
    func interleavedChains() throws {
        let dataA = AdvertisingData([.completeName("Chain A"),
                                     .manufacturer(company: CompanyID(rawValue: 0x0059), data: Array(0..<200))]).bytes
        let dataB = AdvertisingData([.completeName("Chain B"),
                                     .serviceData16(uuid: 0x180F, data: Array(repeating: 0xB0, count: 180))]).bytes
        func chain(_ peer: PeerAddress, _ data: [UInt8], sid: UInt8) -> [ExtendedAdvertisingReport] {
            ExtendedAdvertisingReport.fragmented(baseType: ExtendedReportType.connectable, peer: peer, data: data,
                                                 rssi: -50, sid: sid, primaryPHY: LEParameter.phy1M,
                                                 secondaryPHY: LEParameter.phy2M, txPower: 0, fragmentLength: 60)
        }
        let fragmentsA = chain(Self.a, dataA, sid: 1), fragmentsB = chain(Self.b, dataB, sid: 2)
        try #require(fragmentsA.count >= 3 && fragmentsB.count >= 3)
        let h = TrackingHarness.run { s in
            for i in 0..<max(fragmentsA.count, fragmentsB.count) {
                if i < fragmentsA.count { s.report(extended: [fragmentsA[i]]) }
                if i < fragmentsB.count { s.report(extended: [fragmentsB[i]]) }
            }
        }
        let a = try #require(h.advertiser(Self.a.address))
        #expect(a.name == "Chain A")
        #expect(a.manufacturerData.first?.data == Array(0..<200))
        #expect(a.reports == fragmentsA.count && !a.malformedData && a.truncatedAdvertisements == 0)
        let b = try #require(h.advertiser(Self.b.address))
        #expect(b.name == "Chain B")
        #expect(b.serviceData.first?.data == Array(repeating: 0xB0, count: 180))
    }

    @Test("RSSI minimum, lower median and maximum; 127 means not available")
    func rssiStatistics() throws {
        let h = TrackingHarness.run { s in
            for rssi: Int8 in [-70, -60, -50, -65, 127] {
                s.report([Build.legacy(Self.a, [.completeName("A")], rssi: rssi)])
            }
            s.report([Build.legacy(Self.b, [], rssi: 127)])
        }
        let a = try #require(h.advertiser(Self.a.address))
        #expect(a.rssi == RSSIStatistics(minimum: -70, median: -65, maximum: -50, samples: 4))
        #expect(a.reports == 5)
        let b = try #require(h.advertiser(Self.b.address))
        #expect(b.rssi == nil)
    }

    @Test("data is parsed only when it changes; lists collect distinct values, service data keeps the latest")
    func dataChanges() throws {
        let one: [ADStructure] = [.completeName("One"), .manufacturer(company: .apple, data: [1, 2, 3]),
                                  .serviceData16(uuid: 0xFEAA, data: [9])]
        let two: [ADStructure] = [.completeName("Two"), .manufacturer(company: .apple, data: [4, 5]),
                                  .uuid16([0x180D], complete: true), .appearance(0x0341)]
        let h = TrackingHarness.run { s in
            for _ in 0..<5 { s.report([Build.legacy(Self.a, one)]) }
            s.report([Build.legacy(Self.a, two)])
            s.report([Build.legacy(Self.a, one)])
            s.report([Build.legacy(Self.a, [.completeName("One full"), .txPower(-8)], type: LegacyReportType.scanResponse)])
            s.report([Build.legacy(Self.a, [.completeName("One full"), .txPower(-8)], type: LegacyReportType.scanResponse)])
        }
        let a = try #require(h.advertiser(Self.a.address))
        #expect(a.reports == 9 && a.scanResponses == 2)
        // one → two → one: two changes; the first scan response is new data, not a change.
        #expect(a.dataChanges == 2)
        #expect(a.names == ["One", "Two", "One full"])
        #expect(a.name == "One full")
        #expect(a.manufacturerData == [AdvertisingDataView.ManufacturerData(company: .apple, data: [1, 2, 3])])
        #expect(a.serviceData == [AdvertisingDataView.ServiceData(uuid: BluetoothUUID(uuid16: 0xFEAA), data: [9])])
        #expect(a.serviceUUIDs == [BluetoothUUID(uuid16: 0x180D)])
        #expect(a.appearance == 0x0341 && a.txPowerLevel == -8)
        #expect(a.firstSeen.number == 1 && a.lastSeen.number == 9)
    }

    @Test("malformed data keeps the structures before the break and is flagged")
    func malformed() throws {
        // Complete Local Name "Half", then a structure declaring 10 bytes with 2 present.
        let bytes: [UInt8] = [0x05, 0x09, 0x48, 0x61, 0x6C, 0x66, 0x0A, 0xFF, 0x01]
        let h = TrackingHarness.run { s in
            s.report([Build.legacy(Self.a, [.completeName("Fine")])])
            s.report(extended: [ExtendedAdvertisingReport(eventType: ExtendedReportType.legacyAdvInd, peer: Self.b,
                                                          data: bytes, rssi: -40)])
        }
        let a = try #require(h.advertiser(Self.a.address))
        #expect(a.name == "Fine" && !a.malformedData)
        let b = try #require(h.advertiser(Self.b.address))
        #expect(b.name == "Half" && b.manufacturerData.isEmpty && b.malformedData)
        #expect(b.eventTypes.names == ["ADV_IND"] && !b.usesExtendedAdvertising)
    }

    @Test("4096 advertisers are kept; the rest are counted and estimated")
    func advertiserLimit() throws {
        let extra = 100
        let count = AdvertiserTracker.advertiserLimit + extra
        let h = TrackingHarness.run { s in
            for start in stride(from: 0, to: count, by: 8) {
                s.report((start..<min(count, start + 8)).map { Build.legacy(Build.random(0xE0_00_00_00_00_00 + UInt64($0)), []) })
            }
            // Known advertisers still count after the table is full.
            s.report([Build.legacy(Build.random(0xE0_00_00_00_00_00), [.completeName("First")])])
        }
        #expect(h.advertisers.count == AdvertiserTracker.advertiserLimit)
        #expect(h.advertisers.overflow.reports == extra)
        #expect(abs(h.advertisers.overflow.estimatedAdvertisers - extra) <= 3)
        let first = try #require(h.advertiser(BDAddr(rawValue: 0xE0_00_00_00_00_00)))
        #expect(first.reports == 2 && first.name == "First")
    }

    @Test("finish changes nothing: a snapshot taken mid-capture leaves tracking as it was")
    func snapshot() throws {
        var middle: [Advertiser] = []
        var middleScans = ScanSessions()
        let h = TrackingHarness.run { s, harness in
            s.setUpController()
            s.startScan(active: true, interval: Build.interval, window: Build.window, filterDuplicates: false)
            for rssi: Int8 in [-70, -60, -50] { s.report([Build.legacy(Self.a, [.completeName("A")], rssi: rssi)]) }
            var advertisers = harness.advertisers
            middle = advertisers.finish()
            var scans = harness.scans
            middleScans = scans.finish(at: nil)
            for rssi: Int8 in [-40, -30] { s.report([Build.legacy(Self.a, [.completeName("A")], rssi: rssi)]) }
        }
        #expect(middle.first?.reports == 3)
        #expect(middle.first?.rssi == RSSIStatistics(minimum: -70, median: -60, maximum: -50, samples: 3))
        #expect(middleScans.first?.reports == 3 && middleScans.first?.end == nil)
        let a = try #require(h.advertiser(Self.a.address))
        #expect(a.reports == 5 && a.rssi == RSSIStatistics(minimum: -70, median: -50, maximum: -30, samples: 5))
        #expect(h.advertiserList().first?.rssi == a.rssi, "finish can be called again")
        #expect(h.scanSessions().first?.reports == 5)
    }
}
