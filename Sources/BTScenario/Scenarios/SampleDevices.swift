import BTWire

/// The devices the scenarios are about. Public addresses use made-up OUIs; random static addresses have the
/// two top bits set, as the specification requires (Core Vol 6 Part B §1.3.2.1).
public enum SampleDevices {
    /// The capturing phone (public address).
    public static let phone = BDAddr(rawValue: 0x9C_B6_D0_11_22_33)
    public static let phoneController = ControllerIdentity(index: 0, address: phone)

    public static let heartRateSensor = PeerAddress(BDAddr(rawValue: 0xD4_3A_2C_81_5E_07), type: LEParameter.randomAddress)
    public static let enviroSensor = PeerAddress(BDAddr(rawValue: 0xE1_7F_03_9A_42_42), type: LEParameter.randomAddress)
    public static let laptopCentral = PeerAddress(BDAddr(rawValue: 0x7A_21_94_C3_D5_E6), type: LEParameter.randomAddress)
    public static let tabletCentral = PeerAddress(BDAddr(rawValue: 0x48_3C_10_AB_CD_EF), type: LEParameter.publicAddress)
    public static let loggerA = PeerAddress(BDAddr(rawValue: 0xC8_11_22_33_44_A1), type: LEParameter.randomAddress)
    public static let loggerB = PeerAddress(BDAddr(rawValue: 0x00_1B_DC_07_B0_0B), type: LEParameter.publicAddress)
    /// Bystanders seen while scanning.
    public static let television = PeerAddress(BDAddr(rawValue: 0xF0_70_4F_11_0A_0B), type: LEParameter.publicAddress)
    /// A phone with a resolvable private address (top bits 01).
    public static let otherPhone = PeerAddress(BDAddr(rawValue: 0x5D_E2_19_77_30_C4), type: LEParameter.randomAddress)
    public static let tracker = PeerAddress(BDAddr(rawValue: 0xCE_55_81_02_6B_19), type: LEParameter.randomAddress)
    public static let headphones = PeerAddress(BDAddr(rawValue: 0x38_18_4C_2E_91_AA), type: LEParameter.publicAddress)

    /// Advertising intervals of the simulated devices, in microseconds.
    public static let fastAdvertising = Micros.ms(100)
    public static let normalAdvertising = Micros.ms(250)
    public static let slowAdvertising = Micros.ms(1_000)

    /// Bystanders every scan sees: a TV, another phone, a tracker tag, headphones.
    public static var bystanders: [SimulatedAdvertiser] {
        [
            SimulatedAdvertiser(peer: television, kind: .legacy(LegacyReportType.advInd),
                                data: AdvertisingData([.flags(ADFlags.leGeneralDiscoverable),
                                                       .manufacturer(company: SampleCompany.samsung,
                                                                     data: [0x42, 0x04, 0x01, 0x20, 0x6F, 0x0C])]),
                                scanResponse: AdvertisingData([.completeName("Living Room TV")]),
                                interval: normalAdvertising, rssi: -71),
            SimulatedAdvertiser(peer: otherPhone, kind: .legacy(LegacyReportType.advInd),
                                data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                                       .manufacturer(company: CompanyID.apple,
                                                                     data: [0x10, 0x05, 0x0B, 0x1C, 0x3F, 0x8A, 0x21])]),
                                interval: normalAdvertising, rssi: -80),
            SimulatedAdvertiser(peer: tracker, kind: .legacy(LegacyReportType.nonconnInd),
                                data: AdvertisingData([.serviceData16(uuid: 0xFD5A, data: [0x01, 0x7E, 0x33, 0x19, 0xA0])]),
                                interval: slowAdvertising, rssi: -88),
            SimulatedAdvertiser(peer: headphones, kind: .legacy(LegacyReportType.scanInd),
                                data: AdvertisingData([.flags(ADFlags.leGeneralDiscoverable),
                                                       .manufacturer(company: SampleCompany.microsoft,
                                                                     data: [0x03, 0x00, 0x80, 0x18, 0x04, 0x20])]),
                                scanResponse: AdvertisingData([.completeName("Studio Buds")]),
                                interval: slowAdvertising, rssi: -76),
        ]
    }
}
