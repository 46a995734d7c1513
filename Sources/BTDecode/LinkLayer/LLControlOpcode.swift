import BTWire

/// An LL control PDU opcode [Core Vol 6 Part B §2.4.2]. Open: ciphertext read as plaintext, fuzzers and later
/// spec versions produce values btlens does not name.
public struct LLControlOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionUpdateInd = LLControlOpcode(rawValue: 0x00)
    public static let channelMapInd = LLControlOpcode(rawValue: 0x01)
    public static let terminateInd = LLControlOpcode(rawValue: 0x02)
    public static let encReq = LLControlOpcode(rawValue: 0x03)
    public static let encRsp = LLControlOpcode(rawValue: 0x04)
    public static let startEncReq = LLControlOpcode(rawValue: 0x05)
    public static let startEncRsp = LLControlOpcode(rawValue: 0x06)
    public static let unknownRsp = LLControlOpcode(rawValue: 0x07)
    public static let featureReq = LLControlOpcode(rawValue: 0x08)
    public static let featureRsp = LLControlOpcode(rawValue: 0x09)
    public static let pauseEncReq = LLControlOpcode(rawValue: 0x0A)
    public static let pauseEncRsp = LLControlOpcode(rawValue: 0x0B)
    public static let versionInd = LLControlOpcode(rawValue: 0x0C)
    public static let rejectInd = LLControlOpcode(rawValue: 0x0D)
    public static let peripheralFeatureReq = LLControlOpcode(rawValue: 0x0E)
    public static let connectionParamReq = LLControlOpcode(rawValue: 0x0F)
    public static let connectionParamRsp = LLControlOpcode(rawValue: 0x10)
    public static let rejectExtInd = LLControlOpcode(rawValue: 0x11)
    public static let pingReq = LLControlOpcode(rawValue: 0x12)
    public static let pingRsp = LLControlOpcode(rawValue: 0x13)
    public static let lengthReq = LLControlOpcode(rawValue: 0x14)
    public static let lengthRsp = LLControlOpcode(rawValue: 0x15)
    public static let phyReq = LLControlOpcode(rawValue: 0x16)
    public static let phyRsp = LLControlOpcode(rawValue: 0x17)
    public static let phyUpdateInd = LLControlOpcode(rawValue: 0x18)
    public static let minUsedChannelsInd = LLControlOpcode(rawValue: 0x19)
    public static let cteReq = LLControlOpcode(rawValue: 0x1A)
    public static let cteRsp = LLControlOpcode(rawValue: 0x1B)
    public static let periodicSyncInd = LLControlOpcode(rawValue: 0x1C)
    public static let clockAccuracyReq = LLControlOpcode(rawValue: 0x1D)
    public static let clockAccuracyRsp = LLControlOpcode(rawValue: 0x1E)

    public var name: String? { Int(rawValue) < Self.table.count ? Self.table[Int(rawValue)].name : nil }
    public var description: String { name ?? "LL Unknown Control Opcode " + Hex.u8(rawValue) }

    /// CtrData bytes the opcode needs at least (its Core 5.4 length; longer is accepted, as later versions
    /// may extend a PDU), nil when unknown.
    public var minimumDataLength: Int? { Int(rawValue) < Self.table.count ? Self.table[Int(rawValue)].length : nil }

    /// Name and CtrData length by opcode, 0x00–0x3C [Core Vol 6 Part B §2.4.2; Core 6.0 for 0x2D–0x3C].
    static let table: [(name: String, length: Int)] = [
        ("LL_CONNECTION_UPDATE_IND", 11), ("LL_CHANNEL_MAP_IND", 7), ("LL_TERMINATE_IND", 1),
        ("LL_ENC_REQ", 22), ("LL_ENC_RSP", 12), ("LL_START_ENC_REQ", 0), ("LL_START_ENC_RSP", 0),
        ("LL_UNKNOWN_RSP", 1), ("LL_FEATURE_REQ", 8), ("LL_FEATURE_RSP", 8), ("LL_PAUSE_ENC_REQ", 0),
        ("LL_PAUSE_ENC_RSP", 0), ("LL_VERSION_IND", 5), ("LL_REJECT_IND", 1), ("LL_PERIPHERAL_FEATURE_REQ", 8),
        ("LL_CONNECTION_PARAM_REQ", 23), ("LL_CONNECTION_PARAM_RSP", 23), ("LL_REJECT_EXT_IND", 2),
        ("LL_PING_REQ", 0), ("LL_PING_RSP", 0), ("LL_LENGTH_REQ", 8), ("LL_LENGTH_RSP", 8), ("LL_PHY_REQ", 2),
        ("LL_PHY_RSP", 2), ("LL_PHY_UPDATE_IND", 4), ("LL_MIN_USED_CHANNELS_IND", 2), ("LL_CTE_REQ", 1),
        ("LL_CTE_RSP", 0), ("LL_PERIODIC_SYNC_IND", 34), ("LL_CLOCK_ACCURACY_REQ", 1), ("LL_CLOCK_ACCURACY_RSP", 1),
        ("LL_CIS_REQ", 35), ("LL_CIS_RSP", 8), ("LL_CIS_IND", 15), ("LL_CIS_TERMINATE_IND", 3),
        ("LL_POWER_CONTROL_REQ", 3), ("LL_POWER_CONTROL_RSP", 4), ("LL_POWER_CHANGE_IND", 4),
        ("LL_SUBRATE_REQ", 10), ("LL_SUBRATE_IND", 10), ("LL_CHANNEL_REPORTING_IND", 3),
        ("LL_CHANNEL_STATUS_IND", 10), ("LL_PERIODIC_SYNC_WR_IND", 42), ("LL_FEATURE_EXT_REQ", 26),
        ("LL_FEATURE_EXT_RSP", 26), ("LL_CS_SEC_RSP", 0), ("LL_CS_CAPABILITIES_REQ", 0),
        ("LL_CS_CAPABILITIES_RSP", 0), ("LL_CS_CONFIG_REQ", 0), ("LL_CS_CONFIG_RSP", 0), ("LL_CS_REQ", 0),
        ("LL_CS_RSP", 0), ("LL_CS_IND", 0), ("LL_CS_TERMINATE_REQ", 0), ("LL_CS_FAE_REQ", 0), ("LL_CS_FAE_RSP", 0),
        ("LL_CS_CHANNEL_MAP_IND", 0), ("LL_CS_SEC_REQ", 0), ("LL_CS_TERMINATE_RSP", 0), ("LL_FRAME_SPACE_REQ", 0),
        ("LL_FRAME_SPACE_RSP", 0),
    ]
}
