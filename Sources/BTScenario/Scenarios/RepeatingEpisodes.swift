import BTWire

/// `repeating-episodes`: an hour and a half of an app that does the same few things over and over, as long real
/// captures do — advertising set 0 for 1.28 s every 27.6 s or so, a short scan every few minutes, and an attempt to
/// reach a watch that is out of range every other minute, cancelled by the host after 5 s — until the watch
/// answers and one connection reads its battery level three times. Not among the samples (`make samples`): the fixture of the
/// short text summaries (`timeline` and `energy` collapse the repeats; `--full` lists them).
public enum RepeatingEpisodes {
    public static let name = "repeating-episodes"
    public static let watch = SampleDevices.heartRateSensor
    public static let advertisingSessions = 200
    public static let advertisingOn = Micros.ms(1_280)
    /// About 27.6 s from one advertising start to the next.
    public static let advertisingPause = Micros.ms(26_000)...Micros.ms(26_640)
    /// A short scan every this many advertising sessions, and an attempt to reach the watch every this many.
    public static let scanEvery = 7
    public static let attemptEvery = 4
    public static let attemptTimeout = Micros.seconds(5)
    public static let handle: UInt16 = 0x0040
    /// Battery level reads on the one connection.
    public static let readings = 3

    public static let scenario = Scenario(
        name: name,
        summary: "90 minutes of repeats: 200 advertising sessions, 29 short scans, 50 cancelled connection attempts, one connection",
        seed: 0x5245_5045, body: run)

    static let advertisingInterval = HCIUnits.slots(microseconds: Micros.ms(100))
    static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(100))
    static let scanWindow = HCIUnits.slots(microseconds: Micros.ms(50))
    static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))

    static var advertisingData: AdvertisingData {
        AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly), .completeName("btlens Repeat")])
    }

    static func run(_ s: HCIScript) {
        s.setUpController()
        for session in 0..<advertisingSessions {
            if session == 0 {
                s.startLegacyAdvertising(intervalMin: advertisingInterval, intervalMax: advertisingInterval,
                                         data: advertisingData, scanResponse: AdvertisingData([]))
            } else {
                s.setAdvertising(enabled: true)
            }
            s.advance(advertisingOn)
            s.setAdvertising(enabled: false)
            s.pause(Micros.ms(200)...Micros.ms(400))
            if session % scanEvery == 3 {
                s.startScan(active: false, interval: scanInterval, window: scanWindow, filterDuplicates: true)
                s.pause(Micros.ms(1_900)...Micros.ms(2_100))
                s.stopScan()
            }
            if session % attemptEvery == 1 {
                s.commandStatus(.leCreateConnection(peer: watch, scanInterval: scanInterval, scanWindow: scanWindow,
                                                    parameters: parameters))
                s.advance(attemptTimeout)
                s.commandComplete(.leCreateConnectionCancel)
                var info = ConnectionCompleteInfo(handle: 0, role: LEParameter.centralRole, peer: watch,
                                                  interval: 0, latency: 0, supervisionTimeout: 0)
                info.status = .unknownConnectionIdentifier
                s.emit(.leConnectionComplete(info))
            }
            s.pause(advertisingPause)
        }
        s.note("app: the watch is back in range")
        let link = s.connect(to: watch, handle: handle, parameters: parameters, scanInterval: scanInterval, scanWindow: scanWindow)
        let server = GATTServer(database: SampleProfiles.heartRateSensor, rxMTU: UInt16(ATTPDU.defaultMTU))
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
        let services = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.battery))
        if let battery = services.first,
           let level = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == BluetoothUUID(uuid16: GATTUUID.batteryLevel) }) {
            for _ in 0..<readings {
                _ = att.read(level.valueHandle)
                s.wait(ms: 500)
            }
        }
        s.wait(seconds: 1)
        s.disconnect(link)
    }
}
