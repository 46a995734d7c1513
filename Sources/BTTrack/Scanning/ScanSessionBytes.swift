import BTWire
import BTCapture

/// The scan sessions in start order, as the model and the scan tracker hold them (set aside as they end by the
/// batch commands: `TrackerOptions.scanSessionSpillDirectory`).
public typealias ScanSessions = SetAsideArray<ScanSession>

/// A scan session as bytes in a `Spill` (`ScanSessions`): its plain fields, then its PHYs, the connections listed
/// during it and its per-device counts, each list as many plain values as the head counts.
struct ScanSessionBytes {
    var controller: UInt16
    var filterPolicy: UInt8
    var filterDuplicatesMode: UInt8
    var ownAddressType: UInt8
    var flags: Flags
    var endReason: ScanEndReason?
    var start: RecordRef
    var end: RecordRef?
    var intervalMilliseconds: Double
    var windowMilliseconds: Double
    var reports: Int
    var uniqueDevices: Int
    var connectionsWhileScanningCount: Int
    var lastLinkChange: Timestamp?
    var durationMilliseconds: Double?
    var periodMilliseconds: Double?
    var scheduledEnd: Timestamp?
    var scanResponses: Int
    var scanDevices: Int?
    var reportsFromUncountedDevices: Int
    var lateReports: Int
    var phyCount: Int32
    var connectionCount: Int32
    var deviceCount: Int32

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let isExtended = Flags(rawValue: 1 << 0)
        static let isActive = Flags(rawValue: 1 << 1)
        static let filterDuplicates = Flags(rawValue: 1 << 2)
        static let offloadedFilters = Flags(rawValue: 1 << 3)
        static let implicitStart = Flags(rawValue: 1 << 4)
        static let parametersKnown = Flags(rawValue: 1 << 5)
        static let uniqueDevicesIsEstimate = Flags(rawValue: 1 << 6)
    }

    init(_ s: ScanSession) {
        controller = s.controller
        filterPolicy = s.filterPolicy
        filterDuplicatesMode = s.filterDuplicatesMode
        ownAddressType = s.ownAddressType
        var flags: Flags = []
        if s.isExtended { flags.insert(.isExtended) }
        if s.isActive { flags.insert(.isActive) }
        if s.filterDuplicates { flags.insert(.filterDuplicates) }
        if s.offloadedFilters { flags.insert(.offloadedFilters) }
        if s.implicitStart { flags.insert(.implicitStart) }
        if s.parametersKnown { flags.insert(.parametersKnown) }
        if s.uniqueDevicesIsEstimate { flags.insert(.uniqueDevicesIsEstimate) }
        self.flags = flags
        endReason = s.endReason
        start = s.start
        end = s.end
        intervalMilliseconds = s.intervalMilliseconds
        windowMilliseconds = s.windowMilliseconds
        reports = s.reports
        uniqueDevices = s.uniqueDevices
        connectionsWhileScanningCount = s.connectionsWhileScanningCount
        lastLinkChange = s.lastLinkChange
        durationMilliseconds = s.durationMilliseconds
        periodMilliseconds = s.periodMilliseconds
        scheduledEnd = s.scheduledEnd
        scanResponses = s.scanResponses
        scanDevices = s.scanDevices
        reportsFromUncountedDevices = s.reportsFromUncountedDevices
        lateReports = s.lateReports
        phyCount = Int32(s.phys.count)
        connectionCount = Int32(clamping: s.connectionsWhileScanning.count)
        deviceCount = Int32(s.reportsPerDevice.count)
    }
}

extension ScanSession: SetAsideValue {
    public static func append(_ s: ScanSession, to spill: Spill) -> Int64 {
        let at = spill.append(plain: ScanSessionBytes(s))
        spill.append(plain: s.phys)
        s.connectionsWhileScanning.append(to: spill)
        spill.append(plain: s.reportsPerDevice)
        return at
    }

    public static func read(from spill: Spill, at offset: Int64) -> ScanSession {
        var cursor = spill.cursor(at: offset)
        let head = cursor.next(ScanSessionBytes.self)
        let phys = cursor.next(ScanPHYParameters.self, count: Int(head.phyCount))
        let connections = RecordRefList.read(&cursor)
        let devices = cursor.next(DeviceReportCount.self, count: Int(head.deviceCount))
        return ScanSession(head, phys: phys, connections: connections, devices: devices)
    }

    init(_ r: ScanSessionBytes, phys: [ScanPHYParameters], connections: RecordRefList, devices: [DeviceReportCount]) {
        controller = r.controller
        start = r.start
        end = r.end
        isExtended = r.flags.contains(.isExtended)
        isActive = r.flags.contains(.isActive)
        intervalMilliseconds = r.intervalMilliseconds
        windowMilliseconds = r.windowMilliseconds
        filterPolicy = r.filterPolicy
        filterDuplicates = r.flags.contains(.filterDuplicates)
        offloadedFilters = r.flags.contains(.offloadedFilters)
        reports = r.reports
        uniqueDevices = r.uniqueDevices
        connectionsWhileScanning = connections
        connectionsWhileScanningCount = r.connectionsWhileScanningCount
        lastLinkChange = r.lastLinkChange
        self.phys = phys
        filterDuplicatesMode = r.filterDuplicatesMode
        ownAddressType = r.ownAddressType
        implicitStart = r.flags.contains(.implicitStart)
        parametersKnown = r.flags.contains(.parametersKnown)
        durationMilliseconds = r.durationMilliseconds
        periodMilliseconds = r.periodMilliseconds
        scheduledEnd = r.scheduledEnd
        endReason = r.endReason
        scanResponses = r.scanResponses
        reportsPerDevice = devices
        scanDevices = r.scanDevices
        reportsFromUncountedDevices = r.reportsFromUncountedDevices
        uniqueDevicesIsEstimate = r.flags.contains(.uniqueDevicesIsEstimate)
        lateReports = r.lateReports
    }
}
