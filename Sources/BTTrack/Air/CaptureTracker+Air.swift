import BTWire
import BTCapture
import BTDecode

extension CaptureTracker {
    /// An air sniffer's record: connections to the air tracker, advertising PDUs to the advertiser table (as an
    /// advertising report a scanner would have given). Out of line: HCI captures never come here.
    @inline(never)
    func airFrame(_ frame: LLFrame, l2cap: L2CAPPDU?, at: RecordRef) {
        let tracker: AirTracker
        if let air { tracker = air } else {
            tracker = AirTracker(options: options)
            air = tracker
            // An air link's peer is not among those the scan tracker's trims keep: lists stay whole from here.
            scans.trimsDevices = false
            // The model numbers HCI and air links together by when they started: an HCI link judged early
            // from here on would be named by a number that changes.
            if let linkFeed { linkFeed.sendAirLinksJoin() } else { connections.airLinksJoin() }
        }
        tracker.observe(frame, l2cap: l2cap, at: at)
        if options.trackAdvertisers, frame.isAdvertising, frame.crc != .bad, let pdu = frame.advertising,
           let report = AdvertisingReport(pdu, packet: frame.packet) {
            advertisers.advertisingReport(report, at: at)
        }
    }
}

extension AdvertisingReport {
    /// The report a scanner's controller would give for an advertising PDU heard on the air: legacy ADV_IND,
    /// ADV_DIRECT_IND, ADV_SCAN_IND, ADV_NONCONN_IND and SCAN_RSP, and auxiliary PDUs that carry AdvA and data
    /// (as a complete extended report). nil for PDUs that advertise no one (SCAN_REQ, CONNECT_IND, ADV_EXT_IND
    /// pointing elsewhere, chains without AdvA).
    init?(_ pdu: LLAdvertisingPDU, packet: LLCapturedPacket) {
        let addressType: AddressType = pdu.txRandom ? .random : .public
        switch pdu.body {
        case .advertising(let advA, let data):
            let type: UInt16
            switch pdu.type {
            case .advInd: type = LegacyType.advInd
            case .advScanInd: type = LegacyType.advScanInd
            case .advNonconnInd: type = LegacyType.advNonconnInd
            case .scanRsp: type = LegacyType.scanRsp
            default: return nil
            }
            self.init(eventType: type, isExtended: false, addressType: addressType, address: advA, rssi: packet.rssi,
                      data: data)
        case .directed(let advA, _):
            self.init(eventType: LegacyType.advDirectInd, isExtended: false, addressType: addressType, address: advA,
                      rssi: packet.rssi, data: UnsafeRawBufferPointer(start: nil, count: 0))
        case .extended(let header):
            guard let advA = header.advA, pdu.type == .advExtInd else { return nil }
            var type: UInt16 = 0
            if header.advMode & 0x01 != 0 { type |= ExtendedTypeBits.connectable }
            if header.advMode & 0x02 != 0 { type |= ExtendedTypeBits.scannable }
            if header.targetA != nil { type |= ExtendedTypeBits.directed }
            if packet.auxiliaryType == Self.auxiliaryScanResponse { type |= ExtendedTypeBits.scanResponse }
            self.init(eventType: type, isExtended: true, addressType: addressType, address: advA, rssi: packet.rssi,
                      data: header.advData)
            txPower = header.txPower
            advertisingSID = header.adi?.setID
        default:
            return nil
        }
    }

    /// The PHDR / nRF auxiliary type of AUX_SCAN_RSP.
    static let auxiliaryScanResponse: UInt8 = 3
}
