import BTWire
import BTCapture
import BTDecode

/// One-line summaries and field trees for HCI commands and events (btlens decode).
enum HCIDescription {
    static func status(_ s: HCIStatus) -> String { s == .success ? "Success" : "\(s) (\(Hex.u8(s.rawValue)))" }
    static func ms(_ v: Double) -> String { Format.ms(v) + " ms" }

    // MARK: Commands

    static func command(_ c: HCICommandPacket) -> (String, [DecodedField]) {
        let p = c.parameters
        var detail = ""
        var fields: [DecodedField] = [DecodedField("opcode", "\(Hex.u16(c.opcode.rawValue)) (OGF \(Hex.format(c.opcode.ogf, width: 2)), OCF \(Hex.format(c.opcode.ocf, width: 3)))")]
        switch c.opcode {
        case .leSetScanParameters:
            if let v = LESetScanParameters(p) {
                detail = "\(v.scanType == 1 ? "active" : "passive") interval \(ms(HCIUnits.slotsToMilliseconds(v.interval))) window \(ms(HCIUnits.slotsToMilliseconds(v.window)))"
                fields += [DecodedField("scan type", v.scanType == 1 ? "active" : "passive"),
                           DecodedField("interval", ms(HCIUnits.slotsToMilliseconds(v.interval))),
                           DecodedField("window", ms(HCIUnits.slotsToMilliseconds(v.window))),
                           DecodedField("own address type", Hex.u8(v.ownAddressType)),
                           DecodedField("filter policy", Hex.u8(v.filterPolicy))]
            }
        case .leSetScanEnable:
            if let v = LESetScanEnable(p) {
                detail = "\(v.enable ? "enable" : "disable") filter duplicates \(v.filterDuplicates ? "on" : "off")"
                fields += [DecodedField("enable", "\(v.enable)"), DecodedField("filter duplicates", "\(v.filterDuplicates)")]
            }
        case .leSetExtendedScanParameters:
            if let v = LESetExtendedScanParameters(p) {
                detail = v.perPHY.map { "\($0.scanType == 1 ? "active" : "passive") interval \(ms(HCIUnits.slotsToMilliseconds($0.interval))) window \(ms(HCIUnits.slotsToMilliseconds($0.window)))" }.joined(separator: "; ")
                fields += [DecodedField("filter policy", Hex.u8(v.filterPolicy)), DecodedField("PHYs", Hex.u8(v.phys))]
                fields += v.perPHY.map {
                    DecodedField("PHY \(Hex.u8($0.phy))", "", children: [
                        DecodedField("scan type", $0.scanType == 1 ? "active" : "passive"),
                        DecodedField("interval", ms(HCIUnits.slotsToMilliseconds($0.interval))),
                        DecodedField("window", ms(HCIUnits.slotsToMilliseconds($0.window)))])
                }
            }
        case .leSetExtendedScanEnable:
            if let v = LESetExtendedScanEnable(p) {
                let dup = ["off", "on", "on, reset each period"]
                let d = Int(v.filterDuplicates) < dup.count ? dup[Int(v.filterDuplicates)] : Hex.u8(v.filterDuplicates)
                detail = "\(v.enable ? "enable" : "disable") filter duplicates \(d)"
                if v.duration > 0 { detail += " duration \(ms(HCIUnits.durationToMilliseconds(v.duration)))" }
                fields += [DecodedField("enable", "\(v.enable)"), DecodedField("filter duplicates", d),
                           DecodedField("duration", v.duration == 0 ? "until disabled" : ms(HCIUnits.durationToMilliseconds(v.duration))),
                           DecodedField("period", "\(v.period) × 1.28 s")]
            }
        case .leCreateConnection:
            if let v = LECreateConnection(p) {
                detail = v.initiatorFilterPolicy == 1 ? "to accept list" : "to \(v.peerAddress) (\(v.peerAddressType))"
                detail += " " + v.parameters.description
                fields += [DecodedField("scan interval", ms(HCIUnits.slotsToMilliseconds(v.scanInterval))),
                           DecodedField("scan window", ms(HCIUnits.slotsToMilliseconds(v.scanWindow))),
                           DecodedField("initiator filter policy", v.initiatorFilterPolicy == 1 ? "accept list" : "peer address"),
                           DecodedField("peer address", "\(v.peerAddress) (\(v.peerAddressType))"),
                           DecodedField("connection parameters", v.parameters.description)]
            }
        case .leExtendedCreateConnection:
            if let v = LEExtendedCreateConnection(p) {
                detail = v.initiatorFilterPolicy == 1 ? "to accept list" : "to \(v.peerAddress) (\(v.peerAddressType))"
                if let first = v.parameters.first { detail += " " + first.description }
                fields += [DecodedField("peer address", "\(v.peerAddress) (\(v.peerAddressType))"),
                           DecodedField("PHYs", Hex.u8(v.phys))]
                fields += v.parameters.map { DecodedField("connection parameters", $0.description) }
            }
        case .leConnectionUpdate:
            if let v = LEConnectionUpdate(p) {
                detail = "handle \(Hex.u16(v.handle)) " + v.parameters.description
                fields += [DecodedField("handle", Hex.u16(v.handle)), DecodedField("parameters", v.parameters.description)]
            }
        case .disconnect:
            if let v = Disconnect(p) {
                detail = "handle \(Hex.u16(v.handle)) reason \(status(v.reason))"
                fields += [DecodedField("handle", Hex.u16(v.handle)), DecodedField("reason", status(v.reason))]
            }
        case .leSetAdvertisingParameters:
            if let v = LESetAdvertisingParameters(p) {
                let types = ["ADV_IND", "ADV_DIRECT_IND", "ADV_SCAN_IND", "ADV_NONCONN_IND", "ADV_DIRECT_IND (low duty)"]
                let t = Int(v.advertisingType) < types.count ? types[Int(v.advertisingType)] : Hex.u8(v.advertisingType)
                detail = "\(t) interval \(ms(HCIUnits.slotsToMilliseconds(v.intervalMin)))–\(ms(HCIUnits.slotsToMilliseconds(v.intervalMax)))"
                fields += [DecodedField("type", t),
                           DecodedField("interval", "\(ms(HCIUnits.slotsToMilliseconds(v.intervalMin)))–\(ms(HCIUnits.slotsToMilliseconds(v.intervalMax)))")]
            }
        case .leSetAdvertisingData, .leSetScanResponseData:
            if let v = LESetAdvertisingData(p) {
                detail = ProtocolDescription.advertisingSummary(v.data)
                fields += ProtocolDescription.advertisingFields(v.data)
            }
        case .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData:
            if let v = LESetExtendedAdvertisingData(p) {
                detail = "set \(v.advertisingHandle) " + ProtocolDescription.advertisingSummary(v.data)
                fields += [DecodedField("advertising handle", "\(v.advertisingHandle)")] + ProtocolDescription.advertisingFields(v.data)
            }
        case .leSetAdvertisingEnable:
            if let e = p.first {
                detail = e != 0 ? "enable" : "disable"
                fields.append(DecodedField("enable", "\(e != 0)"))
            }
        case .leSetExtendedAdvertisingEnable:
            if let v = LESetExtendedAdvertisingEnable(p) {
                detail = (v.enable ? "enable" : "disable") + (v.sets.isEmpty ? " all sets" : " sets " + v.sets.map { "\($0.handle)" }.joined(separator: ","))
                fields.append(DecodedField("enable", "\(v.enable)"))
                fields += v.sets.map { DecodedField("set \($0.handle)", "duration \($0.duration == 0 ? "none" : ms(HCIUnits.durationToMilliseconds($0.duration))) max events \($0.maxEvents)") }
            }
        case .readRSSI, .leReadRemoteFeatures, .leSetDataLength, .leSetPHY, .leEnableEncryption:
            if p.count >= 2 {
                let h = (UInt16(p[0]) | UInt16(p[1]) << 8) & 0x0FFF
                detail = "handle \(Hex.u16(h))"
                fields.append(DecodedField("handle", Hex.u16(h)))
            }
        default:
            break
        }
        if !p.isEmpty { fields.append(DecodedField("parameters", Hex.string(p, separator: " "))) }
        return (detail, fields)
    }

    // MARK: Events

    static func event(_ e: HCIEventPacket, frame: DecodedFrame) -> (String, [DecodedField]) {
        let p = e.parameters
        var fields: [DecodedField] = []
        var detail = ""
        switch e.code {
        case .commandComplete:
            if let v = CommandComplete(p) {
                detail = "\(v.opcode)"
                if let s = v.status { detail += " status \(status(s))" }
                fields += [DecodedField("command", "\(v.opcode) (\(Hex.u16(v.opcode.rawValue)))"),
                           DecodedField("allowed commands", "\(v.numberOfAllowedCommands)")]
                if let s = v.status { fields.append(DecodedField("status", status(s))) }
                if v.returnParameters.count > 1 {
                    fields.append(DecodedField("return parameters", Hex.string(UnsafeRawBufferPointer(rebasing: v.returnParameters[1...]), separator: " ")))
                }
            }
        case .commandStatus:
            if let v = CommandStatus(p) {
                detail = "\(v.opcode) status \(status(v.status))"
                fields += [DecodedField("command", "\(v.opcode) (\(Hex.u16(v.opcode.rawValue)))"), DecodedField("status", status(v.status))]
            }
        case .disconnectionComplete:
            if let v = DisconnectionComplete(p) {
                detail = "handle \(Hex.u16(v.handle)) reason \(status(v.reason))"
                if v.status != .success { detail += " status \(status(v.status))" }
                fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                           DecodedField("reason", status(v.reason))]
            }
        case .connectionComplete:
            if let v = ConnectionComplete(p) {
                detail = "handle \(Hex.u16(v.handle)) peer \(v.address) status \(status(v.status))"
                fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                           DecodedField("peer address", "\(v.address)"), DecodedField("link type", Hex.u8(v.linkType)),
                           DecodedField("encryption", "\(v.encryptionEnabled)")]
            }
        case .encryptionChange, .encryptionChangeV2:
            if let v = EncryptionChange(p) {
                detail = "handle \(Hex.u16(v.handle)) encryption \(v.encryptionEnabled != 0 ? "on" : "off") status \(status(v.status))"
                fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                           DecodedField("encryption", Hex.u8(v.encryptionEnabled))]
                if let k = v.keySize { fields.append(DecodedField("key size", "\(k)")) }
            }
        case .numberOfCompletedPackets:
            if let v = NumberOfCompletedPackets(p) {
                detail = v.entries.map { "handle \(Hex.u16($0.handle)) \($0.count)" }.joined(separator: ", ")
                fields += v.entries.map { DecodedField("handle \(Hex.u16($0.handle))", "\($0.count) packets") }
            }
        case .leMeta:
            return leMeta(e, frame: frame)
        case .vendorSpecific:
            if let bqr = BluetoothQualityReport(vendorEventParameters: p) { return QualityReportDescription.describe(bqr) }
        default:
            break
        }
        if fields.isEmpty && !p.isEmpty { fields.append(DecodedField("parameters", Hex.string(p, separator: " "))) }
        return (detail, fields)
    }

    static func leMeta(_ e: HCIEventPacket, frame: DecodedFrame) -> (String, [DecodedField]) {
        guard let sub = e.subevent else { return ("", []) }
        let p = e.subeventParameters
        var fields: [DecodedField] = [DecodedField("subevent", "\(sub) (\(Hex.u8(sub.rawValue)))")]
        var detail = ""
        switch sub {
        case .connectionComplete, .enhancedConnectionComplete, .enhancedConnectionCompleteV2:
            if let v = LEConnectionComplete(subevent: sub, p) {
                detail = "handle \(Hex.u16(v.handle)) \(v.isCentral ? "central" : "peripheral") peer \(v.peerAddress) (\(v.peerAddressType)) interval \(ms(HCIUnits.intervalToMilliseconds(v.connectionInterval)))"
                if v.status != .success { detail = "status \(status(v.status))" }
                fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                           DecodedField("role", v.isCentral ? "central" : "peripheral"),
                           DecodedField("peer address", "\(v.peerAddress) (\(v.peerAddressType))"),
                           DecodedField("interval", ms(HCIUnits.intervalToMilliseconds(v.connectionInterval))),
                           DecodedField("latency", "\(v.peripheralLatency)"),
                           DecodedField("supervision timeout", ms(HCIUnits.timeoutToMilliseconds(v.supervisionTimeout)))]
            }
        case .advertisingReport, .extendedAdvertisingReport:
            detail = Plural.of(frame.advertisingReports, "report")
            var iterator = AdvertisingReportIterator(subevent: sub, parameters: p)
            var first = true
            while let r = iterator.next() {
                let ad = ProtocolDescription.advertisingSummary(r.data)
                if first {
                    detail += ": \(r.address) \(r.typeName)" + (r.rssi.map { " rssi \($0)" } ?? "") + (ad.isEmpty ? "" : " " + ad)
                    first = false
                }
                var children = [DecodedField("type", r.typeName),
                                DecodedField("address", "\(r.address) (\(r.addressType))")]
                if let rssi = r.rssi { children.append(DecodedField("rssi", "\(rssi) dBm")) }
                if let tx = r.txPower { children.append(DecodedField("tx power", "\(tx) dBm")) }
                if let sid = r.advertisingSID { children.append(DecodedField("SID", "\(sid)")) }
                children += ProtocolDescription.advertisingFields(r.data)
                fields.append(DecodedField("report", "\(r.address)", children: children))
            }
        case .connectionUpdateComplete:
            if let v = LEConnectionUpdateComplete(p) {
                detail = "handle \(Hex.u16(v.handle)) interval \(ms(HCIUnits.intervalToMilliseconds(v.connectionInterval))) latency \(v.peripheralLatency) timeout \(ms(HCIUnits.timeoutToMilliseconds(v.supervisionTimeout)))"
                if v.status != .success { detail += " status \(status(v.status))" }
                fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                           DecodedField("interval", ms(HCIUnits.intervalToMilliseconds(v.connectionInterval))),
                           DecodedField("latency", "\(v.peripheralLatency)"),
                           DecodedField("supervision timeout", ms(HCIUnits.timeoutToMilliseconds(v.supervisionTimeout)))]
            }
        case .dataLengthChange:
            if let v = LEDataLengthChange(p) {
                detail = "handle \(Hex.u16(v.handle)) tx \(v.maxTxOctets) rx \(v.maxRxOctets) octets"
                fields += [DecodedField("handle", Hex.u16(v.handle)), DecodedField("max tx octets", "\(v.maxTxOctets)"),
                           DecodedField("max tx time", "\(v.maxTxTime) µs"), DecodedField("max rx octets", "\(v.maxRxOctets)"),
                           DecodedField("max rx time", "\(v.maxRxTime) µs")]
            }
        case .phyUpdateComplete:
            if let v = LEPHYUpdateComplete(p) {
                let names = [1: "1M", 2: "2M", 3: "Coded"]
                detail = "handle \(Hex.u16(v.handle)) tx \(names[Int(v.txPHY)] ?? Hex.u8(v.txPHY)) rx \(names[Int(v.rxPHY)] ?? Hex.u8(v.rxPHY))"
                fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle))]
            }
        case .remoteConnectionParameterRequest:
            if let v = LERemoteConnectionParameterRequest(p) {
                let range = ConnectionParameterRange(intervalMin: v.intervalMin, intervalMax: v.intervalMax, latency: v.latency, supervisionTimeout: v.timeout)
                detail = "handle \(Hex.u16(v.handle)) \(range.description)"
                fields += [DecodedField("handle", Hex.u16(v.handle)), DecodedField("parameters", range.description)]
            }
        case .subrateChange, .connectionRateChange, .frameSpaceUpdateComplete, .channelSoundingProcedureEnableComplete,
             .channelSoundingSubeventResult, .channelSoundingSubeventResultContinue:
            if let described = ConnectionRateDescription.describe(sub, p, fields: fields) { return described }
        case .readRemoteFeaturesComplete, .longTermKeyRequest, .channelSelectionAlgorithm:
            var r = ByteReader(p)
            if sub == .readRemoteFeaturesComplete { _ = r.readU8() }
            if let h = r.readU16() { detail = "handle \(Hex.u16(h & 0x0FFF))" }
        default:
            break
        }
        if fields.count == 1 && !p.isEmpty { fields.append(DecodedField("parameters", Hex.string(p, separator: " "))) }
        return (detail, fields)
    }
}
