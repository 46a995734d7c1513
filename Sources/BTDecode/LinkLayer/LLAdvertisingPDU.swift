import BTWire

/// An advertising physical channel PDU [Core Vol 6 Part B §2.3], decoded over the borrowed PDU bytes.
///
///     header: type:4 RFU:1 ChSel:1 TxAdd:1 RxAdd:1 · Length u8
public struct LLAdvertisingPDU {
    static let typeMask: UInt8 = 0x0F
    static let channelSelectionBit: UInt8 = 0x20
    static let txAddBit: UInt8 = 0x40
    static let rxAddBit: UInt8 = 0x80
    static let addressLength = 6
    /// Legacy AdvData and ScanRspData hold at most 31 bytes.
    public static let maximumLegacyData = 31

    public var type: LLAdvertisingPDUType
    /// ChSel: the sender supports channel selection algorithm #2.
    public var channelSelection2: Bool
    /// TxAdd / RxAdd: the first and second address are random.
    public var txRandom: Bool
    public var rxRandom: Bool
    public var length: Int
    public var payload: UnsafeRawBufferPointer
    public var body: Body

    /// The PDU's payload by its type (Core Vol 6 Part B §2.3).
    public enum Body {
        /// ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND (AdvData), SCAN_RSP (ScanRspData).
        case advertising(advA: BDAddr, data: UnsafeRawBufferPointer)
        case directed(advA: BDAddr, targetA: BDAddr)
        /// SCAN_REQ / AUX_SCAN_REQ.
        case scanRequest(scanA: BDAddr, advA: BDAddr)
        /// CONNECT_IND / AUX_CONNECT_REQ: InitA is the central, AdvA the peripheral.
        case connectRequest(initA: BDAddr, advA: BDAddr, data: LLConnectionRequestData)
        /// ADV_EXT_IND, AUX_* and AUX_CONNECT_RSP.
        case extended(LLExtendedHeader)
        /// A reserved type, or a payload too short for its type's fields.
        case undecoded
    }

    /// Decodes a PDU (header and payload as far as captured). Never fails: a short or reserved PDU keeps its
    /// header with `.undecoded`; nil only without a whole header.
    public init?(_ pdu: UnsafeRawBufferPointer) {
        guard pdu.count >= 2 else { return nil }
        let h = pdu[0]
        type = LLAdvertisingPDUType(rawValue: h & Self.typeMask)
        channelSelection2 = h & Self.channelSelectionBit != 0
        txRandom = h & Self.txAddBit != 0
        rxRandom = h & Self.rxAddBit != 0
        length = Int(pdu[1])
        payload = UnsafeRawBufferPointer(rebasing: pdu[2..<min(pdu.count, 2 + length)])
        body = Self.body(type, payload)
    }

    static func body(_ type: LLAdvertisingPDUType, _ payload: UnsafeRawBufferPointer) -> Body {
        var r = ByteReader(payload)
        switch type {
        case .advInd, .advNonconnInd, .advScanInd, .scanRsp:
            guard let a = r.readAddress() else { return .undecoded }
            return .advertising(advA: a, data: r.readRest())
        case .advDirectInd:
            guard let a = r.readAddress(), let t = r.readAddress() else { return .undecoded }
            return .directed(advA: a, targetA: t)
        case .scanReq:
            guard let s = r.readAddress(), let a = r.readAddress() else { return .undecoded }
            return .scanRequest(scanA: s, advA: a)
        case .connectInd:
            guard let i = r.readAddress(), let a = r.readAddress(), let d = LLConnectionRequestData(r.readRest())
            else { return .undecoded }
            return .connectRequest(initA: i, advA: a, data: d)
        case .advExtInd, .auxConnectRsp:
            guard let e = LLExtendedHeader(payload) else { return .undecoded }
            return .extended(e)
        default:
            return .undecoded
        }
    }

    /// The advertiser's address, whichever field holds it.
    public var advertiserAddress: BDAddr? {
        switch body {
        case .advertising(let a, _), .directed(let a, _), .scanRequest(_, let a), .connectRequest(_, let a, _): a
        case .extended(let e): e.advA
        case .undecoded: nil
        }
    }
}
