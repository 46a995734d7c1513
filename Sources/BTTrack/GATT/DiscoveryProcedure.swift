import BTWire
import BTDecode

/// A GATT discovery procedure recognised from its requests (Core Vol 3 Part G §4.4–4.7), e.g. "discover all
/// primary services" = Read By Group Type 0x2800 from 0x0001, repeated from the last end + 1 until
/// Attribute Not Found.
public struct DiscoveryProcedure: Sendable {
    /// The GATT discovery procedure (Core Vol 3 Part G §4.4–4.7).
    public enum Kind: String, Sendable {
        case allPrimaryServices = "all-primary-services"
        case secondaryServices = "secondary-services"
        case primaryServiceByUUID = "primary-service-by-uuid"
        case includedServices = "included-services"
        case characteristics
        case descriptors
    }

    public var kind: Kind
    /// The handle range asked for (first request's start, end).
    public var startHandle: UInt16
    public var endHandle: UInt16
    /// For by-UUID discovery.
    public var uuid: BluetoothUUID?
    public var requests = 0
    /// Entries found (services, characteristics, descriptors).
    public var found = 0
    public var first: RecordRef
    public var last: RecordRef
    /// Ended by Attribute Not Found or by covering the whole range.
    public var completed = false
    /// Records of the requests, to cite (bounded).
    public var records: [RecordRef] = []
    /// Our host asked (it is the GATT client); false when the peer discovered our database.
    public var byHost = true

    /// Whether the procedure spans the whole handle range with no UUID: "undiscriminating".
    public var isFullRange: Bool { startHandle <= 0x0001 && endHandle == 0xFFFF && uuid == nil }

    public var description: String {
        let range = "\(Hex.u16(startHandle))-\(Hex.u16(endHandle))"
        switch kind {
        case .allPrimaryServices: return "all primary services \(range)"
        case .secondaryServices: return "secondary services \(range)"
        case .primaryServiceByUUID: return "primary service \(uuid.map { GATTNames.uuid($0) } ?? "?")"
        case .includedServices: return "included services \(range)"
        case .characteristics: return "characteristics \(range)"
        case .descriptors: return "descriptors \(range)"
        }
    }
}

/// Names for UUIDs: the SIG name with the short form, or the full UUID.
public enum GATTNames {
    public static func uuid(_ u: BluetoothUUID) -> String { named(u, u.name) }

    /// A characteristic's or descriptor's UUID: as `uuid(_:)`, without the names of member service UUIDs.
    public static func attribute(_ u: BluetoothUUID) -> String { named(u, u.attributeName) }

    static func named(_ u: BluetoothUUID, _ name: String?) -> String { name.map { "\($0) (\(u))" } ?? u.description }
}
