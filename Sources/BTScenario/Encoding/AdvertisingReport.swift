import BTWire

/// One report inside an LE Advertising Report event (§7.7.65.2).
public struct LegacyAdvertisingReport: Sendable {
    /// `LegacyReportType`.
    public var eventType: UInt8
    public var peer: PeerAddress
    /// At most 31 bytes; longer data is cut to 31, as no legacy PDU can carry more.
    public var data: [UInt8]
    public var rssi: Int8

    public static let maximumDataLength = 31

    public init(eventType: UInt8, peer: PeerAddress, data: AdvertisingData, rssi: Int8) {
        self.eventType = eventType
        self.peer = peer
        self.data = Array(data.bytes.prefix(Self.maximumDataLength))
        self.rssi = rssi
    }

    func write(to w: inout ByteWriter) {
        w.u8(eventType)
        w.u8(peer.type)
        w.address(peer.address)
        w.u8(UInt8(truncatingIfNeeded: data.count))
        w.append(data)
        w.i8(rssi)
    }
}

/// One report inside an LE Extended Advertising Report event (§7.7.65.13): 24 fixed bytes, then data.
public struct ExtendedAdvertisingReport: Sendable {
    /// `ExtendedReportType` bits, data status in bits 5–6.
    public var eventType: UInt16
    public var peer: PeerAddress
    public var primaryPHY: UInt8
    public var secondaryPHY: UInt8
    public var sid: UInt8
    public var txPower: Int8
    public var rssi: Int8
    public var periodicInterval: UInt16
    public var data: [UInt8]

    /// The most data one report can carry (the event's 255-byte parameter limit less the fixed fields).
    public static let maximumDataLength = 229

    public init(eventType: UInt16, peer: PeerAddress, data: [UInt8], rssi: Int8,
                primaryPHY: UInt8 = LEParameter.phy1M, secondaryPHY: UInt8 = LEParameter.noSecondaryPHY,
                sid: UInt8 = LEParameter.noSID, txPower: Int8 = LEParameter.noTxPowerPreference,
                periodicInterval: UInt16 = 0) {
        self.eventType = eventType
        self.peer = peer
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.sid = sid
        self.txPower = txPower
        self.rssi = rssi
        self.periodicInterval = periodicInterval
        self.data = Array(data.prefix(Self.maximumDataLength))
    }

    /// A legacy PDU as an extended scanner reports it.
    public static func legacy(_ type: UInt16, peer: PeerAddress, data: AdvertisingData,
                              rssi: Int8) -> ExtendedAdvertisingReport {
        ExtendedAdvertisingReport(eventType: type, peer: peer,
                                  data: Array(data.bytes.prefix(LegacyAdvertisingReport.maximumDataLength)),
                                  rssi: rssi)
    }

    /// Extended advertising data longer than one report holds: several reports, all but the last marked
    /// "incomplete, more to come" (data status 1), as controllers deliver chained AUX_CHAIN_IND data.
    /// Pieces end on AD structure boundaries where one fits, so tools that decode each report's data on its
    /// own (Wireshark) still see whole structures; a structure longer than a piece is split mid-way.
    public static func fragmented(baseType: UInt16, peer: PeerAddress, data: [UInt8], rssi: Int8, sid: UInt8,
                                  primaryPHY: UInt8, secondaryPHY: UInt8, txPower: Int8,
                                  fragmentLength: Int = maximumDataLength) -> [ExtendedAdvertisingReport] {
        var reports: [ExtendedAdvertisingReport] = []
        var start = 0
        let boundaries = ADStructure.boundaries(data)
        repeat {
            let limit = min(data.count, start + max(1, fragmentLength))
            let end = boundaries.last { $0 > start && $0 <= limit } ?? limit
            let status = end < data.count ? ExtendedReportType.dataIncomplete : ExtendedReportType.dataComplete
            reports.append(ExtendedAdvertisingReport(
                eventType: baseType | status << ExtendedReportType.dataStatusShift, peer: peer,
                data: Array(data[start..<end]), rssi: rssi, primaryPHY: primaryPHY, secondaryPHY: secondaryPHY,
                sid: sid, txPower: txPower))
            start = end
        } while start < data.count
        return reports
    }

    func write(to w: inout ByteWriter) {
        w.u16(eventType)
        w.u8(peer.type)
        w.address(peer.address)
        w.u8(primaryPHY)
        w.u8(secondaryPHY)
        w.u8(sid)
        w.i8(txPower)
        w.i8(rssi)
        w.u16(periodicInterval)
        w.u8(0)  // direct address type
        w.address(BDAddr(rawValue: 0))
        w.u8(UInt8(truncatingIfNeeded: data.count))
        w.append(data)
    }
}
