import BTWire

/// An LL control PDU: opcode and CtrData [Core Vol 6 Part B §2.4.2], the fields a tracker needs decoded.
/// Every value is read from the borrowed payload; nothing is allocated.
public struct LLControlPDU {
    public var opcode: LLControlOpcode
    public var data: UnsafeRawBufferPointer
    public var body: Body

    /// The control PDU's parameters by its opcode (Core Vol 6 Part B §2.4.2).
    public enum Body {
        /// Instant: the connection event counter at which the new parameters apply.
        case connectionUpdate(windowSize: UInt8, windowOffset: UInt16, interval: UInt16, latency: UInt16,
                              timeout: UInt16, instant: UInt16)
        case channelMap(map: UInt64, instant: UInt16)
        /// LL_TERMINATE_IND, LL_REJECT_IND.
        case error(HCIStatus)
        case encryptionRequest(rand: UInt64, ediv: UInt16, skdCentral: UInt64, ivCentral: UInt32)
        case encryptionResponse(skdPeripheral: UInt64, ivPeripheral: UInt32)
        case unknownResponse(LLControlOpcode)
        /// LL_FEATURE_REQ/RSP, LL_PERIPHERAL_FEATURE_REQ.
        case features(UInt64)
        /// VersNr (6 = 4.0 … 13 = 5.4), CompId, SubVersNr.
        case version(versionNumber: UInt8, companyID: UInt16, subversion: UInt16)
        /// LL_CONNECTION_PARAM_REQ/RSP; the six offsets are left in `data`.
        case connectionParameters(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16,
                                  preferredPeriodicity: UInt8, referenceEventCount: UInt16)
        case rejectExtended(rejectOpcode: LLControlOpcode, error: HCIStatus)
        /// LL_LENGTH_REQ/RSP.
        case dataLength(maxRxOctets: UInt16, maxRxTime: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16)
        /// LL_PHY_REQ/RSP: bit 0 1M, bit 1 2M, bit 2 Coded.
        case phys(tx: UInt8, rx: UInt8)
        /// PHY 0 = unchanged in that direction.
        case phyUpdate(centralToPeripheral: UInt8, peripheralToCentral: UInt8, instant: UInt16)
        case minUsedChannels(phys: UInt8, minimum: UInt8)
        case clockAccuracy(UInt8)
        /// No CtrData (LL_START_ENC_REQ/RSP, LL_PAUSE_ENC_*, LL_PING_*), or fields btlens leaves opaque.
        case plain
        /// CtrData shorter than the opcode needs.
        case truncated(needed: Int)
    }

    /// nil only for an empty payload (no opcode).
    public init?(_ payload: UnsafeRawBufferPointer) {
        guard let first = payload.first else { return nil }
        opcode = LLControlOpcode(rawValue: first)
        data = UnsafeRawBufferPointer(rebasing: payload[1...])
        body = Self.body(opcode, data)
    }

    static func body(_ opcode: LLControlOpcode, _ data: UnsafeRawBufferPointer) -> Body {
        if let needed = opcode.minimumDataLength, data.count < needed { return .truncated(needed: needed) }
        var r = ByteReader(data)
        switch opcode {
        case .connectionUpdateInd:
            guard let w = r.readU8(), let o = r.readU16(), let i = r.readU16(), let l = r.readU16(),
                  let t = r.readU16(), let n = r.readU16() else { break }
            return .connectionUpdate(windowSize: w, windowOffset: o, interval: i, latency: l, timeout: t, instant: n)
        case .channelMapInd:
            guard let m = r.readChannelMap(), let n = r.readU16() else { break }
            return .channelMap(map: m, instant: n)
        case .terminateInd, .rejectInd:
            guard let e = r.readU8() else { break }
            return .error(HCIStatus(rawValue: e))
        case .encReq:
            guard let rand = r.readU64(), let ediv = r.readU16(), let skd = r.readU64(), let iv = r.readU32() else { break }
            return .encryptionRequest(rand: rand, ediv: ediv, skdCentral: skd, ivCentral: iv)
        case .encRsp:
            guard let skd = r.readU64(), let iv = r.readU32() else { break }
            return .encryptionResponse(skdPeripheral: skd, ivPeripheral: iv)
        case .unknownRsp:
            guard let t = r.readU8() else { break }
            return .unknownResponse(LLControlOpcode(rawValue: t))
        case .featureReq, .featureRsp, .peripheralFeatureReq:
            guard let f = r.readU64() else { break }
            return .features(f)
        case .versionInd:
            guard let v = r.readU8(), let c = r.readU16(), let s = r.readU16() else { break }
            return .version(versionNumber: v, companyID: c, subversion: s)
        case .connectionParamReq, .connectionParamRsp:
            guard let a = r.readU16(), let b = r.readU16(), let l = r.readU16(), let t = r.readU16(),
                  let p = r.readU8(), let e = r.readU16() else { break }
            return .connectionParameters(intervalMin: a, intervalMax: b, latency: l, timeout: t,
                                         preferredPeriodicity: p, referenceEventCount: e)
        case .rejectExtInd:
            guard let o = r.readU8(), let e = r.readU8() else { break }
            return .rejectExtended(rejectOpcode: LLControlOpcode(rawValue: o), error: HCIStatus(rawValue: e))
        case .lengthReq, .lengthRsp:
            guard let a = r.readU16(), let b = r.readU16(), let c = r.readU16(), let d = r.readU16() else { break }
            return .dataLength(maxRxOctets: a, maxRxTime: b, maxTxOctets: c, maxTxTime: d)
        case .phyReq, .phyRsp:
            guard let t = r.readU8(), let x = r.readU8() else { break }
            return .phys(tx: t, rx: x)
        case .phyUpdateInd:
            guard let c = r.readU8(), let p = r.readU8(), let n = r.readU16() else { break }
            return .phyUpdate(centralToPeripheral: c, peripheralToCentral: p, instant: n)
        case .minUsedChannelsInd:
            guard let p = r.readU8(), let m = r.readU8() else { break }
            return .minUsedChannels(phys: p, minimum: m)
        case .clockAccuracyReq, .clockAccuracyRsp:
            guard let s = r.readU8() else { break }
            return .clockAccuracy(s)
        default:
            break
        }
        return .plain
    }
}
