import BTWire

/// `wasteful-central`: every battery and airtime mistake a central app can make, for the analyzer's rules.
/// Unfiltered scanning at a 100 % duty cycle that stays on while connected, no MTU exchange, full discovery
/// of every service, characteristic and descriptor, reading every characteristic (one Read Not Permitted),
/// polling a notify-capable characteristic with Read Requests every second, a 7.5 ms interval kept through
/// 35 s of idle, then disconnect, rescan, reconnect and the whole discovery again (no caching), and finally a
/// Write Request the sensor never answers (ATT timeout) before the link is dropped.
public enum WastefulCentral {
    public static let name = "wasteful-central"
    public static let firstHandle: UInt16 = 0x0040
    public static let secondHandle: UInt16 = 0x0041
    public static let sensor = SampleDevices.enviroSensor
    /// 7.5 ms, the fastest LE interval, requested and granted.
    public static let fastInterval = HCIUnits.connectionInterval(microseconds: 7_500)
    public static let parameters = ConnectionParameters(intervalMin: fastInterval, intervalMax: fastInterval,
                                                        supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: Micros.seconds(2)))
    /// Scan window = interval = 10 ms: the radio listens all the time.
    public static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(10))
    public static let pollCount = 8
    /// Temperature, humidity and pressure, two bytes each.
    static let sensorReadingLength = 6
    public static let pollPeriod = Micros.seconds(1)
    public static let idle = Micros.seconds(35)
    /// ATT's transaction timeout (Core Vol 3 Part F §3.3.3).
    public static let attTimeout = Micros.seconds(30)
    /// Only the fragments the controller's 27-byte buffers allow.
    public static let aclDataLength = HCIFraming.leMinimumACLDataLength

    public static let scenario = scenario(firstHandle: firstHandle, secondHandle: secondHandle)

    /// The same session with other connection handles, as recording it again would give (the controller picks
    /// a handle for each connection): everything else, packets and times included, is the same.
    public static func scenario(firstHandle: UInt16, secondHandle: UInt16) -> Scenario {
        Scenario(
            name: name,
            summary: "wasteful central: unfiltered scan left on, 7.5 ms idle link, full rediscovery, read polling, ATT timeout",
            seed: 0x5741_5354, body: { run($0, firstHandle: firstHandle, secondHandle: secondHandle) })
    }

    static var sensorAdvertiser: SimulatedAdvertiser {
        SimulatedAdvertiser(peer: sensor, kind: .legacy(LegacyReportType.advInd),
                            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                                   .uuid128([SampleProfiles.enviroService], complete: true)]),
                            scanResponse: AdvertisingData([.completeName("EnviroSense 42"), .txPower(4)]),
                            interval: SampleDevices.fastAdvertising, rssi: -63)
    }

    static func run(_ s: HCIScript, firstHandle: UInt16, secondHandle: UInt16) {
        s.hostACLDataLength = aclDataLength
        s.controllerACLDataLength = aclDataLength
        s.setUpController()
        s.note("app: startScan(ScanSettings.SCAN_MODE_LOW_LATENCY), no filters")
        let stream = startScanning(s)
        s.wait(seconds: 3)

        s.note("app: connectGatt(EnviroSense 42); scan never stopped")
        let first = s.connect(to: sensor, handle: firstHandle, parameters: parameters, scanInterval: scanInterval,
                              scanWindow: scanInterval, chosenInterval: fastInterval)
        stream.setAdvertising(sensor, false)
        let server = GATTServer(database: SampleProfiles.enviroSensor)
        let att = ATTChannel(script: s, connection: first, server: server, clientSide: .local)
        s.note("app: discoverServices() without cache")
        let tree = att.discoverEverything()
        s.note("app: read every characteristic")
        for (_, characteristics) in tree {
            for (c, _) in characteristics { _ = att.read(c.valueHandle) }
        }
        let sensorData = server.database.characteristic(uuid: SampleProfiles.enviroSensorData)
        if let data = sensorData {
            s.note("app: poll sensor data with readCharacteristic every second instead of notifications")
            for _ in 0..<pollCount {
                s.wait(ms: pollPeriod / Micros.perMillisecond)
                server.setValue(s.rng.bytes(sensorReadingLength), at: data.valueHandle)
                _ = att.read(data.valueHandle)
            }
        }
        s.note("app: idle, 7.5 ms interval kept")
        s.advance(idle)
        s.note("app: disconnect()")
        s.disconnect(first)
        stream.setAdvertising(sensor, true)

        s.note("app: restart scan to reconnect")
        s.stopScan()
        let second = startScanning(s)
        s.wait(seconds: 2)
        let link = s.connect(to: sensor, handle: secondHandle, parameters: parameters, scanInterval: scanInterval,
                             scanWindow: scanInterval, chosenInterval: fastInterval)
        second.setAdvertising(sensor, false)
        let again = ATTChannel(script: s, connection: link, server: GATTServer(database: SampleProfiles.enviroSensor),
                               clientSide: .local)
        s.note("app: discoverServices() again")
        _ = again.discoverEverything()
        s.wait(seconds: 4)
        if let config = again.server.database.characteristic(uuid: SampleProfiles.enviroConfig) {
            s.note("app: writeCharacteristic(config); the sensor hangs")
            again.sendUnanswered(ATTPDU.writeRequest(handle: config.valueHandle, value: [0x02, 0x1E, 0x00]))
        }
        s.advance(attTimeout)
        s.note("stack: ATT transaction timeout; disconnecting")
        s.disconnect(link)
        s.wait(seconds: 1)
    }

    /// Active, unfiltered, 100 % duty cycle, reports from the sensor and the bystanders.
    static func startScanning(_ s: HCIScript) -> AdvertisingReportStream {
        s.startScan(active: true, interval: scanInterval, window: scanInterval, filterDuplicates: false)
        let stream = AdvertisingReportStream(
            advertisers: [sensorAdvertiser] + SampleDevices.bystanders, mode: .legacy, active: true,
            filterDuplicates: false, scanInterval: scanInterval, scanWindow: scanInterval, startingAt: s.elapsed,
            seed: s.rng.next())
        s.background = stream
        return stream
    }
}
