import BTWire
import BTCapture
import BTDecode

/// Scan interval and window for one PHY. Legacy scanning has one (LE 1M); LE Set Extended Scan Parameters
/// has one per bit of Scanning_PHYs (1M and/or Coded), and the controller scans each in turn.
public struct ScanPHYParameters: Sendable, Equatable {
    /// The PHY's bit in Scanning_PHYs: 0x01 LE 1M, 0x04 LE Coded (Core Vol 4 Part E §7.8.64).
    public var phy: UInt8
    public var isActive: Bool
    /// ×0.625 ms.
    public var interval: UInt16
    /// ×0.625 ms.
    public var window: UInt16

    public static let phy1M: UInt8 = 0x01
    public static let phyCoded: UInt8 = 0x04

    public init(phy: UInt8, isActive: Bool, interval: UInt16, window: UInt16) {
        self.phy = phy
        self.isActive = isActive
        self.interval = interval
        self.window = window
    }

    public var intervalMilliseconds: Double { HCIUnits.slotsToMilliseconds(interval) }
    public var windowMilliseconds: Double { HCIUnits.slotsToMilliseconds(window) }
    public var dutyCycle: Double { interval > 0 ? min(1, Double(window) / Double(interval)) : 0 }

    /// "1M", "Coded", or the bit in hex.
    public var phyName: String {
        switch phy {
        case Self.phy1M: "1M"
        case Self.phyCoded: "Coded"
        default: Hex.u8(phy)
        }
    }
}

/// Why a scan session ended.
public enum ScanEndReason: String, Sendable {
    /// LE Set (Extended) Scan Enable(0) accepted.
    case disabled
    /// LE Scan Timeout (subevent 0x11): the extended scan's duration ran out.
    case timeout
    /// The extended scan's duration ran out and the capture has no Scan Timeout event for it (the session was
    /// closed when a later record showed the time had passed, or at the end of the capture).
    case durationElapsed = "duration_elapsed"
    /// Enabled again with a different duplicate filter, duration or period: a new session follows at once.
    case restarted
    /// HCI Reset or the controller was removed.
    case reset
}

/// Reports a session received from one device.
public struct DeviceReportCount: Sendable, Hashable {
    public var address: BDAddr
    public var addressType: AddressType
    public var reports: Int

    public init(address: BDAddr, addressType: AddressType, reports: Int) {
        self.address = address
        self.addressType = addressType
        self.reports = reports
    }
}

/// A period during which the controller scanned, from the accepted LE Set (Extended) Scan Enable(1) to the
/// accepted disable, a scan timeout, or the end of the capture.
///
/// Later rules read these: "scanning left on after connecting" (`connectionsWhileScanning` non-empty),
/// "unfiltered scanning" (`filterDuplicates`), "100 % duty cycle" (`dutyCycle`), "reconnect by scan".
public struct ScanSession: Sendable {
    public var controller: UInt16
    public var start: RecordRef
    /// nil while still scanning at the end of the capture. For `.durationElapsed` this is the session's last
    /// record and `endTimestamp` is when the duration ran out.
    public var end: RecordRef?
    public var isExtended: Bool
    /// Active scanning (scan requests are sent) on any of the PHYs. With unknown parameters (`phys` empty),
    /// true once a scan response arrived.
    public var isActive: Bool
    /// The LE 1M PHY's (or else the first PHY's) interval and window.
    public var intervalMilliseconds: Double
    public var windowMilliseconds: Double
    public var filterPolicy: UInt8
    /// Duplicate filtering requested (legacy 1; extended mode 1 or 2).
    public var filterDuplicates: Bool
    /// Android's scan filters were in the controller (vendor APCF, `ScanFilterOffload`) while it scanned.
    public var offloadedFilters = false
    /// Advertising reports received while the session was on (each report of a batched event and each
    /// fragment of a chained extended advertisement counts, as in `btlens stats`).
    public var reports: Int
    /// Distinct (address, address type) pairs that reported. Exact up to `ScanSession.deviceLimit`, estimated
    /// beyond it (`uniqueDevicesIsEstimate`).
    public var uniqueDevices: Int
    /// Reports beyond the first of each device (and its first scan response): what duplicate filtering would
    /// have kept from the host.
    public var redundantReports: Int { max(0, reports - uniqueDevices - min(scanResponses, uniqueDevices)) }
    /// Connections that came up while this session was on (the LE (Enhanced) Connection Complete records): the
    /// first `TrackerOptions.connectionsWhileScanningListed` of them (set aside a chunk at a time with the
    /// sessions, `RecordRefList`: a scan left on through a long capture lists hundreds of thousands).
    public var connectionsWhileScanning: RecordRefList
    /// How many connections came up while this session was on, listed or not.
    public var connectionsWhileScanningCount = 0
    /// When a link on the controller last came up or went down before this session started: a scan stopped and
    /// started again around that is the app reacting to the link (stopped to connect, scanning again after a
    /// disconnect), not the stack restarting the same scan.
    public var lastLinkChange: Timestamp?

    /// Per-PHY parameters (one entry for legacy scanning).
    public var phys: [ScanPHYParameters]
    /// The raw Filter_Duplicates value: legacy 0/1; extended 0 off, 1 on, 2 on and reset each period.
    public var filterDuplicatesMode: UInt8
    public var ownAddressType: UInt8
    /// Reports were seen with no accepted enable in the capture (it started mid-scan, or the host's commands
    /// are missing): the session starts at the first report and its parameters are unknown.
    public var implicitStart: Bool
    /// False when no accepted LE Set (Extended) Scan Parameters preceded the enable: a legacy session then
    /// shows the controller's defaults (passive, 10 ms / 10 ms; Core Vol 4 Part E §7.8.10), an extended one
    /// (which has no defaults) no PHYs at all.
    public var parametersKnown: Bool
    /// Extended scan duration (nil = until disabled).
    public var durationMilliseconds: Double?
    /// Extended scan period (nil = none): the duration repeats every period until disabled.
    public var periodMilliseconds: Double?
    /// When the extended duration runs out (the latest enable + duration); nil without a duration or with a
    /// period (then scanning resumes every period until disabled and no Scan Timeout is sent).
    public var scheduledEnd: Timestamp?
    /// Why it ended; nil while open.
    public var endReason: ScanEndReason?
    /// Reports that were scan responses (active scanning).
    public var scanResponses: Int
    /// Reports per device, most reports first, for at most `deviceLimit` devices (the first to report); once the
    /// session ended, only those a report reads unless `TrackerOptions.scanDevicesListed` keeps it whole.
    public var reportsPerDevice: [DeviceReportCount]
    /// The distinct devices of the app scan this session is a piece of, up to and with it, counted as it ended
    /// when its list was trimmed (`ScanDeviceKeeping`); nil when the list is whole.
    public var scanDevices: Int?
    /// Reports from devices beyond `deviceLimit` (not in `reportsPerDevice`).
    public var reportsFromUncountedDevices: Int
    public var uniqueDevicesIsEstimate: Bool
    /// Reports that arrived within `ScanTracker.lateReportGrace` after the session ended (already in flight).
    public var lateReports: Int

    /// Devices kept per session in `reportsPerDevice`.
    public static let deviceLimit = 4096

    /// The share of time the receiver listens: each PHY of an extended scan has its own window and interval,
    /// and the controller scans them in turn, so a 1M+Coded scan listens for both (at most all the time).
    public var dutyCycle: Double {
        if phys.count > 1 { return min(1, phys.reduce(0) { $0 + $1.dutyCycle }) }
        return intervalMilliseconds > 0 ? windowMilliseconds / intervalMilliseconds : 0
    }

    /// The capture shows the parameters the controller scanned with (set in it, not the defaults or nothing).
    public var parametersShown: Bool { parametersKnown && !phys.isEmpty }

    /// Scans alike: the same PHYs, intervals, windows, scan types and duplicate filter.
    public func scansAlike(_ other: ScanSession) -> Bool {
        phys == other.phys && filterDuplicates == other.filterDuplicates && parametersKnown == other.parametersKnown
            && isExtended == other.isExtended
    }

    /// When scanning stopped: the end record's time, or start + duration for `.durationElapsed`.
    public var endTimestamp: Timestamp? {
        guard let end else { return nil }
        if endReason == .durationElapsed, let scheduledEnd { return scheduledEnd }
        return end.timestamp
    }

    /// How long it scanned (nil while open).
    public var duration: Duration? { endTimestamp.map { $0 - start.timestamp } }

    /// A legacy session with these parameters and no reports, for what-if models (radio cost of a scan setting).
    public static func forModel(active: Bool, interval: UInt16, window: UInt16) -> ScanSession {
        let parameters = ScanParameters(isExtended: false, phys: [ScanPHYParameters(phy: ScanPHYParameters.phy1M, isActive: active,
                                                                                    interval: interval, window: window)],
                                        ownAddressType: 0, filterPolicy: 0, known: true)
        return ScanSession(controller: 0, start: RecordRef(number: 0, offset: 0, timestamp: Timestamp(nanoseconds: 0), controller: 0, length: 0),
                           parameters: parameters, enable: ScanEnable.unknown, implicitStart: false)
    }

    init(controller: UInt16, start: RecordRef, parameters: ScanParameters, enable: ScanEnable, implicitStart: Bool) {
        self.controller = controller
        self.start = start
        end = nil
        isExtended = parameters.isExtended || enable.isExtended
        let primary = parameters.primary
        isActive = parameters.phys.contains { $0.isActive }
        intervalMilliseconds = primary?.intervalMilliseconds ?? 0
        windowMilliseconds = primary?.windowMilliseconds ?? 0
        filterPolicy = parameters.filterPolicy
        filterDuplicatesMode = enable.filterDuplicatesMode
        filterDuplicates = enable.filterDuplicatesMode != 0
        reports = 0
        uniqueDevices = 0
        connectionsWhileScanning = []
        phys = parameters.phys
        ownAddressType = parameters.ownAddressType
        self.implicitStart = implicitStart
        parametersKnown = parameters.known
        durationMilliseconds = enable.duration == 0 ? nil : HCIUnits.durationToMilliseconds(enable.duration)
        periodMilliseconds = enable.period == 0 ? nil : Double(enable.period) * 1280
        scheduledEnd = enable.scheduledEnd(from: start.timestamp)
        endReason = nil
        scanResponses = 0
        reportsPerDevice = []
        reportsFromUncountedDevices = 0
        uniqueDevicesIsEstimate = false
        lateReports = 0
    }
}

/// What the last accepted LE Set (Extended) Scan Parameters said, per controller.
struct ScanParameters: Sendable {
    var isExtended: Bool
    var phys: [ScanPHYParameters]
    var ownAddressType: UInt8
    var filterPolicy: UInt8
    var known: Bool

    /// Takes the PHY list of a recent setting when it is the same, so the sessions started with either share one
    /// array: stacks set the same few parameters again before every scan, and a long capture has thousands.
    mutating func sharePHYs(_ recent: inout [[ScanPHYParameters]]) {
        if let same = recent.first(where: { $0 == phys }) {
            phys = same
            return
        }
        recent.append(phys)
        if recent.count > Self.recentPHYsKept { recent.removeFirst() }
    }

    /// Parameter settings a controller's sessions share PHY lists with.
    static let recentPHYsKept = 4

    /// The 1M entry, else the first.
    var primary: ScanPHYParameters? { phys.first { $0.phy == ScanPHYParameters.phy1M } ?? phys.first }

    /// The controller's defaults after reset (Core Vol 4 Part E §7.8.10): passive, 10 ms interval and window.
    static let defaults = ScanParameters(
        isExtended: false, phys: [ScanPHYParameters(phy: ScanPHYParameters.phy1M, isActive: false, interval: 0x0010,
                                                    window: 0x0010)],
        ownAddressType: 0, filterPolicy: 0, known: false)

    /// For a session inferred from reports alone: nothing is known, not even the interval.
    static let unknown = ScanParameters(isExtended: false, phys: [], ownAddressType: 0, filterPolicy: 0, known: false)

    init(isExtended: Bool, phys: [ScanPHYParameters], ownAddressType: UInt8, filterPolicy: UInt8, known: Bool) {
        self.isExtended = isExtended
        self.phys = phys
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
        self.known = known
    }

    init(_ p: LESetScanParameters) {
        self.init(isExtended: false,
                  phys: [ScanPHYParameters(phy: ScanPHYParameters.phy1M, isActive: p.scanType == 1,
                                           interval: p.interval, window: p.window)],
                  ownAddressType: p.ownAddressType, filterPolicy: p.filterPolicy, known: true)
    }

    init(_ p: LESetExtendedScanParameters) {
        self.init(isExtended: true,
                  phys: p.perPHY.map { ScanPHYParameters(phy: $0.phy, isActive: $0.scanType == 1, interval: $0.interval,
                                                         window: $0.window) },
                  ownAddressType: p.ownAddressType, filterPolicy: p.filterPolicy, known: true)
    }
}

/// An accepted LE Set (Extended) Scan Enable(1), normalised.
struct ScanEnable: Sendable, Equatable {
    var isExtended: Bool
    var filterDuplicatesMode: UInt8
    /// ×10 ms; 0 = until disabled.
    var duration: UInt16
    /// ×1.28 s; 0 = none.
    var period: UInt16

    static let unknown = ScanEnable(isExtended: false, filterDuplicatesMode: 0, duration: 0, period: 0)

    /// When a scan enabled at `start` stops by itself: only with a duration and no period (with a period
    /// the controller restarts it every period until disabled).
    func scheduledEnd(from start: Timestamp) -> Timestamp? {
        guard duration != 0, period == 0 else { return nil }
        return Timestamp(nanoseconds: start.nanoseconds &+ Int64(duration) * 10_000_000)
    }
}
