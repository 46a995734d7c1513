import BTWire

/// `eatt-logger`: ATT over an Enhanced ATT bearer (Core Vol 3 Part G §5.3.2). The phone scans briefly (duplicate
/// filtering on, stopped before connecting), connects to a data logger and opens an EATT channel (L2CAP Credit
/// Based Connection, SPSM 0x0027) with MTU 247 and an MPS of 64, so every SDU longer than 62 bytes crosses in
/// several K-frames, only the first carrying the SDU length. On
/// that bearer it discovers the logger service by UUID, reads the 600-byte log (Read, then Read Blob), writes the
/// configuration, subscribes to the stream and takes ten 244-byte notifications before disconnecting.
public enum EnhancedATTLogger {
    public static let name = "eatt-logger"
    public static let logger = SampleDevices.loggerA
    public static let handle: UInt16 = 0x0040
    public static let mtu: UInt16 = 247
    /// Smaller than the MTU: a 247-byte PDU crosses in four K-frames.
    public static let mps: UInt16 = 64
    public static let logLength = 600
    public static let notifications = 10
    public static let notificationPeriod = Micros.ms(200)
    static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))
    static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))

    public static let scenario = Scenario(
        name: name,
        summary: "ATT on an EATT bearer (MTU 247, MPS 64): discovery, a 600-byte read, notifications in K-frames",
        seed: 0x4541_5454, body: run)

    public static let log = (0..<logLength).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    static func run(_ s: HCIScript) {
        s.setUpController()
        s.note("app: scan for the logger service")
        s.startScan(active: true, interval: scanInterval, window: scanInterval / 2, filterDuplicates: true)
        let advertiser = SimulatedAdvertiser(
            peer: logger, kind: .legacy(LegacyReportType.advInd),
            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                   .uuid128([SampleProfiles.loggerService], complete: true)]),
            scanResponse: AdvertisingData([.completeName("Logger A")]),
            interval: SampleDevices.fastAdvertising, rssi: -60)
        s.background = AdvertisingReportStream(
            advertisers: [advertiser] + SampleDevices.bystanders, mode: .legacy, active: true, filterDuplicates: true,
            scanInterval: scanInterval, scanWindow: scanInterval / 2, startingAt: s.elapsed, seed: s.rng.next())
        s.wait(ms: 1_500)
        s.stopScan()
        s.note("app: connect(Logger A)")
        let link = s.connect(to: logger, handle: handle, parameters: parameters, scanInterval: scanInterval,
                             scanWindow: scanInterval)
        let att = ATTChannel(script: s, connection: link,
                             server: GATTServer(database: SampleProfiles.dataLogger(name: "Logger A", log: log),
                                                rxMTU: mtu), clientSide: .local)
        s.note("app: open an EATT bearer, MTU \(mtu), MPS \(mps)")
        att.openEnhancedBearer(mtu: mtu, mps: mps)
        let chars = att.discoverPrimaryServices(uuid: SampleProfiles.loggerService).flatMap(att.discoverCharacteristics)
        func valueHandle(_ uuid: BluetoothUUID) -> UInt16? { chars.first { $0.uuid == uuid }?.valueHandle }
        guard let logHandle = valueHandle(SampleProfiles.loggerLog),
              let configHandle = valueHandle(SampleProfiles.loggerConfig),
              let stream = chars.first(where: { $0.uuid == SampleProfiles.loggerStream }),
              let cccd = att.discoverDescriptors(of: stream).first(where: { $0.uuid == GATTUUID.cccd })
        else { return }
        _ = att.read(logHandle)
        att.write(configHandle, value: (0..<100).map { UInt8(truncatingIfNeeded: $0 * 3) })
        att.subscribe(cccd: cccd.handle)
        for round in 0..<notifications {
            s.wait(ms: notificationPeriod / Micros.perMillisecond)
            att.notify(handle: stream.valueHandle, value: (0..<(Int(mtu) - 3)).map { UInt8(truncatingIfNeeded: $0 + round) })
        }
        s.wait(ms: 300)
        s.disconnect(link)
    }
}
