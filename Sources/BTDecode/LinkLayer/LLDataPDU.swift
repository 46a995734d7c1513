import BTWire

/// LLID: what a data physical channel PDU carries [Core Vol 6 Part B §2.4].
public struct LLID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 0x03 }

    public static let reserved = LLID(rawValue: 0)
    /// Continuation of an L2CAP message, or an empty PDU when Length is 0.
    public static let continuation = LLID(rawValue: 1)
    /// Start of an L2CAP message, or a complete one.
    public static let start = LLID(rawValue: 2)
    /// LL control PDU.
    public static let control = LLID(rawValue: 3)

    public var description: String {
        switch rawValue {
        case 1: "LL Data (continuation)"
        case 2: "LL Data (start)"
        case 3: "LL Control"
        default: "Reserved LLID"
        }
    }
}

/// A data physical channel PDU's header [Core Vol 6 Part B §2.4]:
///
///     LLID:2 NESN:1 SN:1 MD:1 CP:1 RFU:2 · Length u8 · [CTEInfo u8 when CP]
///
/// Length is read as 8 bits: v4.0/4.1's 5-bit Length had zero RFU bits above it.
public struct LLDataHeader: Equatable, Sendable {
    static let nesnBit: UInt8 = 0x04
    static let snBit: UInt8 = 0x08
    static let moreDataBit: UInt8 = 0x10
    static let ctePresentBit: UInt8 = 0x20

    public var llid: LLID
    /// Next expected sequence number: acknowledges the peer's last PDU when it differs from the peer's SN.
    public var nesn: UInt8
    /// Sequence number: the same value again is a retransmission.
    public var sn: UInt8
    /// More data: the sender has more to send in this connection event.
    public var moreData: Bool
    public var cteInfo: UInt8?
    /// Payload length, the MIC included when encrypted.
    public var length: Int
    /// Bytes before the payload (2, or 3 with CTEInfo).
    public var size: Int { cteInfo == nil ? 2 : 3 }

    public init?(_ pdu: UnsafeRawBufferPointer) {
        guard pdu.count >= 2 else { return nil }
        let h = pdu[0]
        llid = LLID(rawValue: h)
        nesn = h & Self.nesnBit != 0 ? 1 : 0
        sn = h & Self.snBit != 0 ? 1 : 0
        moreData = h & Self.moreDataBit != 0
        length = Int(pdu[1])
        if h & Self.ctePresentBit != 0 {
            guard pdu.count >= 3 else { return nil }
            cteInfo = pdu[2]
        }
    }

    /// An empty PDU: LLID 1 with no payload, sent to keep the event going or to acknowledge.
    public var isEmpty: Bool { llid == .continuation && length == 0 }
}

/// A data physical channel PDU: header and the payload bytes captured (fewer than `header.length` when cut).
public struct LLDataPDU {
    /// The MIC an encrypted non-empty PDU carries after its payload [Core Vol 6 Part E].
    public static let micLength = 4

    public var header: LLDataHeader
    public var payload: UnsafeRawBufferPointer

    public init?(_ pdu: UnsafeRawBufferPointer) {
        guard let h = LLDataHeader(pdu) else { return nil }
        header = h
        payload = UnsafeRawBufferPointer(rebasing: pdu[h.size..<min(pdu.count, h.size + h.length)])
    }

    /// The control PDU, when LLID is 3 and the payload is plaintext.
    public var control: LLControlPDU? {
        header.llid == .control ? LLControlPDU(payload) : nil
    }
}
