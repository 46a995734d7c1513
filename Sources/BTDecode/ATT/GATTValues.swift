import BTWire

/// The value of a characteristic declaration attribute (type 0x2803; Core Vol 3 Part G §3.3.1): properties,
/// the handle of the characteristic value, and its UUID. GATT discovery reads these with Read By Type.
public struct CharacteristicDeclaration: Hashable, Sendable, CustomStringConvertible {
    public var properties: CharacteristicProperties
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID

    public init(properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }

    /// Parses `props u8, value handle u16, uuid` (2 or 16 bytes), so the value is 5 or 19 bytes; nil otherwise.
    public init?(_ value: UnsafeRawBufferPointer) {
        guard value.count == 5 || value.count == 19,
            let uuid = BluetoothUUID(littleEndianBytes: UnsafeRawBufferPointer(rebasing: value[3...]))
        else { return nil }
        self.init(properties: CharacteristicProperties(rawValue: value[0]),
                  valueHandle: UInt16(value[1]) | UInt16(value[2]) << 8, uuid: uuid)
    }

    /// `Heart Rate Measurement (2a37) value 0x0012 props notify`.
    public var description: String {
        PDUFieldText.uuid(uuid) + " value " + Hex.u16(valueHandle) + " props " +
            (properties.rawValue == 0 ? "none" : properties.description)
    }

    var fields: [DecodedField] {
        [
            DecodedField("Properties", Hex.u8(properties.rawValue) + (properties.rawValue == 0 ? "" : " " + properties.description)),
            DecodedField("Value Handle", Hex.u16(valueHandle)),
            DecodedField("UUID", PDUFieldText.uuid(uuid)),
        ]
    }
}

/// The value of a Client Characteristic Configuration descriptor (0x2902; Core Vol 3 Part G §3.3.3.3): a u16
/// whose bit 0 enables notifications and bit 1 indications. Clients subscribe by writing `01 00` (notify),
/// `02 00` (indicate) or `00 00` (off).
public struct ClientCharacteristicConfiguration: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notification = ClientCharacteristicConfiguration(rawValue: 0x0001)
    public static let indication = ClientCharacteristicConfiguration(rawValue: 0x0002)
    public static let off: ClientCharacteristicConfiguration = []

    /// Parses a written or read CCCD value; nil unless it is exactly 2 bytes.
    public init?(_ value: UnsafeRawBufferPointer) {
        guard value.count == 2 else { return nil }
        self.init(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)
    }

    /// Bits other than notification and indication, which are reserved.
    public var reservedBits: UInt16 { rawValue & ~0x0003 }

    /// `notify`, `indicate`, `notify,indicate` or `off`; reserved bits are appended as hex.
    public var description: String {
        var parts: [String] = []
        if contains(.notification) { parts.append("notify") }
        if contains(.indication) { parts.append("indicate") }
        if reservedBits != 0 { parts.append("reserved " + Hex.u16(reservedBits)) }
        return parts.isEmpty ? "off" : parts.joined(separator: ",")
    }
}
