import BTWire

/// Advertising commands, legacy (§7.8.5–7.8.9) and extended (§7.8.53–7.8.56).
extension HCICommand {
    /// Legacy advertising and scan response data are always 31 bytes on the wire, zero-padded.
    public static let legacyAdvertisingDataLength = 31

    /// LE Set Advertising Parameters (0x2006).
    public static func leSetAdvertisingParameters(intervalMin: UInt16, intervalMax: UInt16,
                                                  type: UInt8 = LEParameter.advInd,
                                                  ownAddressType: UInt8 = LEParameter.publicAddress) -> HCICommand {
        HCICommand(.leSetAdvertisingParameters) { w in
            w.u16(intervalMin)
            w.u16(intervalMax)
            w.u8(type)
            w.u8(ownAddressType)
            w.u8(LEParameter.publicAddress)  // peer address type: unused unless directed
            w.address(BDAddr(rawValue: 0))
            w.u8(LEParameter.allAdvertisingChannels)
            w.u8(LEParameter.acceptAll)
        }
    }

    /// LE Set Advertising Data (0x2008): significant length, then 31 bytes.
    public static func leSetAdvertisingData(_ data: AdvertisingData) -> HCICommand {
        HCICommand(.leSetAdvertisingData) { padded(data.bytes, into: &$0) }
    }

    /// LE Set Scan Response Data (0x2009).
    public static func leSetScanResponseData(_ data: AdvertisingData) -> HCICommand {
        HCICommand(.leSetScanResponseData) { padded(data.bytes, into: &$0) }
    }

    static func padded(_ bytes: [UInt8], into w: inout ByteWriter) {
        let significant = bytes.prefix(legacyAdvertisingDataLength)
        w.u8(UInt8(significant.count))
        w.append(significant)
        w.fill(0, count: legacyAdvertisingDataLength - significant.count)
    }

    /// LE Set Advertising Enable (0x200A).
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(.leSetAdvertisingEnable) { $0.u8(enable ? LEParameter.enabled : LEParameter.disabled) }
    }

    /// LE Set Extended Advertising Parameters (0x2036, v1): 25 bytes.
    public static func leSetExtendedAdvertisingParameters(handle: UInt8, properties: UInt16, intervalMin: UInt32,
                                                          intervalMax: UInt32, ownAddressType: UInt8,
                                                          primaryPHY: UInt8 = LEParameter.phy1M,
                                                          secondaryPHY: UInt8 = LEParameter.phy1M,
                                                          sid: UInt8 = 0) -> HCICommand {
        HCICommand(.leSetExtendedAdvertisingParameters) { w in
            w.u8(handle)
            w.u16(properties)
            w.u24(intervalMin)
            w.u24(intervalMax)
            w.u8(LEParameter.allAdvertisingChannels)
            w.u8(ownAddressType)
            w.u8(LEParameter.publicAddress)
            w.address(BDAddr(rawValue: 0))
            w.u8(LEParameter.acceptAll)
            w.i8(LEParameter.noTxPowerPreference)
            w.u8(primaryPHY)
            w.u8(0)  // secondary max skip
            w.u8(secondaryPHY)
            w.u8(sid)
            w.u8(LEParameter.disabled)  // scan request notifications
        }
    }

    /// LE Set Extended Advertising Data (0x2037) with the whole data in one command.
    public static func leSetExtendedAdvertisingData(handle: UInt8, _ data: AdvertisingData,
                                                    operation: UInt8 = LEParameter.completeData) -> HCICommand {
        HCICommand(.leSetExtendedAdvertisingData) { w in
            w.u8(handle)
            w.u8(operation)
            w.u8(LEParameter.mayFragment)
            w.u8(UInt8(truncatingIfNeeded: data.bytes.count))
            w.append(data.bytes)
        }
    }

    /// LE Set Extended Scan Response Data (0x2038).
    public static func leSetExtendedScanResponseData(handle: UInt8, _ data: AdvertisingData) -> HCICommand {
        HCICommand(.leSetExtendedScanResponseData) { w in
            w.u8(handle)
            w.u8(LEParameter.completeData)
            w.u8(LEParameter.mayFragment)
            w.u8(UInt8(truncatingIfNeeded: data.bytes.count))
            w.append(data.bytes)
        }
    }

    /// One set in LE Set Extended Advertising Enable.
    public struct AdvertisingSetEnable: Sendable {
        public var handle: UInt8
        /// Units of 10 ms; 0 = until disabled.
        public var duration: UInt16
        /// 0 = no limit.
        public var maxEvents: UInt8
        public init(handle: UInt8, duration: UInt16 = 0, maxEvents: UInt8 = 0) {
            self.handle = handle
            self.duration = duration
            self.maxEvents = maxEvents
        }
    }

    /// LE Set Extended Advertising Enable (0x2039).
    public static func leSetExtendedAdvertisingEnable(_ enable: Bool, sets: [AdvertisingSetEnable]) -> HCICommand {
        HCICommand(.leSetExtendedAdvertisingEnable) { w in
            w.u8(enable ? LEParameter.enabled : LEParameter.disabled)
            w.u8(UInt8(truncatingIfNeeded: sets.count))
            for s in sets {
                w.u8(s.handle)
                w.u16(s.duration)
                w.u8(s.maxEvents)
            }
        }
    }
}
