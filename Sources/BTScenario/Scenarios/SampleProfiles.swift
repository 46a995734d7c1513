import BTWire

/// GATT databases of the simulated peripherals. Handles are assigned in order from 0x0001, so the layouts
/// are stable and tests can name them.
public enum SampleProfiles {
    /// Heart-rate flags: sensor contact supported and detected, RR intervals present (HRS §3.1.1.1).
    public static let heartRateFlags: UInt8 = 0x16
    /// Body Sensor Location "chest".
    public static let chest: UInt8 = 0x01
    /// Appearance "Heart Rate Sensor: Belt" (0x0341).
    public static let heartRateBeltAppearance: UInt16 = 0x0341
    /// Appearance "Generic Sensor", "Generic Phone", "Unknown".
    public static let sensorAppearance: UInt16 = 0x0540
    public static let phoneAppearance: UInt16 = 0x0040
    public static let unknownAppearance: UInt16 = 0x0000

    public static func gap(name: String, appearance: UInt16) -> GATTServiceDefinition {
        GATTServiceDefinition(GATTUUID.genericAccess, [
            GATTCharacteristicDefinition(GATTUUID.deviceName, .read, value: Array(name.utf8)),
            GATTCharacteristicDefinition(GATTUUID.appearance, .read, value: ByteWriter.build { $0.u16(appearance) }),
            GATTCharacteristicDefinition(GATTUUID.peripheralPreferredConnectionParameters, .read,
                                         value: ByteWriter.build { w in
                                             ConnectionParameters.interval(minMicroseconds: Micros.ms(30),
                                                                           maxMicroseconds: Micros.ms(50),
                                                                           timeoutMicroseconds: Micros.seconds(4))
                                                 .write(to: &w, includeCELength: false)
                                         }),
        ])
    }

    public static let gatt = GATTServiceDefinition(GATTUUID.genericAttribute, [
        GATTCharacteristicDefinition(GATTUUID.serviceChanged, .indicate, value: [0x01, 0x00, 0xFF, 0xFF]),
    ])

    static func deviceInformation(manufacturer: String, model: String, firmware: String) -> GATTServiceDefinition {
        GATTServiceDefinition(GATTUUID.deviceInformation, [
            GATTCharacteristicDefinition(GATTUUID.manufacturerName, .read, value: Array(manufacturer.utf8)),
            GATTCharacteristicDefinition(GATTUUID.modelNumber, .read, value: Array(model.utf8)),
            GATTCharacteristicDefinition(GATTUUID.firmwareRevision, .read, value: Array(firmware.utf8)),
        ])
    }

    static func battery(level: UInt8) -> GATTServiceDefinition {
        GATTServiceDefinition(GATTUUID.battery, [
            GATTCharacteristicDefinition(GATTUUID.batteryLevel, [.read, .notify], value: [level]),
        ])
    }

    /// A chest-strap heart-rate sensor: GAP 0x0001–0x0007, GATT 0x0008–0x000B, Heart Rate 0x000C–0x0013
    /// (Measurement value 0x000E, CCCD 0x000F; Body Sensor Location 0x0011; Control Point 0x0013),
    /// Battery 0x0014–0x0017, Device Information 0x0018–0x001E.
    public static let heartRateSensor = GATTDatabase([
        gap(name: "HR Sensor 5E07", appearance: heartRateBeltAppearance),
        gatt,
        GATTServiceDefinition(GATTUUID.heartRate, [
            GATTCharacteristicDefinition(GATTUUID.heartRateMeasurement, .notify, value: [heartRateFlags, 0]),
            GATTCharacteristicDefinition(GATTUUID.bodySensorLocation, .read, value: [chest]),
            GATTCharacteristicDefinition(GATTUUID.heartRateControlPoint, .write),
        ]),
        battery(level: 87),
        deviceInformation(manufacturer: "Acme Fitness", model: "HRS-2", firmware: "3.1.4"),
    ])

    /// The vendor service of the environmental sensor (128-bit UUIDs, as vendor services have).
    public static let enviroService = BluetoothUUID(high: 0x3E2A_0001_6F1C_4B5E, low: 0x9D2A_7C1E_5A0B_4C11)
    public static let enviroSensorData = BluetoothUUID(high: 0x3E2A_0002_6F1C_4B5E, low: 0x9D2A_7C1E_5A0B_4C11)
    public static let enviroConfig = BluetoothUUID(high: 0x3E2A_0003_6F1C_4B5E, low: 0x9D2A_7C1E_5A0B_4C11)
    public static let enviroCommand = BluetoothUUID(high: 0x3E2A_0004_6F1C_4B5E, low: 0x9D2A_7C1E_5A0B_4C11)

    /// An environmental sensor with a vendor service: Sensor Data (read + notify), Config (read/write),
    /// Command (write only, so reading it fails with Read Not Permitted).
    public static let enviroSensor = GATTDatabase([
        gap(name: "EnviroSense 42", appearance: sensorAppearance),
        gatt,
        deviceInformation(manufacturer: "Enviro Labs", model: "ES-42", firmware: "1.0.7"),
        battery(level: 64),
        GATTServiceDefinition(uuid: enviroService, [
            GATTCharacteristicDefinition(uuid: enviroSensorData, properties: [.read, .notify],
                                         value: [0x09, 0x08, 0x2C, 0x01, 0xE8, 0x03],
                                         descriptors: [.userDescription("Sensor data")]),
            GATTCharacteristicDefinition(uuid: enviroConfig, properties: [.read, .write], value: [0x01, 0x3C, 0x00]),
            GATTCharacteristicDefinition(uuid: enviroCommand, properties: [.write]),
        ]),
    ])

    /// The demo service the phone hosts in `peripheral-role`.
    public static let demoService = BluetoothUUID(high: 0x0000_FEED_1212_EFDE, low: 0x1523_785F_EABC_D123)
    public static let demoStatus = BluetoothUUID(high: 0x0000_BEEF_1212_EFDE, low: 0x1523_785F_EABC_D123)
    public static let demoControl = BluetoothUUID(high: 0x0000_C0DE_1212_EFDE, low: 0x1523_785F_EABC_D123)
    public static let demoSecret = BluetoothUUID(high: 0x0000_5EC7_1212_EFDE, low: 0x1523_785F_EABC_D123)
    public static let demoLog = BluetoothUUID(high: 0x0000_106A_1212_EFDE, low: 0x1523_785F_EABC_D123)

    /// The phone's own server in `peripheral-role`: Status (read + notify), Control (write + write without
    /// response), Secret (read, encryption required), Log (indicate).
    public static let phoneDemo = GATTDatabase([
        gap(name: "btlens Demo", appearance: phoneAppearance),
        gatt,
        GATTServiceDefinition(uuid: demoService, [
            GATTCharacteristicDefinition(uuid: demoStatus, properties: [.read, .notify], value: [0x00, 0x00]),
            GATTCharacteristicDefinition(uuid: demoControl, properties: [.write, .writeWithoutResponse]),
            GATTCharacteristicDefinition(uuid: demoSecret, properties: [.read], value: Array("s3cr3t-t0k3n".utf8),
                                         permissions: [.read, .encrypted]),
            GATTCharacteristicDefinition(uuid: demoLog, properties: [.indicate], value: []),
        ]),
    ])

    /// A data logger with long values: a 600-byte log (read with Read Blob), a 500-byte writable
    /// configuration (long writes), a streaming characteristic, and an encrypted one.
    public static func dataLogger(name: String, log: [UInt8]) -> GATTDatabase {
        GATTDatabase([
            gap(name: name, appearance: unknownAppearance),
            gatt,
            GATTServiceDefinition(uuid: loggerService, [
                GATTCharacteristicDefinition(uuid: loggerLog, properties: [.read], value: log),
                GATTCharacteristicDefinition(uuid: loggerConfig, properties: [.read, .write],
                                             value: Array(repeating: 0, count: loggerConfigLength)),
                GATTCharacteristicDefinition(uuid: loggerStream, properties: [.notify]),
                GATTCharacteristicDefinition(uuid: loggerKey, properties: [.read], value: Array("logger-key".utf8),
                                             permissions: [.read, .encrypted]),
            ]),
        ])
    }

    public static let loggerConfigLength = 500
    public static let loggerService = BluetoothUUID(high: 0xA0E6_F000_0B11_4A2A, low: 0x9C57_6F3F_1C0D_E000)
    public static let loggerLog = BluetoothUUID(high: 0xA0E6_F001_0B11_4A2A, low: 0x9C57_6F3F_1C0D_E000)
    public static let loggerConfig = BluetoothUUID(high: 0xA0E6_F002_0B11_4A2A, low: 0x9C57_6F3F_1C0D_E000)
    public static let loggerStream = BluetoothUUID(high: 0xA0E6_F003_0B11_4A2A, low: 0x9C57_6F3F_1C0D_E000)
    public static let loggerKey = BluetoothUUID(high: 0xA0E6_F004_0B11_4A2A, low: 0x9C57_6F3F_1C0D_E000)
}
