import BTWire

/// `peripheral-role`: the phone is the peripheral and GATT server. Part 1 uses the legacy advertising
/// commands: a laptop connects (advertising is switched back on at once), exchanges MTU, discovers
/// everything, reads, hits Insufficient Authentication and Read Not Permitted, pairs (LE Secure Connections,
/// the phone answering the LTK Request), subscribes, writes; the phone notifies, indicates and asks for new
/// connection parameters over L2CAP; the laptop disconnects. Part 2, after the stack restarts (HCI Reset,
/// since a controller refuses extended advertising commands once legacy ones were used), advertises with
/// the extended commands (a connectable legacy-PDU set and a non-connectable extended set); a tablet
/// connects (Enhanced Connection Complete + Advertising Set Terminated), reads, gets notifications and
/// leaves.
public enum PeripheralRole {
    public static let name = "peripheral-role"
    public static let laptopHandle: UInt16 = 0x0002
    public static let tabletHandle: UInt16 = 0x0003
    public static let laptop = SampleDevices.laptopCentral
    public static let tablet = SampleDevices.tabletCentral
    public static let phoneMTU: UInt16 = 247
    public static let laptopMTU: UInt16 = 517
    public static let tabletMTU: UInt16 = 185
    public static let legacyAdvertisingInterval = HCIUnits.slots(microseconds: Micros.ms(100))
    public static let extendedAdvertisingInterval = HCIUnits.slots24(microseconds: Micros.ms(200))
    public static let connectableSet: UInt8 = 0
    public static let broadcastSet: UInt8 = 1
    public static let laptopInterval = HCIUnits.connectionInterval(microseconds: 30_000)
    public static let tabletInterval = HCIUnits.connectionInterval(microseconds: 45_000)
    public static let supervisionTimeout = HCIUnits.supervisionTimeout(microseconds: 720_000)
    /// What the phone asks for once the laptop is done discovering.
    public static let relaxedParameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(60), maxMicroseconds: Micros.ms(90), latency: 2,
        timeoutMicroseconds: Micros.seconds(4))
    public static let relaxedInterval = HCIUnits.connectionInterval(microseconds: 75_000)
    public static let notificationCount = 10
    public static let notificationPeriod = Micros.seconds(2)
    /// Advertising events the connectable set completed before the tablet connected.
    static let completedEvents: UInt8 = 37

    public static let scenario = Scenario(
        name: name,
        summary: "phone as peripheral: legacy then extended advertising, centrals connect, read/write/pair, phone notifies",
        seed: 0x5045_5249, body: run)

    static var advertisingData: AdvertisingData {
        AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                         .uuid128([SampleProfiles.demoService], complete: true)])
    }

    static var scanResponse: AdvertisingData {
        AdvertisingData([.completeName("btlens Demo"), .txPower(7)])
    }

    static func run(_ s: HCIScript) {
        s.setUpController()
        s.note("app: BluetoothLeAdvertiser.startAdvertising (legacy)")
        s.startLegacyAdvertising(intervalMin: legacyAdvertisingInterval, intervalMax: legacyAdvertisingInterval,
                                 data: advertisingData, scanResponse: scanResponse)
        s.wait(seconds: 3)
        let link = s.acceptConnection(from: laptop, handle: laptopHandle, interval: laptopInterval,
                                      supervisionTimeout: supervisionTimeout, enhanced: false)
        s.note("app: keep advertising while connected")
        s.setAdvertising(enabled: true)
        serveLaptop(s, link)
        s.wait(seconds: 1)
        s.note("app: stopAdvertising; Bluetooth restarted")
        s.setAdvertising(enabled: false)
        s.wait(seconds: 2)

        s.setUpController()
        s.note("app: startAdvertisingSet (extended)")
        s.startExtendedAdvertising(handle: connectableSet,
                                   properties: ExtendedAdvertisingProperties.legacyPDU
                                       | ExtendedAdvertisingProperties.connectable | ExtendedAdvertisingProperties.scannable,
                                   intervalMin: extendedAdvertisingInterval, intervalMax: extendedAdvertisingInterval,
                                   data: advertisingData, scanResponse: scanResponse, sid: connectableSet)
        s.startExtendedAdvertising(handle: broadcastSet, properties: ExtendedAdvertisingProperties.includeTxPower,
                                   intervalMin: extendedAdvertisingInterval, intervalMax: extendedAdvertisingInterval,
                                   data: broadcastData, scanResponse: nil, sid: broadcastSet)
        s.wait(seconds: 4)
        let tabletLink = s.acceptConnection(from: tablet, handle: tabletHandle, interval: tabletInterval,
                                            supervisionTimeout: supervisionTimeout, enhanced: true)
        s.emit(.leAdvertisingSetTerminated(advertisingHandle: connectableSet, connectionHandle: tabletHandle,
                                           completedEvents: completedEvents))
        s.pause(s.timing.hostReaction)
        s.setExtendedAdvertising(enabled: true, handles: [connectableSet])
        serveTablet(s, tabletLink)
        s.wait(seconds: 1)
        s.setExtendedAdvertising(enabled: false, handles: [])
    }

    /// 64 bytes of extended advertising data: more than a legacy PDU can carry.
    static var broadcastData: AdvertisingData {
        AdvertisingData([.completeName("btlens Demo broadcast"),
                         .manufacturer(company: SampleCompany.google, data: Array(0..<36))])
    }

    static func serveLaptop(_ s: HCIScript, _ link: LEConnection) {
        let server = GATTServer(database: SampleProfiles.phoneDemo, rxMTU: phoneMTU)
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .remote)
        s.wait(ms: 40)
        att.exchangeMTU(laptopMTU)
        let tree = att.discoverEverything()
        let characteristics = tree.flatMap { $0.characteristics }
        func find(_ uuid: BluetoothUUID) -> (DiscoveredCharacteristic, [DiscoveredDescriptor])? {
            characteristics.first { $0.0.uuid == uuid }
        }
        if let name = server.database.characteristic(GATTUUID.deviceName) { _ = att.read(name.valueHandle) }
        if let secret = find(SampleProfiles.demoSecret) {
            if case .error = att.read(secret.0.valueHandle) {
                s.pairSecureConnections(link)
                _ = att.read(secret.0.valueHandle)
            }
        }
        if let control = find(SampleProfiles.demoControl) {
            _ = att.read(control.0.valueHandle)  // Read Not Permitted: write-only
            att.write(control.0.valueHandle, value: [0x01, 0x10])
            for step in 0..<3 {
                s.wait(ms: 250)
                att.writeWithoutResponse(control.0.valueHandle, value: [0x02, UInt8(step)])
            }
        }
        let status = find(SampleProfiles.demoStatus)
        let log = find(SampleProfiles.demoLog)
        if let cccd = status?.1.first(where: { $0.uuid == GATTUUID.cccd }) { att.subscribe(cccd: cccd.handle) }
        if let cccd = log?.1.first(where: { $0.uuid == GATTUUID.cccd }) { att.subscribe(cccd: cccd.handle, indications: true) }
        s.requestConnectionParameters(relaxedParameters, on: link, chosenInterval: relaxedInterval)
        if let status {
            for i in 0..<notificationCount {
                s.wait(ms: notificationPeriod / Micros.perMillisecond)
                att.notify(handle: status.0.valueHandle, value: [UInt8(i), UInt8(truncatingIfNeeded: s.rng.next())])
            }
        }
        if let log { att.indicate(handle: log.0.valueHandle, value: Array("session closed".utf8)) }
        s.wait(seconds: 1)
        s.peerDisconnects(link)
    }

    static func serveTablet(_ s: HCIScript, _ link: LEConnection) {
        let server = GATTServer(database: SampleProfiles.phoneDemo, rxMTU: phoneMTU)
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .remote)
        s.wait(ms: 60)
        att.exchangeMTU(tabletMTU)
        // The tablet cached the database: it looks up only the demo service and its characteristics.
        guard let service = att.discoverPrimaryServices(uuid: SampleProfiles.demoService).first else { return }
        let characteristics = att.discoverCharacteristics(of: service)
        guard let status = characteristics.first(where: { $0.uuid == SampleProfiles.demoStatus }) else { return }
        _ = att.read(status.valueHandle)
        if let cccd = server.database.characteristic(uuid: SampleProfiles.demoStatus)?.cccdHandle {
            att.subscribe(cccd: cccd)
            for i in 0..<3 {
                s.wait(seconds: 1)
                att.notify(handle: status.valueHandle, value: [UInt8(notificationCount + i), 0])
            }
            att.unsubscribe(cccd: cccd)
        }
        s.wait(ms: 500)
        s.peerDisconnects(link)
    }
}
