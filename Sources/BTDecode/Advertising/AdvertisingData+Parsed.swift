import BTWire

/// Typed values of the common AD types. These copy what they return (they are `Sendable` values a tracker can
/// keep) and are meant for describing and device tables, not for walking every report.
extension AdvertisingDataView {
    /// The Flags byte (type 0x01; Core Supplement Part A §1.3).
    public struct Flags: OptionSet, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let leLimitedDiscoverable = Flags(rawValue: 0x01)
        public static let leGeneralDiscoverable = Flags(rawValue: 0x02)
        public static let brEdrNotSupported = Flags(rawValue: 0x04)
        public static let simultaneousLEBrEdrController = Flags(rawValue: 0x08)
        public static let simultaneousLEBrEdrHost = Flags(rawValue: 0x10)

        static let labels: [(Flags, String)] = [
            (.leLimitedDiscoverable, "le-limited"), (.leGeneralDiscoverable, "le-general"),
            (.brEdrNotSupported, "no-br/edr"), (.simultaneousLEBrEdrController, "le+br/edr-controller"),
            (.simultaneousLEBrEdrHost, "le+br/edr-host"),
        ]

        /// `le-general,no-br/edr`, or `none`.
        public var description: String {
            var parts = Self.labels.filter { contains($0.0) }.map(\.1)
            if rawValue & 0xE0 != 0 { parts.append("reserved " + Hex.u8(rawValue & 0xE0)) }
            return parts.isEmpty ? "none" : parts.joined(separator: ",")
        }
    }

    /// Service Data (types 0x16, 0x20, 0x21): the service's UUID and its data.
    public struct ServiceData: Hashable, Sendable {
        public var uuid: BluetoothUUID
        public var data: [UInt8]

        public init(uuid: BluetoothUUID, data: [UInt8]) {
            self.uuid = uuid
            self.data = data
        }
    }

    /// Manufacturer Specific Data (type 0xFF): the company and the bytes after its identifier.
    public struct ManufacturerData: Hashable, Sendable {
        public var company: CompanyID
        public var data: [UInt8]

        public init(company: CompanyID, data: [UInt8]) {
            self.company = company
            self.data = data
        }
    }

    public var flags: Flags? {
        guard let d = first(.flags), !d.isEmpty else { return nil }
        return Flags(rawValue: d[0])
    }

    /// The Complete Local Name, else the Shortened one. Invalid UTF-8 is replaced (U+FFFD), never dropped.
    public var localName: String? { completeLocalName ?? shortenedLocalName }

    /// Type 0x09.
    public var completeLocalName: String? {
        first(.completeLocalName).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Type 0x08: a prefix of the full name.
    public var shortenedLocalName: String? {
        first(.shortenedLocalName).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The advertised service UUIDs of every list (16-, 32- and 128-bit, complete or incomplete), in order.
    public var serviceUUIDs: [BluetoothUUID] {
        uuids(in: [.incompleteUUID16, .completeUUID16, .incompleteUUID32, .completeUUID32, .incompleteUUID128,
                   .completeUUID128])
    }

    /// Whether a service UUID list is marked complete (types 0x03, 0x05, 0x07).
    public var hasCompleteServiceUUIDList: Bool {
        contains { $0.type == .completeUUID16 || $0.type == .completeUUID32 || $0.type == .completeUUID128 }
    }

    /// Service Solicitation UUIDs (types 0x14, 0x1F, 0x15): services the device wants a peer to offer.
    public var solicitedServiceUUIDs: [BluetoothUUID] {
        uuids(in: [.solicitationUUID16, .solicitationUUID32, .solicitationUUID128])
    }

    public var serviceData: [ServiceData] {
        compactMap { s in s.serviceData.map { ServiceData(uuid: $0.uuid, data: Array($0.data)) } }
    }

    public var manufacturerData: [ManufacturerData] {
        compactMap { s in s.manufacturerData.map { ManufacturerData(company: $0.company, data: Array($0.data)) } }
    }

    /// TX Power Level (type 0x0A), dBm.
    public var txPowerLevel: Int8? {
        guard let d = first(.txPowerLevel), !d.isEmpty else { return nil }
        return Int8(bitPattern: d[0])
    }

    /// Appearance (type 0x19): category (bits 6–15) and subcategory (bits 0–5).
    public var appearance: UInt16? {
        guard let d = first(.appearance), d.count >= 2 else { return nil }
        return UInt16(d[0]) | UInt16(d[1]) << 8
    }

    /// The first iBeacon frame in the manufacturer data.
    public var iBeacon: IBeacon? {
        for s in self where s.type == .manufacturerSpecificData {
            if let beacon = IBeacon(manufacturerSpecificData: s.data) { return beacon }
        }
        return nil
    }

    func uuids(in types: [ADType]) -> [BluetoothUUID] {
        var out: [BluetoothUUID] = []
        for s in self where types.contains(s.type) {
            out += s.uuids
        }
        return out
    }
}
