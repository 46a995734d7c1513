import BTWire

/// `tidy-central`: `wasteful-central`'s app with its waste removed, the "after" of a fix for `btlens diff`. The
/// same sensor and bystanders: a short scan filtered by duplicates at a 10 % duty cycle, stopped when the sensor
/// is found; a 30–50 ms link; discovery of the sensor's service by UUID; 40 notifications (every 200 ms) instead of polling;
/// unsubscribe and a prompt disconnect; later a direct reconnection (no scan, the database cached) whose write
/// is answered.
public enum TidyCentral {
    public static let name = "tidy-central"
    public static let firstHandle: UInt16 = 0x0040
    public static let secondHandle: UInt16 = 0x0041
    public static let sensor = WastefulCentral.sensor
    public static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))
    public static let chosenInterval = HCIUnits.connectionInterval(microseconds: 45_000)
    /// 10 % duty: a 10 ms window every 100 ms.
    public static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(100))
    public static let scanWindow = HCIUnits.slots(microseconds: Micros.ms(10))
    public static let notificationCount = 40
    public static let notificationPeriod = Micros.ms(200)

    public static let scenario = Scenario(
        name: name,
        summary: "wasteful-central fixed: filtered low-duty scan stopped on connect, discovery by UUID, notifications, prompt disconnect",
        seed: 0x5449_4459, body: run)

    static func run(_ s: HCIScript) {
        s.setUpController()
        s.note("app: startScan([ScanFilter(enviro service)], SCAN_MODE_LOW_POWER)")
        s.startScan(active: false, interval: scanInterval, window: scanWindow, filterDuplicates: true)
        s.background = AdvertisingReportStream(
            advertisers: [WastefulCentral.sensorAdvertiser] + SampleDevices.bystanders, mode: .legacy, active: false,
            filterDuplicates: true, scanInterval: scanInterval, scanWindow: scanWindow, startingAt: s.elapsed,
            seed: s.rng.next())
        s.wait(seconds: 2)
        s.stopScan()

        s.note("app: connectGatt(EnviroSense 42) after stopScan()")
        let link = s.connect(to: sensor, handle: firstHandle, parameters: parameters, scanInterval: scanInterval,
                             scanWindow: scanInterval, chosenInterval: chosenInterval)
        let server = GATTServer(database: SampleProfiles.enviroSensor)
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
        s.note("app: discoverServices([enviro service])")
        for service in att.discoverPrimaryServices(uuid: SampleProfiles.enviroService) {
            for c in att.discoverCharacteristics(of: service) where c.properties.contains(.notify) {
                _ = att.discoverDescriptors(of: c)
            }
        }
        guard let data = server.database.characteristic(uuid: SampleProfiles.enviroSensorData), let cccd = data.cccdHandle
        else { return }
        s.note("app: setNotifyValue(true, sensor data)")
        _ = att.subscribe(cccd: cccd)
        // The sensor pushes each change: more readings than the polls got, for less radio time.
        for _ in 0..<Self.notificationCount {
            s.wait(ms: Self.notificationPeriod / Micros.perMillisecond)
            att.notify(handle: data.valueHandle, value: s.rng.bytes(WastefulCentral.sensorReadingLength))
        }
        _ = att.unsubscribe(cccd: cccd)
        s.note("app: disconnect() as soon as the data is in")
        s.wait(ms: 300)
        s.disconnect(link)

        s.wait(seconds: 35)
        s.note("app: connectGatt(known device) directly, database cached")
        let again = s.connect(to: sensor, handle: secondHandle, parameters: parameters, scanInterval: scanInterval,
                              scanWindow: scanInterval, chosenInterval: chosenInterval)
        let second = ATTChannel(script: s, connection: again, server: GATTServer(database: SampleProfiles.enviroSensor),
                                clientSide: .local)
        if let config = second.server.database.characteristic(uuid: SampleProfiles.enviroConfig) {
            s.note("app: writeCharacteristic(config)")
            _ = second.write(config.valueHandle, value: [0x02, 0x1E, 0x00])
        }
        s.wait(ms: 300)
        s.disconnect(again)
        s.wait(seconds: 1)
    }
}
