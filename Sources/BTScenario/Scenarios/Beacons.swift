import BTWire

/// `beacons`: a crowded room seen by a scanner. First a legacy active scan without duplicate filtering
/// (LE Advertising Reports, several per event when they coincide; scan responses), then, after the stack
/// restarts with extended scanning on 1M and Coded, LE Extended Advertising Reports: legacy PDUs in
/// extended form, long extended data in several fragments, a Coded-PHY long-range sensor, a truncated chain.
/// iBeacons carry big-endian major/minor; others carry names, manufacturer data, service data and TX power.
public enum Beacons {
    public static let name = "beacons"
    /// The proximity UUID all the store's iBeacons share.
    public static let iBeaconUUID = BluetoothUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
    /// (major, minor) of the three iBeacons.
    public static let iBeacons: [(major: UInt16, minor: UInt16)] = [(0x0001, 0x0101), (0x0001, 0x0102), (0x0002, 0x0A0B)]
    /// Measured power at 1 m.
    public static let iBeaconPower: Int8 = -59
    public static let legacyScanDuration = Micros.seconds(8)
    public static let extendedScanDuration = Micros.seconds(8)
    public static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(50))
    public static let scanWindow = HCIUnits.slots(microseconds: Micros.ms(30))
    /// Eddystone's 16-bit service UUID and its UID frame type.
    public static let eddystone: UInt16 = 0xFEAA
    public static let eddystoneUID: UInt8 = 0x00
    /// An Eddystone frame's TX power byte (dBm at 0 m).
    static let eddystonePower: UInt8 = 0xEE
    /// Bytes of manufacturer plus service data in the exhibit guide's extended advertisement.
    public static let longDataLength = 300
    public static let codedSensorDataLength = 40

    public static let scenario = Scenario(
        name: name,
        summary: "many advertisers: iBeacons, names, manufacturer and service data; legacy then extended reports",
        seed: 0x4245_4143, body: run)

    static func random(_ raw: UInt64) -> PeerAddress { PeerAddress(BDAddr(rawValue: raw), type: LEParameter.randomAddress) }

    /// Every advertiser in the room. Extended ones are only visible to the extended scan.
    static var advertisers: [SimulatedAdvertiser] {
        var all: [SimulatedAdvertiser] = []
        for (i, b) in iBeacons.enumerated() {
            all.append(SimulatedAdvertiser(
                peer: random(0xC1_00_00_00_B0_00 + UInt64(i)), kind: .legacy(LegacyReportType.nonconnInd),
                data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                       .iBeacon(uuid: iBeaconUUID, major: b.major, minor: b.minor,
                                                measuredPower: iBeaconPower)]),
                interval: SampleDevices.fastAdvertising, rssi: Int8(-60 - 6 * i)))
        }
        all.append(SimulatedAdvertiser(
            peer: random(0xD9_44_21_0E_57_01), kind: .legacy(LegacyReportType.nonconnInd),
            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly), .uuid16([eddystone], complete: true),
                                   .serviceData16(uuid: eddystone, data: [eddystoneUID, eddystonePower]
                                       + Array(0x10..<0x1A) + Array(0x20..<0x26))]),
            interval: SampleDevices.normalAdvertising, rssi: -77))
        all.append(SimulatedAdvertiser(
            peer: random(0xEB_12_9F_3C_00_44), kind: .legacy(LegacyReportType.advInd),
            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                   .uuid16([GATTUUID.heartRate, GATTUUID.battery], complete: true), .txPower(-4)]),
            scanResponse: AdvertisingData([.completeName("Treadmill 44")]),
            interval: SampleDevices.normalAdvertising, rssi: -69))
        all.append(SimulatedAdvertiser(
            peer: random(0xF3_0A_77_12_9B_2D), kind: .legacy(LegacyReportType.scanInd),
            data: AdvertisingData([.flags(ADFlags.brEdrNotSupported), .shortName("Scale"),
                                   .manufacturer(company: SampleCompany.nordic, data: [0x01, 0x44, 0x12, 0x9B])]),
            scanResponse: AdvertisingData([.completeName("Kitchen Scale Pro")]),
            interval: SampleDevices.slowAdvertising, rssi: -84))
        all += SampleDevices.bystanders
        // Extended advertisers.
        all.append(SimulatedAdvertiser(
            peer: random(0xCA_FE_00_00_10_01),
            kind: .extended(eventType: ExtendedReportType.connectable, primaryPHY: LEParameter.phy1M,
                            secondaryPHY: LEParameter.phy2M, sid: 3, txPower: 5),
            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                   .completeName("Exhibit Guide 1001"),
                                   .manufacturer(company: SampleCompany.garmin,
                                                 data: (0..<longDataLength / 2).map { UInt8(truncatingIfNeeded: $0 * 7) }),
                                   .serviceData16(uuid: eddystone,
                                                  data: (0..<longDataLength / 2).map { UInt8(truncatingIfNeeded: $0 * 3) })]),
            interval: SampleDevices.normalAdvertising, rssi: -66))
        all.append(SimulatedAdvertiser(
            peer: random(0xCA_FE_00_00_20_02),
            kind: .extended(eventType: ExtendedReportType.nonConnectable, primaryPHY: LEParameter.phyCoded, secondaryPHY: LEParameter.phyCoded,
                            sid: 1, txPower: 8),
            data: AdvertisingData([.completeName("Long Range Sensor"),
                                   .serviceData16(uuid: GATTUUID.battery,
                                                  data: (0..<codedSensorDataLength).map { UInt8($0) })]),
            interval: SampleDevices.slowAdvertising, rssi: -94))
        return all
    }

    static func run(_ s: HCIScript) {
        s.setUpController()
        s.note("app: startScan (legacy, active, no duplicate filter)")
        s.startScan(active: true, interval: scanInterval, window: scanWindow, filterDuplicates: false)
        s.background = AdvertisingReportStream(advertisers: advertisers, mode: .legacy, active: true,
                                               filterDuplicates: false, scanInterval: scanInterval,
                                               scanWindow: scanWindow, startingAt: s.elapsed, seed: s.rng.next())
        s.advance(legacyScanDuration)
        s.stopScan()
        s.wait(seconds: 1)

        s.note("stack restarted: extended scanning on 1M and Coded")
        s.setUpController()
        let phys: [HCICommand.ExtendedScanPHY] = [
            .init(phyBit: LEParameter.phy1MBit, active: true, interval: scanInterval, window: scanWindow),
            .init(phyBit: LEParameter.phyCodedBit, active: false, interval: scanInterval * 3, window: scanWindow * 3),
        ]
        s.startExtendedScan(phys: phys, filterDuplicates: LEParameter.disabled)
        s.background = AdvertisingReportStream(advertisers: advertisers, mode: .extended, active: true,
                                               filterDuplicates: false, scanInterval: scanInterval,
                                               scanWindow: scanWindow, startingAt: s.elapsed, seed: s.rng.next())
        s.advance(extendedScanDuration)
        // A chain the controller could not follow to its end: reported with data status "truncated".
        let truncated = ExtendedAdvertisingReport(
            eventType: ExtendedReportType.scannable | ExtendedReportType.dataTruncated << ExtendedReportType.dataStatusShift,
            peer: random(0xCA_FE_00_00_30_03), data: AdvertisingData([.completeName("Flaky Chain")]).bytes, rssi: -90,
            secondaryPHY: LEParameter.phy1M, sid: 2)
        s.report(extended: [truncated])
        s.pause(s.timing.hostReaction)
        s.stopExtendedScan()
    }
}
