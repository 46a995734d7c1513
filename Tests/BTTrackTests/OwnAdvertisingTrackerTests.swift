import BTCapture
import BTDecode
import BTScenario
import BTTrack
import BTWire
import Testing

@Suite("Own advertising sessions")
struct OwnAdvertisingTrackerTests {
    static let central = Build.random(0x7A_00_00_00_00_01)

    /// LE Set Extended Advertising Data with one piece of the data and an explicit operation.
    static func extendedData(handle: UInt8, operation: UInt8, _ piece: ArraySlice<UInt8>) -> HCICommand {
        HCICommand(.leSetExtendedAdvertisingData) { w in
            w.u8(handle)
            w.u8(operation)
            w.u8(LEParameter.mayFragment)
            w.u8(UInt8(piece.count))
            w.append(piece)
        }
    }

    @Test("peripheral-role: legacy advertising stops at the connection and is re-enabled; extended sets end by Set Terminated")
    func peripheralRole() throws {
        let h = try TrackingHarness.run(scenario: PeripheralRole.name)
        let sessions = h.advertisingSessions()
        try #require(sessions.count == 5)
        let (legacy1, legacy2, set0, set1, set0again) = (sessions[0], sessions[1], sessions[2], sessions[3], sessions[4])

        #expect(!legacy1.isExtended && legacy1.setHandle == 0)
        #expect(legacy1.intervalMinimumMilliseconds == 100 && legacy1.intervalMaximumMilliseconds == 100)
        #expect(legacy1.advertisingType == 0 && legacy1.typeName == "ADV_IND" && legacy1.isConnectable)
        #expect(legacy1.localName == "btlens Demo")
        #expect(legacy1.serviceUUIDs == [SampleProfiles.demoService])
        // The laptop's connection ended it...
        let laptop = try #require(legacy1.connectionsWhileAdvertising.first)
        #expect(legacy1.connectionsWhileAdvertising.count == 1)
        #expect(legacy1.endReason == .connected && legacy1.end == laptop && legacy1.endedByConnection == laptop)
        // ...and the host switched advertising straight back on: the rule's "advertising left on".
        #expect(legacy2.resumedAfterConnection == laptop)
        #expect(legacy2.endReason == .disabled && legacy2.connectionsWhileAdvertising.isEmpty)

        #expect(set0.isExtended && set0.setHandle == PeripheralRole.connectableSet)
        #expect(set0.typeName == "ADV_IND" && set0.isConnectable && set0.isScannable)
        #expect(set0.intervalMinimumMilliseconds == 200)
        #expect(set0.localName == "btlens Demo" && set0.resumedAfterConnection == nil)
        let tablet = try #require(set0.connectionsWhileAdvertising.first)
        #expect(set0.endReason == .connected && set0.endedByConnection == tablet)
        #expect(set0.completedEvents == 37)
        #expect(set0.end.map { tablet < $0 } == true)

        #expect(set1.setHandle == PeripheralRole.broadcastSet && !set1.isConnectable)
        #expect(set1.typeName == "ext-tx-power")
        #expect(set1.localName == "btlens Demo broadcast")
        #expect(set1.connectionsWhileAdvertising == [tablet])
        #expect(set1.endReason == .disabled)

        #expect(set0again.setHandle == PeripheralRole.connectableSet && set0again.resumedAfterConnection == tablet)
        #expect(set0again.endReason == .disabled && set0again.end == set1.end)
        #expect(!h.own.isAdvertising(controller: 0))
    }

    @Test("extended data in fragments is joined; a new complete data while on updates the session")
    func fragmentedData() throws {
        let full = AdvertisingData([.completeName("Fragmented Name Here"),
                                    .uuid16([0x180F, 0x181A], complete: true)]).bytes
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.commandComplete(.leSetExtendedAdvertisingParameters(handle: 2, properties: 0x0000, intervalMin: 0x00A0,
                                                                  intervalMax: 0x0140,
                                                                  ownAddressType: LEParameter.randomAddress))
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.firstFragment, full[0..<5]))
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.intermediateFragment, full[5..<12]))
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.lastFragment, full[12...]))
            s.setExtendedAdvertising(enabled: true, handles: [2])
            s.wait(seconds: 1)
            s.commandComplete(.leSetExtendedAdvertisingData(handle: 2, AdvertisingData([.completeName("Renamed")])))
            s.commandComplete(.leSetExtendedAdvertisingEnable(true, sets: [.init(handle: 2, duration: 500, maxEvents: 20)]))
        }
        let sessions = h.advertisingSessions()
        try #require(sessions.count == 1)
        let s = sessions[0]
        #expect(s.isExtended && s.setHandle == 2 && s.typeName == "ext-nonconnectable")
        #expect(s.intervalMinimumMilliseconds == 100 && s.intervalMaximumMilliseconds == 200)
        #expect(s.localName == "Renamed" && s.serviceUUIDs.isEmpty)
        // Enabling an enabled set keeps the session and takes the new duration and event limit.
        #expect(s.durationMilliseconds == 5000 && s.maximumEvents == 20)
        #expect(s.end == nil && h.own.isAdvertising(controller: 0))
    }

    @Test("fragments without a first fragment before them are ignored; a chain stops growing at 1650 bytes")
    func orphanAndOverlongFragments() throws {
        let full = AdvertisingData([.completeName("Fragmented Name Here")]).bytes
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.commandComplete(.leSetExtendedAdvertisingParameters(handle: 2, properties: 0x0000, intervalMin: 0x00A0,
                                                                  intervalMax: 0x0140,
                                                                  ownAddressType: LEParameter.randomAddress))
            // The capture missed the first fragment: the rest must not be taken for whole data.
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.intermediateFragment, full[0..<5]))
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.lastFragment, full[5...]))
            s.setExtendedAdvertising(enabled: true, handles: [2])
            s.wait(seconds: 1)
            s.setExtendedAdvertising(enabled: false, handles: [2])
            // A first fragment with the name, then far more than 1650 bytes of filler: the name is kept.
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.firstFragment, full[...]))
            let filler = [UInt8](repeating: 0, count: 250)
            for _ in 0..<20 {
                s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.intermediateFragment, filler[...]))
            }
            s.commandComplete(Self.extendedData(handle: 2, operation: LEParameter.lastFragment, filler[..<1]))
            s.setExtendedAdvertising(enabled: true, handles: [2])
        }
        let sessions = h.advertisingSessions()
        try #require(sessions.count == 2)
        #expect(sessions[0].localName == nil)
        #expect(sessions[1].localName == "Fragmented Name Here")
    }

    @Test("Set Terminated with timeout and limit statuses; HCI Reset ends the rest")
    func terminations() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            for handle: UInt8 in [0, 1, 2] {
                s.startExtendedAdvertising(handle: handle, properties: ExtendedAdvertisingProperties.connectable,
                                           intervalMin: 0x0100, intervalMax: 0x0100,
                                           data: AdvertisingData([.completeName("Set \(handle)")]), scanResponse: nil)
            }
            s.wait(seconds: 1)
            s.emit(Build.setTerminated(status: 0x3C, handle: 0, events: 12))
            s.emit(Build.setTerminated(status: 0x43, handle: 1, events: 50))
            s.wait(seconds: 1)
            s.commandComplete(.reset)
        }
        let sessions = h.advertisingSessions()
        try #require(sessions.count == 3)
        #expect(sessions[0].endReason == .terminated(HCIStatus(rawValue: 0x3C)) && sessions[0].endReason?.name == "timeout")
        #expect(sessions[0].completedEvents == 12 && sessions[0].localName == "Set 0")
        #expect(sessions[1].endReason?.name == "limit_reached" && sessions[1].completedEvents == 50)
        #expect(sessions[2].endReason == .reset && sessions[2].endReason?.name == "reset")
        #expect(sessions.allSatisfy { $0.endedByConnection == nil })
    }

    @Test("non-connectable legacy advertising continues through a connection; central links are not counted")
    func nonConnectableAndCentral() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.startLegacyAdvertising(intervalMin: 0x0800, intervalMax: 0x0800,
                                     data: AdvertisingData([.shortName("Beacon")]),
                                     scanResponse: AdvertisingData([.completeName("Beacon Long")]),
                                     type: LEParameter.advNonconnInd)
            s.commandComplete(.leSetAdvertisingEnable(true), returning: [0x0C])
            s.wait(seconds: 1)
            s.connect(to: Self.central, handle: 0x0040, parameters: .interval(minMicroseconds: 30_000, maxMicroseconds: 30_000,
                                                                              timeoutMicroseconds: 4_000_000),
                      scanInterval: 0x0060, scanWindow: 0x0030)
            s.acceptConnection(from: Self.central, handle: 0x0041, interval: 0x0018, supervisionTimeout: 0x0100,
                               enhanced: false)
            s.wait(seconds: 1)
            s.setAdvertising(enabled: false)
            s.commandComplete(.leSetAdvertisingEnable(false), returning: [0x0C])
        }
        let sessions = h.advertisingSessions()
        try #require(sessions.count == 1)
        let s = sessions[0]
        #expect(s.typeName == "ADV_NONCONN_IND" && !s.isConnectable && !s.isScannable)
        #expect(s.intervalMinimumMilliseconds == 1280)
        #expect(s.localName == "Beacon Long")
        #expect(s.connectionsWhileAdvertising.count == 1)
        #expect(s.endReason == .disabled)
    }
}
