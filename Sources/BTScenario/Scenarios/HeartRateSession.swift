import BTWire

/// `heart-rate-session`: a well-behaved central. A short active scan with duplicate filtering, scan off,
/// connect, MTU exchange, discovery of only the Heart Rate service (by UUID) and its characteristics, the
/// Measurement CCCD, 60 notifications at 1 Hz, unsubscribe, prompt disconnect.
public enum HeartRateSession {
    public static let name = "heart-rate-session"
    public static let handle: UInt16 = 0x0040
    public static let sensor = SampleDevices.heartRateSensor
    public static let notificationCount = 60
    public static let notificationPeriod = Micros.seconds(1)
    /// The MTU the phone offers and the one the sensor answers (so 185 applies).
    public static let phoneMTU: UInt16 = 247
    public static let sensorMTU: UInt16 = 185
    /// Connect with 30–50 ms; the controller picks 45 ms.
    public static let connectParameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(5))
    public static let connectInterval = HCIUnits.connectionInterval(microseconds: 45_000)
    /// The sensor then asks for 100–200 ms with latency 4 over L2CAP; the phone accepts, the link gets 150 ms.
    public static let sensorParameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(100), maxMicroseconds: Micros.ms(200), latency: 4,
        timeoutMicroseconds: Micros.seconds(6))
    public static let updatedInterval = HCIUnits.connectionInterval(microseconds: 150_000)
    public static let scanDuration = Micros.ms(1_200)
    /// LE features the sensor reports: encryption, connection parameters request, extended reject,
    /// peripheral-initiated features exchange, ping, data length extension.
    public static let sensorFeatures: UInt64 = 0x3F
    static let restingHeartRate = 62...78
    static let rrUnitsPerMinute = 60 * 1024

    public static let scenario = Scenario(
        name: name,
        summary: "well-behaved central: filtered scan, connect, discover Heart Rate by UUID, 60 notifications at 1 Hz, disconnect",
        seed: 0x4852_5331, body: run)

    static func run(_ s: HCIScript) {
        s.setUpController()
        s.note("app: scanForPeripherals(withServices: [180D])")
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
        let scanWindow = HCIUnits.slots(microseconds: Micros.ms(30))
        s.startScan(active: true, interval: scanInterval, window: scanWindow, filterDuplicates: true)
        let sensorAdvertiser = SimulatedAdvertiser(
            peer: sensor, kind: .legacy(LegacyReportType.advInd),
            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                   .uuid16([GATTUUID.heartRate, GATTUUID.battery], complete: true),
                                   .appearance(SampleProfiles.heartRateBeltAppearance)]),
            scanResponse: AdvertisingData([.completeName("HR Sensor 5E07"), .txPower(0)]),
            interval: SampleDevices.fastAdvertising, rssi: -58)
        s.background = AdvertisingReportStream(
            advertisers: [sensorAdvertiser] + SampleDevices.bystanders, mode: .legacy, active: true,
            filterDuplicates: true, scanInterval: scanInterval, scanWindow: scanWindow, startingAt: s.elapsed,
            seed: s.rng.next())
        s.wait(ms: scanDuration / Micros.perMillisecond)
        s.stopScan()

        s.note("app: connect(HR Sensor 5E07)")
        let link = s.connect(to: sensor, handle: handle, parameters: connectParameters, scanInterval: scanInterval,
                             scanWindow: scanInterval, chosenInterval: connectInterval)
        s.readRemoteFeatures(link, features: sensorFeatures)
        s.changeDataLength(link, txOctets: UInt16(HCIFraming.leMaximumACLDataLength),
                           rxOctets: UInt16(HCIFraming.leMaximumACLDataLength), hostRequested: false)

        let server = GATTServer(database: SampleProfiles.heartRateSensor, rxMTU: sensorMTU)
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
        att.exchangeMTU(phoneMTU)
        s.note("app: discoverServices([180D])")
        let services = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.heartRate))
        guard let heartRate = services.first else { return }
        let characteristics = att.discoverCharacteristics(of: heartRate)
        let measurementUUID = BluetoothUUID(uuid16: GATTUUID.heartRateMeasurement)
        guard let measurement = characteristics.first(where: { $0.uuid == measurementUUID }) else { return }
        let cccd = att.discoverDescriptors(of: measurement).first { $0.uuid == GATTUUID.cccd }
        if let location = characteristics.first(where: { $0.uuid == BluetoothUUID(uuid16: GATTUUID.bodySensorLocation) }) {
            _ = att.read(location.valueHandle)
        }
        guard let cccd else { return }
        s.note("app: setNotifyValue(true, 2A37)")
        att.subscribe(cccd: cccd.handle)
        s.requestConnectionParameters(sensorParameters, on: link, chosenInterval: updatedInterval)

        let first = s.elapsed + notificationPeriod
        for i in 0..<notificationCount {
            // Each measurement leaves the sensor at the first connection event after its 1 s tick.
            s.advance(toElapsed: first + Int64(i) * notificationPeriod + s.rng.int64(in: 0...link.intervalMicroseconds))
            let bpm = s.rng.int(in: restingHeartRate)
            let rr = UInt16(rrUnitsPerMinute / bpm)
            att.notify(handle: measurement.valueHandle, value: [SampleProfiles.heartRateFlags, UInt8(bpm),
                                                                UInt8(truncatingIfNeeded: rr), UInt8(rr >> 8)])
        }
        s.pause(s.timing.hostReaction)
        s.note("app: setNotifyValue(false, 2A37); cancelPeripheralConnection")
        att.unsubscribe(cccd: cccd.handle)
        s.disconnect(link)
    }
}
