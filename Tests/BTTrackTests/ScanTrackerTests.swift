import BTCapture
import BTDecode
import BTScenario
import BTTrack
import BTWire
import Testing

@Suite("Scan sessions")
struct ScanTrackerTests {
    static let a = Build.random(0xC0_00_00_00_00_0A)
    static let b = Build.random(0xC0_00_00_00_00_0B)

    @Test("beacons: a legacy active scan without duplicate filtering, then an extended scan on 1M and Coded")
    func beacons() throws {
        let h = try TrackingHarness.run(scenario: Beacons.name)
        let sessions = h.scanSessions()
        try #require(sessions.count == 2)
        let legacy = sessions[0], extended = sessions[1]

        #expect(!legacy.isExtended && legacy.isActive && !legacy.implicitStart && legacy.parametersKnown)
        #expect(legacy.intervalMilliseconds == 50 && legacy.windowMilliseconds == 30)
        #expect(legacy.dutyCycle == 0.6)
        #expect(!legacy.filterDuplicates && legacy.filterDuplicatesMode == 0)
        #expect(legacy.endReason == .disabled && legacy.end != nil)
        // The ten legacy advertisers (3 iBeacons, Eddystone, treadmill, scale, 4 bystanders); extended ones
        // are invisible to a legacy scan.
        #expect(legacy.uniqueDevices == 10 && !legacy.uniqueDevicesIsEstimate)
        #expect(legacy.reportsPerDevice.reduce(0) { $0 + $1.reports } == legacy.reports)
        #expect(legacy.scanResponses > 0)
        #expect(legacy.reportsPerDevice.first.map { $0.reports >= legacy.reportsPerDevice.last?.reports ?? 0 } == true)

        #expect(extended.isExtended && extended.isActive)
        #expect(extended.phys == [
            ScanPHYParameters(phy: ScanPHYParameters.phy1M, isActive: true, interval: Beacons.scanInterval,
                              window: Beacons.scanWindow),
            ScanPHYParameters(phy: ScanPHYParameters.phyCoded, isActive: false, interval: Beacons.scanInterval * 3,
                              window: Beacons.scanWindow * 3),
        ])
        // The 1M entry is the one exposed as interval/window.
        #expect(extended.intervalMilliseconds == 50 && extended.windowMilliseconds == 30)
        #expect(extended.phys[1].intervalMilliseconds == 150 && extended.phys[1].phyName == "Coded")
        #expect(!extended.filterDuplicates)
        #expect(extended.uniqueDevices == 13)
        #expect(extended.durationMilliseconds == nil && extended.scheduledEnd == nil)
        // Every report of the capture fell inside one of the two sessions.
        let total = h.advertiserList().reduce(0) { $0 + $1.reports }
        #expect(legacy.reports + extended.reports == total)
        #expect(legacy.lateReports + extended.lateReports == 0)
    }

    @Test("heart-rate-session: duplicate filtering on, scanning stopped before the connection came up")
    func stoppedBeforeConnecting() throws {
        let h = try TrackingHarness.run(scenario: HeartRateSession.name)
        let sessions = h.scanSessions()
        try #require(sessions.count == 1)
        let s = sessions[0]
        #expect(s.filterDuplicates && s.filterDuplicatesMode == 1)
        #expect(s.isActive && s.intervalMilliseconds == 60 && s.windowMilliseconds == 30 && s.dutyCycle == 0.5)
        #expect(s.connectionsWhileScanning.isEmpty)
        #expect(s.endReason == .disabled)
        #expect(h.scanningAtConnection == [false])
        let sensor = try #require(s.reportsPerDevice.first { $0.address == HeartRateSession.sensor.address })
        #expect(sensor.reports >= 1)
    }

    @Test("wasteful-central: 100 % duty cycle left on while connected, restarted and left on again")
    func leftOnWhileConnected() throws {
        let h = try TrackingHarness.run(scenario: WastefulCentral.name)
        let sessions = h.scanSessions()
        try #require(sessions.count == 2)
        #expect(h.scanningAtConnection == [true, true])
        let first = sessions[0], second = sessions[1]
        #expect(first.dutyCycle == 1 && first.intervalMilliseconds == 10 && !first.filterDuplicates)
        #expect(first.connectionsWhileScanning.count == 1)
        #expect(first.endReason == .disabled)
        #expect(second.connectionsWhileScanning.count == 1)
        #expect(second.end == nil && second.endReason == nil && second.endTimestamp == nil && second.duration == nil)
        // The connection of the first session came up after it started and before it ended.
        let connection = try #require(first.connectionsWhileScanning.first)
        #expect(first.start < connection && connection < (first.end ?? connection))
        #expect(h.scans.isScanning(controller: 0))
    }

    @Test("extended filter_dup 2 counts as filtering; the same enable again is a no-op; a different one restarts")
    func extendedFilterModes() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.commandComplete(.leSetExtendedScanParameters(phys: [
                .init(phyBit: LEParameter.phy1MBit, active: false, interval: 0x0060, window: 0x0030),
            ]))
            s.commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: 2))
            s.report([Build.legacy(Self.a, [.completeName("A")]), Build.legacy(Self.b, [.completeName("B")])])
            s.wait(ms: 100)
            s.commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: 2))
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            s.commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: 0))
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            s.commandComplete(.leSetExtendedScanEnable(false, filterDuplicates: 0))
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 2)
        #expect(sessions[0].filterDuplicates && sessions[0].filterDuplicatesMode == 2)
        #expect(!sessions[0].isActive && sessions[0].intervalMilliseconds == 60 && sessions[0].windowMilliseconds == 30)
        #expect(sessions[0].reports == 3 && sessions[0].uniqueDevices == 2)
        #expect(sessions[0].endReason == .restarted)
        #expect(sessions[0].reportsPerDevice == [
            DeviceReportCount(address: Self.a.address, addressType: .random, reports: 2),
            DeviceReportCount(address: Self.b.address, addressType: .random, reports: 1),
        ])
        #expect(!sessions[1].filterDuplicates && sessions[1].filterDuplicatesMode == 0)
        #expect(sessions[1].start == sessions[0].end)
        #expect(sessions[1].reports == 1 && sessions[1].endReason == .disabled)
    }

    @Test("an extended duration ends at LE Scan Timeout")
    func scanTimeout() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.commandComplete(.leSetExtendedScanParameters(phys: [
                .init(phyBit: LEParameter.phy1MBit, active: true, interval: Build.interval, window: Build.window),
            ]))
            s.commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: 1, duration: 100))
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            s.wait(ms: 1000)
            s.emit(Build.scanTimeout)
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 1)
        let s = sessions[0]
        #expect(s.durationMilliseconds == 1000 && s.periodMilliseconds == nil)
        #expect(s.endReason == .timeout)
        #expect(s.endTimestamp == s.end?.timestamp)
        let scheduled = try #require(s.scheduledEnd)
        #expect(scheduled - s.start.timestamp == .seconds(1))
        #expect(!h.scans.isScanning(controller: 0))
    }

    @Test("an extended duration without a Scan Timeout in the capture ends when a later record shows it ran out")
    func durationElapsed() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.commandComplete(.leSetExtendedScanParameters(phys: [
                .init(phyBit: LEParameter.phy1MBit, active: false, interval: Build.interval, window: Build.window),
            ]))
            s.commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: 0, duration: 50))
            s.wait(ms: 100)
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            s.wait(seconds: 3)
            s.report([Build.legacy(Self.b, [.completeName("B")])])
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 2)
        let first = sessions[0]
        #expect(first.endReason == .durationElapsed)
        #expect(first.reports == 1)
        let end = try #require(first.endTimestamp)
        #expect(end - first.start.timestamp == .milliseconds(500))
        #expect(first.duration == .milliseconds(500))
        // Reports long after it ran out mean the radio scans again, for reasons the capture does not show.
        #expect(sessions[1].implicitStart && sessions[1].reports == 1)
    }

    @Test("reports before any enable open an implicit session at the first report")
    func implicitStart() throws {
        let h = TrackingHarness.run { s in
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            s.wait(ms: 200)
            s.report([Build.legacy(Self.a, [.completeName("A full")], type: LegacyReportType.scanResponse)])
            s.wait(ms: 200)
            s.commandComplete(.leSetScanEnable(false, filterDuplicates: false))
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 1)
        let s = sessions[0]
        #expect(s.implicitStart && !s.parametersKnown && s.phys.isEmpty)
        #expect(s.start.number == 1)
        // A scan response proves the scan was active.
        #expect(s.isActive && s.scanResponses == 1)
        #expect(s.reports == 2 && s.uniqueDevices == 1)
        #expect(s.endReason == .disabled)
        #expect(s.dutyCycle == 0)
    }

    @Test("a rejected enable starts nothing; without parameters a legacy enable uses the controller's defaults")
    func rejectedAndDefaults() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.commandComplete(.leSetScanEnable(true, filterDuplicates: true), returning: [0x0C])
            s.wait(seconds: 5)
            s.commandComplete(.leSetScanEnable(true, filterDuplicates: true))
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 1)
        #expect(!sessions[0].parametersKnown && !sessions[0].implicitStart)
        #expect(!sessions[0].isActive && sessions[0].intervalMilliseconds == 10 && sessions[0].windowMilliseconds == 10)
        #expect(sessions[0].end == nil)
    }

    @Test("HCI Reset ends the session; reports already in flight count as late, not as a new session")
    func resetAndLateReports() throws {
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.startScan(active: true, interval: Build.interval, window: Build.window, filterDuplicates: false)
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            s.commandComplete(.reset)
            s.report([Build.legacy(Self.b, [.completeName("B")])])
            s.startScan(active: false, interval: Build.interval, window: Build.window, filterDuplicates: true)
            s.stopScan()
            s.report([Build.legacy(Self.b, [.completeName("B")])])
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 2)
        #expect(sessions[0].endReason == .reset && sessions[0].reports == 1 && sessions[0].lateReports == 1)
        #expect(sessions[1].endReason == .disabled && !sessions[1].isActive && sessions[1].lateReports == 1)
        #expect(sessions[1].reports == 0)
    }

    @Test("per-device counts are kept for 4096 devices per session; the rest are counted and estimated")
    func deviceLimit() throws {
        let devices = ScanSession.deviceLimit + 904
        let h = TrackingHarness.run { s in
            s.setUpController()
            s.startScan(active: false, interval: Build.interval, window: Build.window, filterDuplicates: false)
            for start in stride(from: 0, to: devices, by: 8) {
                s.report((start..<min(devices, start + 8)).map { Build.legacy(Build.random(0xD0_00_00_00_00_00 + UInt64($0)), []) })
            }
            s.stopScan()
        }
        let s = try #require(h.scanSessions().first)
        #expect(s.reports == devices)
        #expect(s.reportsPerDevice.count == ScanSession.deviceLimit)
        #expect(s.reportsFromUncountedDevices == devices - ScanSession.deviceLimit)
        #expect(s.uniqueDevicesIsEstimate)
        #expect(abs(s.uniqueDevices - devices) <= devices / 50, "estimate \(s.uniqueDevices) for \(devices)")
    }

    @Test("sessions are per controller")
    func perController() throws {
        let h = TrackingHarness.run { s, harness in
            s.setUpController()
            s.startScan(active: true, interval: Build.interval, window: Build.window, filterDuplicates: false)
            harness.controller = 1
            s.report([Build.legacy(Self.a, [.completeName("A")])])
            harness.controller = 0
            s.report([Build.legacy(Self.b, [.completeName("B")])])
            s.stopScan()
        }
        let sessions = h.scanSessions()
        try #require(sessions.count == 2)
        #expect(sessions[0].controller == 0 && sessions[0].reports == 1 && sessions[0].endReason == .disabled)
        #expect(sessions[1].controller == 1 && sessions[1].implicitStart && sessions[1].end == nil)
        #expect(h.scans.isScanning(controller: 1) && !h.scans.isScanning(controller: 0))
    }
}
