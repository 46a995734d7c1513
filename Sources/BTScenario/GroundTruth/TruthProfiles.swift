import BTWire

/// The GATT databases of ground-truth peripherals. Each peer gets its own layout: which services it has, in
/// which order, how many characteristics GAP and the vendor service carry — so the handles differ from seed to
/// seed and from peer to peer.
enum TruthProfiles {
    enum Service: CaseIterable {
        /// Environmental Sensing 0x181A: Temperature 0x2A6E and Humidity 0x2A6F (read + notify), Pressure
        /// 0x2A6D (read only).
        case environmental
        /// Battery 0x180F: Battery Level (read + notify).
        case battery
        /// Device Information 0x180A: read-only strings.
        case deviceInformation
        /// Heart Rate 0x180D: Measurement (notify), Body Sensor Location (read), Control Point (write).
        case heartRate
        /// A vendor service: Status (read + notify), Config (read/write), Command (write only), Secret (read, encrypted
        /// link required), and 0–3 read-only padding characteristics.
        case vendor
        /// Health Thermometer 0x1809: Temperature Measurement (indicate), Measurement Interval (read).
        case thermometer

        var uuid: BluetoothUUID {
            switch self {
            case .environmental: BluetoothUUID(uuid16: 0x181A)
            case .battery: BluetoothUUID(uuid16: GATTUUID.battery)
            case .deviceInformation: BluetoothUUID(uuid16: GATTUUID.deviceInformation)
            case .heartRate: BluetoothUUID(uuid16: GATTUUID.heartRate)
            case .vendor: TruthProfiles.vendorService
            case .thermometer: BluetoothUUID(uuid16: 0x1809)
            }
        }
    }

    static let temperature = BluetoothUUID(uuid16: 0x2A6E)
    static let humidity = BluetoothUUID(uuid16: 0x2A6F)
    static let pressure = BluetoothUUID(uuid16: 0x2A6D)
    static let batteryLevel = BluetoothUUID(uuid16: GATTUUID.batteryLevel)
    static let bodySensorLocation = BluetoothUUID(uuid16: GATTUUID.bodySensorLocation)
    static let heartRateMeasurement = BluetoothUUID(uuid16: GATTUUID.heartRateMeasurement)
    static let manufacturerName = BluetoothUUID(uuid16: GATTUUID.manufacturerName)
    static let temperatureMeasurement = BluetoothUUID(uuid16: 0x2A1C)
    static let measurementInterval = BluetoothUUID(uuid16: 0x2A21)

    static let vendorService = vendor(0x0001)
    static let vendorStatus = vendor(0x0002)
    static let vendorConfig = vendor(0x0003)
    static let vendorCommand = vendor(0x0004)
    static let vendorSecret = vendor(0x0005)
    static func vendor(_ n: UInt32) -> BluetoothUUID {
        BluetoothUUID(high: 0x7A11_0000_5EED_4C1E | UInt64(n) << 32, low: 0x8B3A_2F6D_1C0E_9A44)
    }

    /// A plausible new value for a characteristic of `type` (a sensor reading), as its format encodes it.
    static func reading(_ b: TruthBuilder, _ type: BluetoothUUID) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { ByteWriter.build { $0.u16(UInt16(truncatingIfNeeded: v)) } }
        switch type {
        case temperature: return u16(b.int(1800...2600))  // 0.01 °C
        case humidity: return u16(b.int(3000...7000))  // 0.01 %
        case pressure: return ByteWriter.build { $0.u32(UInt32(b.int(995_000...1_030_000))) }  // 0.1 Pa
        case batteryLevel: return [UInt8(b.int(20...100))]
        case heartRateMeasurement: return [0x00, UInt8(b.int(58...95))]
        case temperatureMeasurement:
            // Flags (Celsius), then an IEEE 11073 FLOAT: a 24-bit mantissa in tenths (exponent −1).
            let tenths = b.int(360...380)
            return [0x00, UInt8(tenths & 0xFF), UInt8(tenths >> 8), 0x00, 0xFF]
        default: return b.s.rng.bytes(2)
        }
    }

    /// A database with GAP, sometimes GATT, the services asked for and `extras` more, in a random order.
    static func database(_ b: TruthBuilder, name: String, services: [Service], extras: Int = 0) -> GATTDatabase {
        var chosen = services
        for s in b.shuffled(Service.allCases.filter { !services.contains($0) }).prefix(extras) { chosen.append(s) }
        var definitions = [gap(b, name: name)]
        if b.chance(70) { definitions.append(SampleProfiles.gatt) }
        for s in b.shuffled(chosen) { definitions.append(definition(s, b)) }
        return GATTDatabase(definitions)
    }

    static func gap(_ b: TruthBuilder, name: String) -> GATTServiceDefinition {
        var characteristics = [
            GATTCharacteristicDefinition(GATTUUID.deviceName, .read, value: Array(name.utf8)),
            GATTCharacteristicDefinition(GATTUUID.appearance, .read, value: ByteWriter.build { $0.u16(SampleProfiles.sensorAppearance) }),
        ]
        if b.chance(50) {
            characteristics.append(GATTCharacteristicDefinition(GATTUUID.peripheralPreferredConnectionParameters, .read,
                                                                value: [0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]))
        }
        return GATTServiceDefinition(GATTUUID.genericAccess, characteristics)
    }

    static func definition(_ service: Service, _ b: TruthBuilder) -> GATTServiceDefinition {
        func u16(_ v: Int) -> [UInt8] { ByteWriter.build { $0.u16(UInt16(truncatingIfNeeded: v)) } }
        switch service {
        case .environmental:
            var characteristics = [
                GATTCharacteristicDefinition(uuid: temperature, properties: [.read, .notify], value: u16(b.int(1500...2800))),
                GATTCharacteristicDefinition(uuid: humidity, properties: [.read, .notify], value: u16(b.int(3000...7000))),
                GATTCharacteristicDefinition(uuid: pressure, properties: [.read], value: [0x20, 0x6E, 0x0F, 0x00]),
            ]
            if b.chance(50) { characteristics.swapAt(0, 1) }
            return GATTServiceDefinition(uuid: service.uuid, characteristics)
        case .battery:
            return SampleProfiles.battery(level: UInt8(b.int(20...100)))
        case .deviceInformation:
            return SampleProfiles.deviceInformation(manufacturer: b.pick(["Acme", "Nordic Things", "Sensorium"]),
                                                    model: "GT-\(b.int(1...99))", firmware: "\(b.int(1...4)).\(b.int(0...9))")
        case .heartRate:
            return GATTServiceDefinition(GATTUUID.heartRate, [
                GATTCharacteristicDefinition(GATTUUID.heartRateMeasurement, .notify, value: [SampleProfiles.heartRateFlags, 70]),
                GATTCharacteristicDefinition(GATTUUID.bodySensorLocation, .read, value: [SampleProfiles.chest]),
                GATTCharacteristicDefinition(GATTUUID.heartRateControlPoint, .write),
            ])
        case .vendor:
            var characteristics = [
                GATTCharacteristicDefinition(uuid: vendorStatus, properties: [.read, .notify], value: [0x00, 0x01]),
                GATTCharacteristicDefinition(uuid: vendorConfig, properties: [.read, .write], value: [0x01, 0x3C, 0x00]),
                GATTCharacteristicDefinition(uuid: vendorCommand, properties: [.write]),
                GATTCharacteristicDefinition(uuid: vendorSecret, properties: [.read], value: Array("k3y".utf8),
                                             permissions: [.read, .encrypted]),
            ]
            for i in 0..<b.int(0...3) {
                characteristics.insert(GATTCharacteristicDefinition(uuid: vendor(0x0100 + UInt32(i)), properties: [.read],
                                                                    value: b.s.rng.bytes(4)),
                                       at: b.int(0...characteristics.count))
            }
            return GATTServiceDefinition(uuid: service.uuid, characteristics)
        case .thermometer:
            return GATTServiceDefinition(uuid: service.uuid, [
                GATTCharacteristicDefinition(uuid: temperatureMeasurement, properties: [.indicate], value: [0x00, 0x6E, 0x0E, 0x00, 0xFE]),
                GATTCharacteristicDefinition(uuid: measurementInterval, properties: [.read], value: [0x3C, 0x00]),
            ])
        }
    }
}

/// A peripheral of a ground-truth episode: its address and server. One per episode, so nothing links episodes.
struct TruthPeripheral {
    let peer: PeerAddress
    let database: GATTDatabase

    init(_ b: TruthBuilder, services: [TruthProfiles.Service], extras: Int = 0) {
        peer = b.newPeer()
        database = TruthProfiles.database(b, name: "GT \(String(peer.address.rawValue & 0xFFFF, radix: 16))",
                                          services: services, extras: extras)
    }

    /// A fresh server (values as the database starts).
    func server() -> GATTServer { GATTServer(database: database, rxMTU: 247) }

    func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristicLayout {
        guard let c = database.characteristic(uuid: uuid) else { preconditionFailure("no characteristic \(uuid)") }
        return c
    }

    func service(_ s: TruthProfiles.Service) -> GATTServiceLayout {
        guard let l = database.service(uuid: s.uuid) else { preconditionFailure("no service \(s)") }
        return l
    }

    /// Application services (not GAP or GATT), in handle order.
    var appServices: [GATTServiceLayout] {
        database.services.filter {
            $0.uuid != BluetoothUUID(uuid16: GATTUUID.genericAccess) && $0.uuid != BluetoothUUID(uuid16: GATTUUID.genericAttribute)
        }
    }

    /// A characteristic of `service` to read once to use it: a readable one that can neither notify nor indicate,
    /// not needing encryption.
    func readOnce(in service: GATTServiceLayout) -> GATTCharacteristicLayout? {
        let inside = database.characteristics.filter { $0.valueHandle > service.startHandle && $0.valueHandle <= service.endHandle }
        return inside.first { c in
            c.properties.contains(.read) && c.properties.isDisjoint(with: [.notify, .indicate])
                && !(database.attribute(c.valueHandle)?.permissions.contains(.encrypted) ?? true)
        }
    }
}

extension ATTChannel {
    /// The service of this UUID, found with Discover Primary Service by Service UUID.
    func find(_ service: TruthProfiles.Service) -> DiscoveredService? { discoverPrimaryServices(uuid: service.uuid).first }
}
