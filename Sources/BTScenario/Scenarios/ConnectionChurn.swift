import BTWire

/// `connection-churn`: an app that connects to a sensor for every reading and disconnects right after, four
/// times in half a minute, and whose attempts to reach a second sensor out of range fail (connection failed to
/// be established, 0x3E) — the fixture of the connection-churn rule.
public enum ConnectionChurn {
    public static let name = "connection-churn"
    public static let sensor = SampleDevices.heartRateSensor
    public static let absentSensor = SampleDevices.tracker
    public static let cycles = 4
    public static let failedAttempts = 2
    public static let firstHandle: UInt16 = 0x0040

    public static let scenario = Scenario(
        name: name,
        summary: "connects for every reading: 4 connect/read/disconnect cycles in 30 s, 2 failed connection attempts",
        seed: 0x4348_5552, body: run)

    static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))
    static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))

    static func run(_ s: HCIScript) {
        s.setUpController()
        for cycle in 0..<cycles {
            s.note("app: connect, read the battery level, disconnect (cycle \(cycle + 1))")
            let link = s.connect(to: sensor, handle: firstHandle + UInt16(cycle), parameters: parameters,
                                 scanInterval: scanInterval, scanWindow: scanInterval)
            let server = GATTServer(database: SampleProfiles.heartRateSensor, rxMTU: UInt16(ATTPDU.defaultMTU))
            let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
            let services = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.battery))
            if let battery = services.first,
               let level = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == BluetoothUUID(uuid16: GATTUUID.batteryLevel) }) {
                _ = att.read(level.valueHandle)
            }
            s.disconnect(link)
            s.wait(seconds: 7)
        }
        for attempt in 0..<failedAttempts {
            s.note("app: connect to a sensor out of range (attempt \(attempt + 1))")
            s.commandStatus(.leCreateConnection(peer: absentSensor, scanInterval: scanInterval, scanWindow: scanInterval,
                                                parameters: parameters))
            s.wait(ms: 400)
            var info = ConnectionCompleteInfo(handle: 0, role: LEParameter.centralRole, peer: absentSensor,
                                              interval: 0, latency: 0, supervisionTimeout: 0)
            info.status = .connectionFailedToBeEstablished
            s.emit(.leConnectionComplete(info))
            s.wait(seconds: 2)
        }
    }
}
