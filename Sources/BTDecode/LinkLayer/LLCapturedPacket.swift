import BTWire
import BTCapture

/// Which side sent a data-channel PDU. Named after the roles, not host/controller: on air there is no host.
public enum LLDirection: UInt8, Sendable, CustomStringConvertible {
    case centralToPeripheral
    case peripheralToCentral
    /// The container does not say (linktypes 251, PPI, PHDR PDU type 0) and it was not inferred yet.
    case unknown

    public var opposite: LLDirection {
        switch self {
        case .centralToPeripheral: .peripheralToCentral
        case .peripheralToCentral: .centralToPeripheral
        case .unknown: .unknown
        }
    }

    public var description: String {
        switch self {
        case .centralToPeripheral: "C→P"
        case .peripheralToCentral: "P→C"
        case .unknown: "?"
        }
    }
}

/// What the container says a PDU is. Only a hint: when it says nothing, the access address decides.
public enum LLPDUClass: UInt8, Sendable {
    case unspecified
    /// Advertising physical channel, primary or secondary (auxiliary) [Core Vol 6 Part B §2.3].
    case advertising
    /// Data physical channel of a connection (ACL) [§2.4].
    case data
    /// Connected or broadcast isochronous PDUs (PHDR PDU types 4–6): no L2CAP inside.
    case isochronous
}

/// The PHY a packet was received on (PHDR flags >> 14, nRF flags >> 4).
public enum LLPHY: UInt8, Sendable, CustomStringConvertible {
    case le1M = 0, le2M = 1, coded = 2, unknown = 3

    public var description: String {
        switch self {
        case .le1M: "1M"
        case .le2M: "2M"
        case .coded: "Coded"
        case .unknown: "?"
        }
    }
}

/// The CRC as the sniffer reported it, or as recomputed.
public enum LLCRCStatus: UInt8, Sendable {
    /// Neither the container nor a recomputation says (a data PDU without its connection's CRCInit, or a
    /// record cut short before its CRC).
    case unchecked
    case good
    case bad
}

/// Whether the payload in the file is plaintext, as far as the container says.
public enum LLEncryptionFlag: UInt8, Sendable {
    /// The container has no flag: the decoder follows LL_START_ENC itself.
    case unknown
    /// The container says the link was not encrypted for this PDU.
    case plaintext
    /// Encrypted on air and still ciphertext in the file.
    case encrypted
    /// Encrypted on air, decrypted by the sniffer (nRF 0x04 with MIC OK, PHDR 0x0008): plaintext, MIC removed.
    case decrypted
}

/// One LE link-layer packet out of its container (linktypes 251, 256, 272, PPI): the packet itself (access
/// address, PDU header and payload, CRC) and the metadata the container adds. `pdu` is borrowed from the
/// record and valid until the reader's next call.
public struct LLCapturedPacket {
    public var accessAddress: UInt32
    /// PDU header (2 bytes, 3 with a data PDU's CTEInfo) and payload; shorter than the header's Length when the
    /// capture cut the record.
    public var pdu: UnsafeRawBufferPointer
    /// The CRC as stored (the LE u24 of the last 3 bytes), nil when the record ends before it.
    public var storedCRC: UInt32?
    /// The record ends before the packet's CRC (snap length, or a Length the record does not hold).
    public var isCutShort = false
    /// Channel index 0–39 (37–39 primary advertising), when the container says.
    public var channel: UInt8?
    /// An advertising PDU heard on a secondary channel (0–36), where types 3, 5 and 7 have their AUX_ names.
    /// Set only where the container's channel can be trusted for it (LINKLAYER.md §5: WHAD writes the channel
    /// index into PHDR's RF-channel byte, so there only the auxiliary PDU type counts).
    public var isSecondaryChannel = false
    public var rssi: Int8?
    public var crc: LLCRCStatus = .unchecked
    public var direction: LLDirection = .unknown
    public var pduClass: LLPDUClass = .unspecified
    /// For auxiliary advertising PDUs: PHDR/nRF aux type (0 AUX_ADV_IND, 1 AUX_CHAIN_IND, 2 AUX_SYNC_IND,
    /// 3 AUX_SCAN_RSP) when the container gives it.
    public var auxiliaryType: UInt8?
    public var phy: LLPHY = .unknown
    /// LE Coded only: the coding indicator after the access address (0 S8, 1 S2).
    public var codingIndicator: UInt8?
    public var encryption: LLEncryptionFlag = .unknown
    /// nRF: the connection event counter the sniffer followed (0 on advertising).
    public var eventCounter: UInt16?
    /// The sniffer's own clock, in ticks of `snifferTimeUnitNanoseconds`: nRF v3 firmware time at the packet
    /// start in µs (wraps at 2³² µs); nRF v0–v2 µs from the end of the previous reported packet
    /// (`snifferTimeIsDelta`); Ubertooth's PPI clk100ns, 100 ns ticks (wraps at 2³² ticks, 429.5 s).
    public var snifferTime: UInt32?
    public var snifferTimeIsDelta = false
    /// nRF: the sniffer's packet counter. Deltas chain only over consecutive packets.
    public var snifferPacketCounter: UInt16?
    public var snifferTimeUnitNanoseconds: UInt32 = 1000

    public init(accessAddress: UInt32, pdu: UnsafeRawBufferPointer) {
        self.accessAddress = accessAddress
        self.pdu = pdu
    }

    /// A packet with nothing read yet, where the containers start.
    @inlinable public static var none: LLCapturedPacket {
        LLCapturedPacket(accessAddress: 0, pdu: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Channel indices 37–39 are the primary advertising channels [Core Vol 6 Part B §1.4.1].
    public static let firstPrimaryAdvertisingChannel: UInt8 = 37

    /// The advertising physical channel's access address [Core Vol 6 Part B §2.1.2].
    public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6

    /// Advertising or data, from the container's hint or else the access address (as Wireshark decides).
    @inlinable public var isAdvertising: Bool {
        switch pduClass {
        case .advertising: true
        case .data, .isochronous: false
        case .unspecified: accessAddress == Self.advertisingAccessAddress
        }
    }

    static let pduHeaderLength = 2
    static let micLength = 4
    /// Access address and CRC, around the PDU.
    static let accessAddressAndCRCLength = 7

    /// How long the packet lasted on air, from its declared length (the record may be cut short) and PHY (1M when
    /// the container does not say). A MIC the sniffer removed when it decrypted was on air too.
    public var airNanoseconds: Int64 {
        var length = declaredLength ?? max(0, pdu.count - Self.pduHeaderLength)
        if encryption == .decrypted, length > 0 { length += Self.micLength }
        let bytes = Self.accessAddressAndCRCLength + Self.pduHeaderLength + length
        let air: LEAirTime.PHY = switch phy {
        case .le2M: .le2M
        case .coded: codingIndicator == 1 ? .codedS2 : .codedS8
        case .le1M, .unknown: .le1M
        }
        return LEAirTime.nanoseconds(bytes: bytes, phy: air)
    }

    /// The PDU header's Length byte, nil when the record ends before it.
    @inlinable public var declaredLength: Int? { pdu.count >= 2 ? Int(pdu[1]) : nil }
}
