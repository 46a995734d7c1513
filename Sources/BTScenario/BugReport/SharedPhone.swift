import BTWire
import BTCapture

/// `shared-phone`: one Android test phone used by several apps at once, as a team's CI device is, written with
/// the bug report that names them (`SharedPhoneBugReport`). Three apps:
///
/// - `com.example.tracker` misbehaves: it restarts its unfiltered low-latency scan seven times in 20 s (scan
///   churn), then connects to a heart-rate sensor and leaves its scan on while connected.
/// - `com.example.lock` behaves: a filtered balanced scan for its lock, stopped before it connects; the link stays
///   up to the end (the GATT Client Map lists it).
/// - `com.google.uid.shared` (Play services) runs a filtered low-power background scan from start to end.
///
/// Any subset can be written (`apps`): every app does the same at the same times, so a capture with fewer apps is
/// the same capture with the others removed. `SharedPhoneTruth` records what each app did.
public enum SharedPhone {
    public static let name = "shared-phone"

    /// The apps on the phone, by package (Play services by its shared uid).
    public enum App: String, CaseIterable, Sendable {
        case tracker = "com.example.tracker"
        case lock = "com.example.lock"
        case playServices = "com.google.uid.shared"

        /// Android uids (`u0a…`): the report prints them beside the package from Android 10 on.
        public var uid: Int {
            switch self {
            case .tracker: 10_123
            case .lock: 10_140
            case .playServices: 10_100
            }
        }
    }

    public static let sensor = SampleDevices.heartRateSensor
    public static let lockPeer = PeerAddress(BDAddr(rawValue: 0xE0_4C_0C_51_7A_02), type: LEParameter.randomAddress)
    static let osAddress = BDAddr(rawValue: 0x5A_11_22_33_44_55)
    public static let trackerHandle: UInt16 = 0x0040
    public static let lockHandle: UInt16 = 0x0041
    public static let churnStarts = 7
    /// APCF indexes: the all-pass filter of unfiltered scans is index 1 (AOSP's regular-scan all-pass index).
    static let allPassIndex: UInt8 = 1
    static let playIndex: UInt8 = 10
    static let lockIndex: UInt8 = 11

    static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))

    /// The scenario with `apps` on the phone; `truth` receives what each did.
    public static func scenario(apps: Set<App> = Set(App.allCases), truth: SharedPhoneTruth = SharedPhoneTruth()) -> Scenario {
        let suffix = apps.count == App.allCases.count ? "" : "-" + App.allCases.filter(apps.contains).map { String($0.rawValue.split(separator: ".").last!) }.joined(separator: "+")
        return Scenario(name: name + suffix, summary: "A shared Android test phone: three apps scanning and connecting at once",
                        seed: 0x5348_4152) { s in run(s, apps: apps, truth: truth) }
    }

    static func advertiser(_ peer: PeerAddress, name: String) -> SimulatedAdvertiser {
        SimulatedAdvertiser(peer: peer, kind: .legacy(LegacyReportType.advInd),
                            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly), .completeName(name)]),
                            interval: Micros.ms(200), rssi: -60)
    }

    static func run(_ s: HCIScript, apps: Set<App>, truth: SharedPhoneTruth) {
        s.setUpController()
        truth.captureStart = s.now
        let stack = AndroidScanStack(script: s)
        let sensorAd = advertiser(sensor, name: "HR Sensor"), lockAd = advertiser(lockPeer, name: "Lock")
        let play = AndroidScanStack.Client(index: playIndex, mode: .lowPower,
                                           conditions: [.apcfAddServiceUUID(index: playIndex, uuid16: 0xFE2C)],
                                           features: APCF.Feature.serviceUUID, advertisers: [])
        let lock = AndroidScanStack.Client(index: lockIndex, mode: .balanced,
                                           conditions: [.apcfAddServiceUUID(index: lockIndex, uuid16: 0x1523)],
                                           features: APCF.Feature.serviceUUID, advertisers: [lockAd])
        let tracker = AndroidScanStack.Client(index: allPassIndex, mode: .lowLatency, advertisers: [sensorAd, lockAd])
        func begin(_ app: App, _ client: AndroidScanStack.Client, filtered: Bool, mode: String) {
            guard apps.contains(app) else { return }
            s.note("\(app.rawValue): startScan()")
            truth.scanStarted(app, at: s.now, filtered: filtered, mode: mode)
            stack.start(client)
        }
        func end(_ app: App, _ client: AndroidScanStack.Client, reprogram: Bool = true) {
            guard apps.contains(app) else { return }
            s.note("\(app.rawValue): stopScan()")
            truth.scanStopped(app, at: s.now)
            stack.stop(index: client.index, reprogram: reprogram)
        }
        s.wait(seconds: 1)
        begin(.playServices, play, filtered: true, mode: "LOW_POWER")
        s.wait(seconds: 2)
        begin(.lock, lock, filtered: true, mode: "BALANCED")
        s.wait(seconds: 4)
        end(.lock, lock, reprogram: false)
        if apps.contains(.lock) {
            stack.setAdvertising(lockPeer, false)
            let link = s.connect(to: lockPeer, handle: lockHandle, parameters: parameters,
                                 scanInterval: AndroidScanStack.ScanMode.balanced.interval,
                                 scanWindow: AndroidScanStack.ScanMode.balanced.window, whileInitiating: { stack.reprogram() })
            truth.linked(.lock, peer: lockPeer.address, handle: lockHandle, at: s.now)
            let att = ATTChannel(script: s, connection: link, server: GATTServer(database: SampleProfiles.heartRateSensor,
                                                                                  rxMTU: UInt16(ATTPDU.defaultMTU)), clientSide: .local)
            _ = att.exchangeMTU(185)
            _ = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.battery))
        }
        s.wait(seconds: 3)
        for _ in 0..<churnStarts {
            begin(.tracker, tracker, filtered: false, mode: "LOW_LATENCY")
            s.wait(ms: 1_500)
            end(.tracker, tracker)
            s.wait(ms: 1_500)
        }
        begin(.tracker, tracker, filtered: false, mode: "LOW_LATENCY")
        s.wait(seconds: 2)
        if apps.contains(.tracker) {
            // The scan stays on while it connects and reads: the misbehaviour.
            stack.setAdvertising(sensor, false)
            let link = s.connect(to: sensor, handle: trackerHandle, parameters: parameters,
                                 scanInterval: AndroidScanStack.ScanMode.lowLatency.interval,
                                 scanWindow: AndroidScanStack.ScanMode.lowLatency.window)
            truth.linked(.tracker, peer: sensor.address, handle: trackerHandle, at: s.now)
            let att = ATTChannel(script: s, connection: link, server: GATTServer(database: SampleProfiles.heartRateSensor,
                                                                                  rxMTU: UInt16(ATTPDU.defaultMTU)), clientSide: .local)
            _ = att.exchangeMTU(247)
            _ = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.battery))
            s.wait(seconds: 8)
            end(.tracker, tracker)
            s.wait(seconds: 1)
            s.disconnect(link)
            truth.unlinked(.tracker, at: s.now)
        } else {
            s.wait(seconds: 9)
        }
        s.wait(seconds: 3)
        // The OS rotates its private address whoever is on the phone: the capture ends at the same time
        // whichever apps ran (a link left open is idle as long).
        s.commandComplete(.leSetRandomAddress(osAddress))
        truth.captureEnd = s.now
    }
}

/// What each app of `SharedPhone` did, in capture time (UTC): the ground truth of attribution, and what the
/// bug report is written from.
public final class SharedPhoneTruth: @unchecked Sendable {
    /// One scan an app started (and stopped, unless still on at the end).
    public struct Scan: Sendable, Equatable {
        public var app: SharedPhone.App
        public var start: Timestamp
        public var end: Timestamp?
        public var filtered: Bool
        public var mode: String
    }

    /// One link an app's GATT client made.
    public struct Link: Sendable, Equatable {
        public var app: SharedPhone.App
        public var peer: BDAddr
        public var handle: UInt16
        public var start: Timestamp
        public var end: Timestamp?
    }

    public private(set) var scans: [Scan] = []
    public private(set) var links: [Link] = []
    public var captureStart = Timestamp(nanoseconds: 0)
    public var captureEnd = Timestamp(nanoseconds: 0)

    public init() {}

    func scanStarted(_ app: SharedPhone.App, at t: Timestamp, filtered: Bool, mode: String) {
        scans.append(Scan(app: app, start: t, end: nil, filtered: filtered, mode: mode))
    }

    func scanStopped(_ app: SharedPhone.App, at t: Timestamp) {
        if let i = scans.lastIndex(where: { $0.app == app && $0.end == nil }) { scans[i].end = t }
    }

    func linked(_ app: SharedPhone.App, peer: BDAddr, handle: UInt16, at t: Timestamp) {
        links.append(Link(app: app, peer: peer, handle: handle, start: t, end: nil))
    }

    func unlinked(_ app: SharedPhone.App, at t: Timestamp) {
        if let i = links.lastIndex(where: { $0.app == app && $0.end == nil }) { links[i].end = t }
    }
}
