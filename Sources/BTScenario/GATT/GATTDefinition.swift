import BTWire

/// Who may read or write an attribute, and under which security (Core Vol 3 Part F §3.2.5).
public struct AttributePermissions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = AttributePermissions(rawValue: 0x01)
    public static let write = AttributePermissions(rawValue: 0x02)
    /// Access needs an encrypted link; without one the server answers Insufficient Authentication.
    public static let encrypted = AttributePermissions(rawValue: 0x04)

    /// What the properties imply: readable if `.read`, writable if either write property is set.
    public static func from(_ properties: CharacteristicProperties) -> AttributePermissions {
        var p: AttributePermissions = []
        if properties.contains(.read) { p.insert(.read) }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse]) { p.insert(.write) }
        return p
    }
}

/// A descriptor in a service definition.
public struct GATTDescriptorDefinition: Sendable {
    public var uuid: BluetoothUUID
    public var value: [UInt8]
    public var permissions: AttributePermissions

    public init(uuid: BluetoothUUID, value: [UInt8], permissions: AttributePermissions = .read) {
        self.uuid = uuid
        self.value = value
        self.permissions = permissions
    }

    /// Characteristic User Description (0x2901).
    public static func userDescription(_ text: String) -> GATTDescriptorDefinition {
        GATTDescriptorDefinition(uuid: GATTUUID.userDescription, value: Array(text.utf8))
    }
}

/// A characteristic in a service definition. A CCCD is added automatically when it can notify or indicate.
public struct GATTCharacteristicDefinition: Sendable {
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public var value: [UInt8]
    public var permissions: AttributePermissions
    public var descriptors: [GATTDescriptorDefinition]

    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, value: [UInt8] = [],
                permissions: AttributePermissions? = nil, descriptors: [GATTDescriptorDefinition] = []) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.permissions = permissions ?? AttributePermissions.from(properties)
        self.descriptors = descriptors
    }

    public init(_ uuid16: UInt16, _ properties: CharacteristicProperties, value: [UInt8] = [],
                permissions: AttributePermissions? = nil, descriptors: [GATTDescriptorDefinition] = []) {
        self.init(uuid: BluetoothUUID(uuid16: uuid16), properties: properties, value: value,
                  permissions: permissions, descriptors: descriptors)
    }

    var hasCCCD: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }
}

/// A service in a database definition.
public struct GATTServiceDefinition: Sendable {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    public var characteristics: [GATTCharacteristicDefinition]

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, _ characteristics: [GATTCharacteristicDefinition]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }

    public init(_ uuid16: UInt16, _ characteristics: [GATTCharacteristicDefinition]) {
        self.init(uuid: BluetoothUUID(uuid16: uuid16), characteristics)
    }
}

/// GATT declaration and descriptor types, and the SIG services and characteristics the sample devices use
/// (Bluetooth Assigned Numbers §3.4–3.8).
public enum GATTUUID {
    public static let primaryService = BluetoothUUID.primaryService
    public static let secondaryService = BluetoothUUID.secondaryService
    public static let characteristic = BluetoothUUID.characteristic
    public static let cccd = BluetoothUUID.clientCharacteristicConfiguration
    public static let userDescription = BluetoothUUID(uuid16: 0x2901)

    public static let genericAccess: UInt16 = 0x1800
    public static let genericAttribute: UInt16 = 0x1801
    public static let deviceInformation: UInt16 = 0x180A
    public static let heartRate: UInt16 = 0x180D
    public static let battery: UInt16 = 0x180F

    public static let deviceName: UInt16 = 0x2A00
    public static let appearance: UInt16 = 0x2A01
    public static let peripheralPreferredConnectionParameters: UInt16 = 0x2A04
    public static let serviceChanged: UInt16 = 0x2A05
    public static let batteryLevel: UInt16 = 0x2A19
    public static let modelNumber: UInt16 = 0x2A24
    public static let serialNumber: UInt16 = 0x2A25
    public static let firmwareRevision: UInt16 = 0x2A26
    public static let manufacturerName: UInt16 = 0x2A29
    public static let heartRateMeasurement: UInt16 = 0x2A37
    public static let bodySensorLocation: UInt16 = 0x2A38
    public static let heartRateControlPoint: UInt16 = 0x2A39
    public static let clientSupportedFeatures: UInt16 = 0x2B29
    public static let databaseHash: UInt16 = 0x2B2A
}
