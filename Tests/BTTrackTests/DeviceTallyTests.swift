import BTCapture
import BTReport
import BTScenario
import BTTrack
import BTWire
import TestSupport
import Testing

/// With a second thread (`LinkThreadPolicy`), scan reports are tallied per device there, from batches of
/// senders, while sessions start and end on the reading thread: each session must get exactly the counts
/// it gets on one thread, across controllers, the device limit, late reports and sessions still open at the end.
@Suite("Device tallies on a second thread")
struct DeviceTallyTests {
    /// Writes a monitor btsnoop (several controllers in one file), with the controller of each packet settable.
    final class MonitorSink: PacketSink {
        let writer: BTSnoopWriter
        var controller: UInt16 = 0

        init(path: String) throws { writer = try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.monitor) }

        func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {}
        func note(_ text: String, timestamp: Timestamp) throws {}
        func finish() throws { try writer.finish() }
        func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws {
            try writer.write(kind: kind, direction: direction, timestamp: timestamp, controller: controller, payload: payload)
        }
    }

    static func device(_ n: Int) -> PeerAddress { Build.random(0xD0_00_00_00_00_00 + UInt64(n)) }

    /// Sessions on two controllers that interleave; one past the device limit; late reports; an extended duration
    /// that runs out unseen; sessions still open at the end.
    static func writeCapture(_ path: String) throws {
        let sink = try MonitorSink(path: path)
        let s = HCIScript(sink: sink, controller: SampleDevices.phoneController, seed: 7, title: "tallies")
        s.setUpController()
        s.startScan(active: false, interval: Build.interval, window: Build.window, filterDuplicates: false)
        let many = ScanSession.deviceLimit + 300
        for start in stride(from: 0, to: many, by: 7) {
            s.report((start..<min(many, start + 7)).map { Build.legacy(device($0), []) })
            if start % 700 == 0 {
                // Another controller's reports in the middle of this session (an implicit session there).
                sink.controller = 1
                s.report([Build.legacy(device(start), []), Build.legacy(device(many + start), [])])
                sink.controller = 0
            }
        }
        s.stopScan()
        s.wait(ms: 200)
        s.report([Build.legacy(device(1), []), Build.legacy(device(2), [])])  // late: in flight when it stopped
        s.wait(seconds: 5)
        s.commandComplete(.leSetExtendedScanParameters(phys: [
            .init(phyBit: LEParameter.phy1MBit, active: true, interval: Build.interval, window: Build.window),
        ]))
        s.commandComplete(.leSetExtendedScanEnable(true, filterDuplicates: 0, duration: 50))
        for n in 0..<30 { s.report([Build.legacy(device(n % 9), [], type: n % 3 == 0 ? LegacyReportType.scanResponse : LegacyReportType.advInd)]) }
        s.wait(seconds: 3)
        for n in 0..<12 { s.report([Build.legacy(device(n % 4), [])]) }  // after the duration ran out: a new session
        sink.controller = 1
        s.report([Build.legacy(device(3), [])])
        try s.finish()
    }

    static func scans(_ path: String, _ policy: LinkThreadPolicy) throws -> [String] {
        var options = TrackerOptions()
        options.linkThread = policy
        return try track(path, options: options).scans.map { ScanSessionJSON.object($0).serialized() }
    }

    @Test("every session's reports per device, unique devices and estimate are the same on one thread and two")
    func sameOnBothPaths() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("tallies.btsnoop")
        try Self.writeCapture(path)
        let one = try Self.scans(path, .never)
        let two = try Self.scans(path, .always)
        #expect(one == two)

        let sessions = try track(path, options: { var o = TrackerOptions(); o.linkThread = .always; return o }()).scans
        try #require(sessions.count == 4)
        let big = sessions[0]
        #expect(big.controller == 0 && big.endReason == .disabled && big.lateReports == 2)
        #expect(big.reportsPerDevice.count == ScanSession.deviceLimit && big.uniqueDevicesIsEstimate)
        #expect(big.reportsFromUncountedDevices == ScanSession.deviceLimit + 300 - ScanSession.deviceLimit)
        let other = sessions[1]
        #expect(other.controller == 1 && other.implicitStart && other.end == nil)
        #expect(other.reports == 15 && other.uniqueDevices == 15 && !other.uniqueDevicesIsEstimate)
        let timed = sessions[2]
        #expect(timed.endReason == .durationElapsed && timed.reports == 30 && timed.uniqueDevices == 9)
        #expect(timed.reportsPerDevice.first?.reports == 4)
        let last = sessions[3]
        #expect(last.implicitStart && last.end == nil && last.reports == 12 && last.uniqueDevices == 4)
    }
}
