/// Advertising and scan-response data types (Bluetooth Assigned Numbers §2.3, Core Supplement Part A).
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public static var flags: ADType { ADType(rawValue: 0x01) }
    @inlinable public static var incompleteUUID16: ADType { ADType(rawValue: 0x02) }
    @inlinable public static var completeUUID16: ADType { ADType(rawValue: 0x03) }
    @inlinable public static var incompleteUUID32: ADType { ADType(rawValue: 0x04) }
    @inlinable public static var completeUUID32: ADType { ADType(rawValue: 0x05) }
    @inlinable public static var incompleteUUID128: ADType { ADType(rawValue: 0x06) }
    @inlinable public static var completeUUID128: ADType { ADType(rawValue: 0x07) }
    @inlinable public static var shortenedLocalName: ADType { ADType(rawValue: 0x08) }
    @inlinable public static var completeLocalName: ADType { ADType(rawValue: 0x09) }
    @inlinable public static var txPowerLevel: ADType { ADType(rawValue: 0x0A) }
    @inlinable public static var solicitationUUID16: ADType { ADType(rawValue: 0x14) }
    @inlinable public static var solicitationUUID128: ADType { ADType(rawValue: 0x15) }
    @inlinable public static var serviceDataUUID16: ADType { ADType(rawValue: 0x16) }
    @inlinable public static var appearance: ADType { ADType(rawValue: 0x19) }
    @inlinable public static var advertisingInterval: ADType { ADType(rawValue: 0x1A) }
    @inlinable public static var solicitationUUID32: ADType { ADType(rawValue: 0x1F) }
    @inlinable public static var serviceDataUUID32: ADType { ADType(rawValue: 0x20) }
    @inlinable public static var serviceDataUUID128: ADType { ADType(rawValue: 0x21) }
    @inlinable public static var uri: ADType { ADType(rawValue: 0x24) }
    @inlinable public static var manufacturerSpecificData: ADType { ADType(rawValue: 0xFF) }

    /// Service Solicitation UUIDs: services the device wants a peer to offer, not services it has.
    @inlinable public var isSolicitation: Bool {
        self == .solicitationUUID16 || self == .solicitationUUID32 || self == .solicitationUUID128
    }

    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? "AD " + Hex.u8(rawValue) }

    static let names: [UInt8: String] = [
        0x01: "Flags", 0x02: "Incomplete List of 16-bit Service UUIDs",
        0x03: "Complete List of 16-bit Service UUIDs", 0x04: "Incomplete List of 32-bit Service UUIDs",
        0x05: "Complete List of 32-bit Service UUIDs", 0x06: "Incomplete List of 128-bit Service UUIDs",
        0x07: "Complete List of 128-bit Service UUIDs", 0x08: "Shortened Local Name", 0x09: "Complete Local Name",
        0x0A: "TX Power Level", 0x0D: "Class of Device", 0x0E: "Simple Pairing Hash C-192",
        0x0F: "Simple Pairing Randomizer R-192", 0x10: "Device ID", 0x11: "Security Manager OOB Flags",
        0x12: "Peripheral Connection Interval Range", 0x14: "List of 16-bit Service Solicitation UUIDs",
        0x15: "List of 128-bit Service Solicitation UUIDs", 0x16: "Service Data - 16-bit UUID",
        0x17: "Public Target Address", 0x18: "Random Target Address", 0x19: "Appearance",
        0x1A: "Advertising Interval", 0x1B: "LE Bluetooth Device Address", 0x1C: "LE Role",
        0x1D: "Simple Pairing Hash C-256", 0x1E: "Simple Pairing Randomizer R-256",
        0x1F: "List of 32-bit Service Solicitation UUIDs", 0x20: "Service Data - 32-bit UUID",
        0x21: "Service Data - 128-bit UUID", 0x22: "LE Secure Connections Confirmation Value",
        0x23: "LE Secure Connections Random Value", 0x24: "URI", 0x25: "Indoor Positioning",
        0x26: "Transport Discovery Data", 0x27: "LE Supported Features", 0x28: "Channel Map Update Indication",
        0x29: "PB-ADV", 0x2A: "Mesh Message", 0x2B: "Mesh Beacon", 0x2C: "BIGInfo", 0x2D: "Broadcast_Code",
        0x2E: "Resolvable Set Identifier", 0x2F: "Advertising Interval - long", 0x30: "Broadcast Name",
        0x31: "Encrypted Advertising Data", 0x32: "Periodic Advertising Response Timing Information",
        0x34: "Electronic Shelf Label", 0x3D: "3D Information Data", 0xFF: "Manufacturer Specific Data",
    ]
}

/// A Bluetooth SIG company identifier (manufacturer data, INDEX_INFO, Read Local Version).
public struct CompanyID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public static var apple: CompanyID { CompanyID(rawValue: 0x004C) }

    public var name: String? { AssignedNumbers.companyName(rawValue) }
    public var description: String { (name ?? "Company") + " (" + Hex.u16(rawValue) + ")" }
}
