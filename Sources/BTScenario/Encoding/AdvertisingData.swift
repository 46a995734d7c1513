import BTWire

/// One advertising data structure (Core Supplement Part A §1): `len u8, type u8, data`.
public enum ADStructure: Sendable {
    case flags(UInt8)
    case completeName(String)
    case shortName(String)
    case uuid16([UInt16], complete: Bool)
    case uuid128([BluetoothUUID], complete: Bool)
    case manufacturer(company: CompanyID, data: [UInt8])
    /// Apple iBeacon: proximity UUID in text order, major and minor big-endian, power = RSSI at 1 m.
    case iBeacon(uuid: BluetoothUUID, major: UInt16, minor: UInt16, measuredPower: Int8)
    case txPower(Int8)
    case serviceData16(uuid: UInt16, data: [UInt8])
    case appearance(UInt16)
    case raw(type: ADType, data: [UInt8])

    /// iBeacon's Apple-defined type and length bytes, after the company ID.
    public static let iBeaconType: UInt8 = 0x02
    public static let iBeaconLength: UInt8 = 0x15

    /// An AD structure's length byte counts the type and data, so at most 254 data bytes fit.
    public static let maximumStructureLength = 255

    /// Writes `len, type, data`; data beyond what the length byte can count is dropped rather than
    /// wrapping the length.
    func write(to w: inout ByteWriter) {
        let body = ByteWriter.build { w in
            switch self {
            case .flags(let f):
                w.u8(ADType.flags.rawValue)
                w.u8(f)
            case .completeName(let n):
                w.u8(ADType.completeLocalName.rawValue)
                w.append(Array(n.utf8))
            case .shortName(let n):
                w.u8(ADType.shortenedLocalName.rawValue)
                w.append(Array(n.utf8))
            case .uuid16(let list, let complete):
                w.u8((complete ? ADType.completeUUID16 : ADType.incompleteUUID16).rawValue)
                for u in list { w.u16(u) }
            case .uuid128(let list, let complete):
                w.u8((complete ? ADType.completeUUID128 : ADType.incompleteUUID128).rawValue)
                for u in list { w.uuid128(u) }
            case .manufacturer(let company, let data):
                w.u8(ADType.manufacturerSpecificData.rawValue)
                w.u16(company.rawValue)
                w.append(data)
            case .iBeacon(let uuid, let major, let minor, let power):
                w.u8(ADType.manufacturerSpecificData.rawValue)
                w.u16(CompanyID.apple.rawValue)
                w.u8(Self.iBeaconType)
                w.u8(Self.iBeaconLength)
                w.uuid128BigEndian(uuid)
                w.u16BE(major)
                w.u16BE(minor)
                w.i8(power)
            case .txPower(let p):
                w.u8(ADType.txPowerLevel.rawValue)
                w.i8(p)
            case .serviceData16(let uuid, let data):
                w.u8(ADType.serviceDataUUID16.rawValue)
                w.u16(uuid)
                w.append(data)
            case .appearance(let a):
                w.u8(ADType.appearance.rawValue)
                w.u16(a)
            case .raw(let type, let data):
                w.u8(type.rawValue)
                w.append(data)
            }
        }
        let kept = body.prefix(Self.maximumStructureLength)
        w.u8(UInt8(kept.count))
        w.append(kept)
    }

    /// The byte offsets where each structure of `data` ends (for splitting long data between reports).
    static func boundaries(_ data: [UInt8]) -> [Int] {
        var ends: [Int] = []
        var i = 0
        while i < data.count {
            let length = Int(data[i])
            if length == 0 { break }
            i += 1 + length
            ends.append(min(i, data.count))
        }
        return ends
    }
}

/// Advertising or scan response data: a list of structures and their bytes.
public struct AdvertisingData: Sendable {
    public var structures: [ADStructure]
    public let bytes: [UInt8]

    public init(_ structures: [ADStructure]) {
        self.structures = structures
        self.bytes = ByteWriter.build { w in
            for s in structures { s.write(to: &w) }
        }
    }

    public static let empty = AdvertisingData([])

    /// Flags a connectable LE-only peripheral advertises: LE General Discoverable, BR/EDR not supported.
    public static let generalDiscoverableLEOnly: UInt8 = ADFlags.leGeneralDiscoverable | ADFlags.brEdrNotSupported
}

/// AD Flags bits (Core Supplement Part A §1.3).
public enum ADFlags {
    public static let leLimitedDiscoverable: UInt8 = 0x01
    public static let leGeneralDiscoverable: UInt8 = 0x02
    public static let brEdrNotSupported: UInt8 = 0x04
}

/// Company identifiers used by the sample advertisers (Bluetooth Assigned Numbers, company identifiers).
public enum SampleCompany {
    public static let microsoft = CompanyID(rawValue: 0x0006)
    public static let nordic = CompanyID(rawValue: 0x0059)
    public static let garmin = CompanyID(rawValue: 0x0087)
    public static let samsung = CompanyID(rawValue: 0x0075)
    public static let google = CompanyID(rawValue: 0x00E0)
}
