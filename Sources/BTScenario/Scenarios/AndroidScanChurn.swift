import BTWire

/// `android-scan-churn`: an Android app that restarts its unfiltered scan every few seconds to "refresh" results
/// — seven starts in about 20 s, each its own APCF all-pass filter (index 1) and controller re-programming — while
/// the OS's filtered background scan (index 10) runs throughout; then it stops scanning before it connects, as it
/// should. The fixture of scan-churn (BTL014), and of scan-after-connect staying silent on the OS's scan.
public enum AndroidScanChurn {
    public static let name = "android-scan-churn"
    public static let sensor = SampleDevices.heartRateSensor
    public static let starts = 7
    public static let handle: UInt16 = 0x0040

    public static let scenario = Scenario(
        name: name,
        summary: "Android app restarting its scan 7 times in 20 s beside the OS's filtered scan, then connecting",
        seed: 0x4348_5553, body: run)

    static var osClient: AndroidScanStack.Client { AndroidScanStack.Client(index: 10, mode: .lowPower,
                                                  conditions: [.apcfAddServiceUUID(index: 10, uuid16: 0xFE2C)],
                                                  features: APCF.Feature.serviceUUID, advertisers: []) }
    static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))

    static func run(_ s: HCIScript) {
        s.setUpController()
        let sensorAdvertiser = SimulatedAdvertiser(
            peer: sensor, kind: .legacy(LegacyReportType.advInd),
            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly), .completeName("HR Sensor")]),
            interval: Micros.ms(200), rssi: -58)
        let app = AndroidScanStack.Client(index: 1, mode: .lowLatency, advertisers: [sensorAdvertiser])
        let stack = AndroidScanStack(script: s)
        s.note("OS: filtered background scan (Fast Pair)")
        stack.start(osClient)
        s.wait(seconds: 5)
        for start in 0..<starts {
            s.note("app: startScan() (\(start + 1) of \(starts))")
            stack.start(app)
            s.wait(ms: 1_500)
            s.note("app: stopScan() to refresh the results")
            stack.stop(index: app.index)
            s.wait(ms: 1_500)
        }
        s.note("app: startScan(), then stopScan() and connectGatt() once the sensor is found")
        stack.start(app)
        s.wait(seconds: 2)
        stack.stop(index: app.index, reprogram: false)
        stack.setAdvertising(sensor, false)
        let link = s.connect(to: sensor, handle: handle, parameters: parameters, scanInterval: AndroidScanStack.ScanMode.lowPower.interval,
                             scanWindow: AndroidScanStack.ScanMode.lowPower.window, whileInitiating: { stack.reprogram() })
        let server = GATTServer(database: SampleProfiles.heartRateSensor, rxMTU: UInt16(ATTPDU.defaultMTU))
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
        _ = att.exchangeMTU(247)
        let services = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.battery))
        if let battery = services.first,
           let level = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == BluetoothUUID(uuid16: GATTUUID.batteryLevel) }) {
            _ = att.read(level.valueHandle)
            s.wait(seconds: 1)
            _ = att.read(level.valueHandle)  // read once more before leaving: two reads are no poll
        }
        s.wait(seconds: 2)
        s.disconnect(link)
        s.wait(seconds: 3)
    }
}
