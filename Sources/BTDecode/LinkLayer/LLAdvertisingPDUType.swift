import BTWire

/// An advertising physical channel PDU type (header bits 0–3) [Core Vol 6 Part B §2.3]. Open: reserved values
/// come off the air in CRC-bad or fuzzed packets. Types 3, 5 and 7 have other names on secondary channels.
public struct LLAdvertisingPDUType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let advInd = LLAdvertisingPDUType(rawValue: 0x0)
    public static let advDirectInd = LLAdvertisingPDUType(rawValue: 0x1)
    public static let advNonconnInd = LLAdvertisingPDUType(rawValue: 0x2)
    /// SCAN_REQ, or AUX_SCAN_REQ on a secondary channel.
    public static let scanReq = LLAdvertisingPDUType(rawValue: 0x3)
    public static let scanRsp = LLAdvertisingPDUType(rawValue: 0x4)
    /// CONNECT_IND, or AUX_CONNECT_REQ on a secondary channel.
    public static let connectInd = LLAdvertisingPDUType(rawValue: 0x5)
    public static let advScanInd = LLAdvertisingPDUType(rawValue: 0x6)
    /// ADV_EXT_IND, or on a secondary channel AUX_ADV_IND, AUX_SCAN_RSP, AUX_SYNC_IND, AUX_CHAIN_IND.
    public static let advExtInd = LLAdvertisingPDUType(rawValue: 0x7)
    public static let auxConnectRsp = LLAdvertisingPDUType(rawValue: 0x8)

    static let primaryNames = ["ADV_IND", "ADV_DIRECT_IND", "ADV_NONCONN_IND", "SCAN_REQ", "SCAN_RSP", "CONNECT_IND",
                               "ADV_SCAN_IND", "ADV_EXT_IND", "AUX_CONNECT_RSP"]
    /// Aux types as PHDR and nRF code them (LINKLAYER.md §1.3).
    static let auxiliaryNames = ["AUX_ADV_IND", "AUX_CHAIN_IND", "AUX_SYNC_IND", "AUX_SCAN_RSP"]
    /// Every name `name(secondary:auxiliaryType:)` gives a known type.
    public static let allNames: Set<String> = Set(primaryNames + auxiliaryNames + ["AUX_SCAN_REQ", "AUX_CONNECT_REQ"])

    /// The spec's name; `secondary` (a channel below 37) renames types 3, 5 and 7, `auxiliaryType` picks
    /// type 7's name when the container gives it.
    public func name(secondary: Bool, auxiliaryType: UInt8? = nil) -> String {
        if secondary {
            switch self {
            case .scanReq: return "AUX_SCAN_REQ"
            case .connectInd: return "AUX_CONNECT_REQ"
            case .advExtInd:
                if let aux = auxiliaryType, Int(aux) < Self.auxiliaryNames.count { return Self.auxiliaryNames[Int(aux)] }
                return "AUX_ADV_IND"
            default: break
            }
        }
        return Int(rawValue) < Self.primaryNames.count ? Self.primaryNames[Int(rawValue)] : "Reserved PDU type \(Hex.u8(rawValue))"
    }

    public var description: String { name(secondary: false) }
}
