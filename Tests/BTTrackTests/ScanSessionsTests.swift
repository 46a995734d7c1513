import Foundation
import BTWire
import BTCapture
@testable import BTTrack
import Testing

/// Scan sessions set aside in a file as they end (`ScanSessions`) read back as they were written, and the
/// collection keeps value semantics over the shared, append-only file.
@Suite("Scan sessions set aside")
struct ScanSessionsTests {
    static func ref(_ n: Int) -> RecordRef {
        RecordRef(number: n, offset: Int64(n) * 10, timestamp: Timestamp(nanoseconds: Int64(n) * 1_000_000), controller: 1, length: 9)
    }

    /// A session with every field away from its default, lists of `n` items.
    static func session(_ n: Int) -> ScanSession {
        var s = ScanSession.forModel(active: n % 2 == 0, interval: UInt16(16 + n), window: UInt16(8 + n % 8))
        s.controller = UInt16(n % 3)
        s.start = ref(n)
        s.end = n % 5 == 0 ? nil : ref(n + 1)
        s.endReason = n % 5 == 0 ? nil : .timeout
        s.isExtended = n % 3 == 0
        s.offloadedFilters = n % 4 == 0
        s.reports = n * 7
        s.uniqueDevices = n
        s.scanResponses = n * 2
        s.connectionsWhileScanning = RecordRefList((0..<(n % 4)).map { ref(n * 100 + $0) })
        s.connectionsWhileScanningCount = n % 4 + 3
        s.lastLinkChange = n % 2 == 0 ? Timestamp(nanoseconds: Int64(n)) : nil
        s.phys.append(ScanPHYParameters(phy: ScanPHYParameters.phyCoded, isActive: true, interval: 96, window: UInt16(n % 48)))
        s.durationMilliseconds = n % 2 == 0 ? Double(n) * 10 : nil
        s.periodMilliseconds = n % 7 == 0 ? 1280 : nil
        s.scheduledEnd = Timestamp(nanoseconds: Int64(n) * 5)
        s.reportsPerDevice = (0..<(n % 6)).map { DeviceReportCount(address: BDAddr(rawValue: UInt64(n * 16 + $0)), addressType: .random, reports: $0 + 1) }
        s.scanDevices = n % 2 == 0 ? n : nil
        s.reportsFromUncountedDevices = n % 9
        s.uniqueDevicesIsEstimate = n % 8 == 0
        s.lateReports = n % 3
        s.implicitStart = n % 11 == 0
        s.parametersKnown = n % 13 != 0
        return s
    }

    /// Every field, as the reflection prints it.
    static func text(_ s: ScanSession) -> String { String(reflecting: s) }

    @Test("a session's bytes read back as the session, every field and list")
    func roundTrip() throws {
        let spill = try Spill(directory: FileManager.default.temporaryDirectory.path, name: "scan-test")
        for n in 0..<40 {
            let s = Self.session(n)
            let at = ScanSession.append(s, to: spill)
            #expect(at < spill.size)
            #expect(Self.text(ScanSession.read(from: spill, at: at)) == Self.text(s))
        }
        #expect(spill.failure == nil)
    }

    @Test("a scan's thousands of connections set aside a chunk at a time, read back whole, copied to another file")
    func connectionsSetAside() throws {
        let directory = FileManager.default.temporaryDirectory.path
        let spill = try Spill(directory: directory, name: "scan-test"), other = try Spill(directory: directory, name: "scan-test")
        let n = 2 * RecordRefList.chunkLength + 17
        var s = Self.session(1)
        s.connectionsWhileScanning = RecordRefList(settingAsideIn: spill)
        for k in 0..<n { s.connectionsWhileScanning.append(Self.ref(k)) }
        // Two chunks in the file, the rest in memory; read in order.
        #expect(s.connectionsWhileScanning.count == n)
        #expect(s.connectionsWhileScanning.map(\.number) == Array(0..<n))
        // The session written after them (the chunks stay where they are) or to another file (written anew).
        for target in [spill, other] {
            let at = ScanSession.append(s, to: target)
            let back = ScanSession.read(from: target, at: at)
            #expect(back.connectionsWhileScanning.map(\.number) == Array(0..<n))
            #expect(Self.text(back) == Self.text(s))
        }
        #expect(spill.failure == nil && other.failure == nil)
    }

    @Test("sessions past the latest few are set aside, read and changed in place like an array's")
    func collection() throws {
        var sessions = ScanSessions(spillingTo: FileManager.default.temporaryDirectory.path)
        #expect(sessions.spillError == nil)
        let count = 5 * ScanSessions.recentKept + 7
        for n in 0..<count { sessions.append(Self.session(n)) }
        #expect(sessions.count == count)
        #expect(sessions.setAsideCount >= count - 2 * ScanSessions.recentKept)
        #expect(sessions.map(Self.text) == (0..<count).map { Self.text(Self.session($0)) })
        // A copy taken before a change keeps the session as it was: the change is written anew for one of them.
        let before = sessions
        sessions[3].reports = 123_456
        sessions[count - 1].lateReports = 99
        #expect(sessions[3].reports == 123_456 && before[3].reports == 21)
        #expect(sessions[count - 1].lateReports == 99 && before[count - 1].lateReports == (count - 1) % 3)
        #expect(Self.text(sessions[4]) == Self.text(Self.session(4)))
        #expect(sessions.failure == nil)
    }

    @Test("open sessions stay in memory until they end, then are set aside")
    func openStays() throws {
        var sessions = ScanSessions(spillingTo: FileManager.default.temporaryDirectory.path, kept: 4)
        for n in 0..<40 { sessions.append(Self.session(n)) { $0 == 0 } }
        // All but the latest four, and the first, still open: it is held until it ends, changes written nowhere.
        #expect(sessions.setAsideCount == 35)
        let written = sessions.spilledBytes
        sessions[0].reports = 5
        #expect(sessions.spilledBytes == written && sessions[0].reports == 5)
        sessions.append(Self.session(40))
        #expect(sessions.setAsideCount == 36 && sessions.spilledBytes > written)
        #expect(sessions[0].reports == 5)
        #expect(sessions.dropFirst().map(Self.text) == (1...40).map { Self.text(Self.session($0)) })
    }

    @Test("without a directory every session is in memory")
    func inMemory() {
        var sessions = ScanSessions()
        for n in 0..<300 { sessions.append(Self.session(n)) }
        #expect(sessions.setAsideCount == 0 && sessions.spilledBytes == 0 && sessions.count == 300)
        #expect(Self.text(sessions[299]) == Self.text(Self.session(299)))
    }
}

/// App scans set aside in a file as they are built (`AppScanList`) read back as they were written.
@Suite("App scans set aside")
struct AppScanListTests {
    static func scan(_ n: Int) -> AppScan {
        let client = n % 3 == 0 ? nil : ScanClient(controller: 2, filterIndex: UInt8(n % 200), features: UInt16(n), added: ScanSessionsTests.ref(n),
                                                   removed: n % 2 == 0 ? ScanSessionsTests.ref(n + 5) : nil)
        var s = AppScan(controller: UInt16(n % 4), attribution: n % 2 == 0 ? .allPassFilter : .controllerSession, client: client,
                        start: ScanSessionsTests.ref(n), end: n % 5 == 0 ? nil : ScanSessionsTests.ref(n + 9),
                        endTimestamp: n % 5 == 0 ? nil : Timestamp(nanoseconds: Int64(n) * 7),
                        sessions: SessionIndexes(n % 2 == 0 ? Array(n..<(n + 3)) : [n, n + 2, n + 7]),
                        programmed: SessionIndexes(n % 3 == 0 ? [] : [n + 1, n + 4]), isActive: n % 2 == 1,
                        dutyCycle: Double(n) / 100, parametersKnown: n % 7 != 0, filterDuplicates: n % 4 == 0,
                        reports: n * 11, pricedSession: n + 1)
        s.received = AppScan.Received(reports: n, scanResponses: n / 2, devices: n / 3, devicesIsUpperBound: n % 2 == 0)
        s.pieceStarts = PieceStarts((0..<(1 + n % 4)).map { ScanSessionsTests.ref(n * 10 + $0) })
        return s
    }

    static func text(_ s: AppScan) -> String {
        String(reflecting: s) + " client \(String(describing: s.client)) sessions \(Array(s.sessions)) programmed \(Array(s.programmed)) pieces \(Array(s.pieceStarts))"
    }

    @Test("an app scan's bytes read back as the scan: its client, session indexes and pieces")
    func roundTrip() throws {
        var scans = AppScanList(spillingTo: FileManager.default.temporaryDirectory.path, kept: 2)
        for n in 0..<50 { scans.append(Self.scan(n)) }
        #expect(scans.setAsideCount >= 46)
        #expect(scans.map(Self.text) == (0..<50).map { Self.text(Self.scan($0)) })
        scans.removeAll { $0.controller == 1 }
        #expect(scans.map(Self.text) == (0..<50).filter { $0 % 4 != 1 }.map { Self.text(Self.scan($0)) })
        #expect(scans.failure == nil)
    }
}

/// The phone's advertising sessions set aside in a file as they end (`AdvertisingSessions`) read back as they were.
@Suite("Advertising sessions set aside")
struct AdvertisingSessionsTests {
    static func session(_ n: Int) -> AdvertisingSession {
        let ref = ScanSessionsTests.ref
        return AdvertisingSession(
            controller: UInt16(n % 2), setHandle: UInt8(n % 5), start: ref(n), end: n % 4 == 0 ? nil : ref(n + 3),
            isExtended: n % 2 == 0, connectionsWhileAdvertising: (0..<(n % 3)).map { ref(n * 7 + $0) },
            endReason: [nil, .disabled, .connected, .terminated(HCIStatus(rawValue: 0x3C)), .reset][n % 5],
            endedByConnection: n % 3 == 0 ? ref(n + 1) : nil, resumedAfterConnection: n % 6 == 0 ? ref(n - 1) : nil,
            intervalMinimumMilliseconds: n % 2 == 0 ? Double(n) : nil, intervalMaximumMilliseconds: Double(n) * 2,
            advertisingType: n % 3 == 0 ? nil : UInt8(n % 4), properties: n % 2 == 0 ? UInt16(n) : nil,
            isConnectable: n % 2 == 1, isScannable: n % 3 == 1, parametersKnown: n % 5 != 0,
            advertisingData: (0..<(n % 31)).map { UInt8($0) }, scanResponseData: n % 2 == 0 ? [] : [9, 8, 7],
            localName: [nil, "", "Ströme \(n)", "heart-rate"][n % 4],
            serviceUUIDs: (0..<(n % 3)).map { BluetoothUUID(high: UInt64($0), low: UInt64(n)) },
            durationMilliseconds: n % 2 == 0 ? nil : 10, maximumEvents: n % 3 == 0 ? 5 : nil, completedEvents: n % 4 == 0 ? 2 : nil)
    }

    @Test("an advertising session's bytes read back as the session: its data, name, UUIDs and end")
    func roundTrip() throws {
        var sessions = AdvertisingSessions(spillingTo: FileManager.default.temporaryDirectory.path, kept: 1)
        for n in 0..<40 { sessions.append(Self.session(n)) }
        #expect(sessions.setAsideCount == 39)
        #expect(sessions.map { String(reflecting: $0) } == (0..<40).map { String(reflecting: Self.session($0)) })
        #expect(sessions.failure == nil)
    }
}
