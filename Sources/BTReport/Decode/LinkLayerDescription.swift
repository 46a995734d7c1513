import BTWire
import BTCapture
import BTDecode

/// `btlens decode` lines for air-sniffer records: the LL PDU by its spec name with its main fields, then
/// channel and RSSI (`ADV_IND AdvA … 31 bytes ch 37 -62 dBm`); a data PDU that completed an L2CAP PDU reads as
/// that PDU (`ATT Read Request handle 0x002a`).
enum LinkLayerDescription {
    static func describe(_ frame: DecodedFrame, _ ll: LLFrame) -> (String, [DecodedField]) {
        var fields = packetFields(ll)
        var head: String
        if ll.isAdvertising {
            let (summary, more) = advertising(ll)
            head = summary
            fields += more
        } else if ll.packet.pduClass == .isochronous {
            head = "LL isochronous PDU \(ll.packet.pdu.count) bytes"
        } else {
            let (summary, more) = data(frame, ll)
            head = summary
            fields += more
        }
        if ll.crc == .bad { head = "CRC error: " + head }
        return (head + place(ll), fields)
    }

    /// ` C→P ch 37 -62 dBm`: where and how strongly it was heard.
    static func place(_ ll: LLFrame) -> String {
        var s = ""
        if !ll.isAdvertising && ll.direction != .unknown { s += " \(ll.direction)" }
        if let c = ll.packet.channel { s += " ch \(c)" }
        if let r = ll.packet.rssi { s += " \(r) dBm" }
        return s
    }

    static func packetFields(_ ll: LLFrame) -> [DecodedField] {
        let p = ll.packet
        var f = [DecodedField("access address", Hex.format(p.accessAddress, width: 8))]
        if let c = p.channel { f.append(DecodedField("channel", "\(c)")) }
        if let r = p.rssi { f.append(DecodedField("RSSI", "\(r) dBm")) }
        if p.phy != .unknown { f.append(DecodedField("PHY", "\(p.phy)")) }
        let crc = switch ll.crc {
        case .good: "good"
        case .bad: "bad"
        case .unchecked: "not checked"
        }
        f.append(DecodedField("CRC", crc + (p.storedCRC.map { " (" + Hex.format($0, width: 6) + ")" } ?? "")))
        if !ll.isAdvertising {
            f.append(DecodedField("direction", "\(ll.direction)" + (ll.directionInferred ? " (inferred from timing)" : "")))
        }
        if let e = p.eventCounter, !ll.isAdvertising { f.append(DecodedField("event counter", "\(e)")) }
        if let t = p.snifferTime {
            let unit = p.snifferTimeUnitNanoseconds == 1000 ? "µs" : "× \(p.snifferTimeUnitNanoseconds) ns"
            f.append(DecodedField(p.snifferTimeIsDelta ? "sniffer delta" : "sniffer time", "\(t) \(unit)"))
        }
        return f
    }

    static func address(_ a: BDAddr, random: Bool) -> String { "\(a)" + (random ? " (random)" : "") }

    static func advertising(_ ll: LLFrame) -> (String, [DecodedField]) {
        guard let pdu = ll.advertising else { return ("LL advertising PDU \(ll.packet.pdu.count) bytes (no header)", []) }
        let name = pdu.type.name(secondary: ll.packet.isSecondaryChannel, auxiliaryType: ll.packet.auxiliaryType)
        var fields = [DecodedField("PDU type", "\(name) (\(Hex.u8(pdu.type.rawValue)))"),
                      DecodedField("length", "\(pdu.length)")]
        if pdu.channelSelection2 { fields.append(DecodedField("ChSel", "CSA #2 supported")) }
        switch pdu.body {
        case .advertising(let a, let data):
            fields.append(DecodedField("AdvA", address(a, random: pdu.txRandom)))
            fields.append(DecodedField("data", Hex.string(data, separator: " ", limit: 64)))
            return ("\(name) AdvA \(address(a, random: pdu.txRandom)) \(data.count) bytes", fields)
        case .directed(let a, let t):
            fields += [DecodedField("AdvA", address(a, random: pdu.txRandom)), DecodedField("TargetA", address(t, random: pdu.rxRandom))]
            return ("\(name) AdvA \(address(a, random: pdu.txRandom)) to \(address(t, random: pdu.rxRandom))", fields)
        case .scanRequest(let s, let a):
            fields += [DecodedField("ScanA", address(s, random: pdu.txRandom)), DecodedField("AdvA", address(a, random: pdu.rxRandom))]
            return ("\(name) ScanA \(address(s, random: pdu.txRandom)) AdvA \(address(a, random: pdu.rxRandom))", fields)
        case .connectRequest(let i, let a, let d):
            fields += [DecodedField("InitA", address(i, random: pdu.txRandom)), DecodedField("AdvA", address(a, random: pdu.rxRandom)),
                       DecodedField("access address", Hex.format(d.accessAddress, width: 8)),
                       DecodedField("CRCInit", Hex.format(d.crcInit, width: 6)),
                       DecodedField("window", "\(milliseconds(Int(d.windowSize) * LLConnectionRequestData.slotMicroseconds)) ms at +\(milliseconds(Int(d.windowOffset) * LLConnectionRequestData.slotMicroseconds)) ms"),
                       DecodedField("interval", "\(milliseconds(d.intervalMicroseconds)) ms"),
                       DecodedField("latency", "\(d.latency)"),
                       DecodedField("timeout", "\(milliseconds(d.timeoutMicroseconds)) ms"),
                       DecodedField("channel map", Hex.format(d.channelMap, width: 10) + " (\(LLChannelMap.usedChannels(d.channelMap)) channels)"),
                       DecodedField("hop", "\(d.hop)"), DecodedField("SCA", "\(d.sleepClockAccuracy)")]
            return ("\(name) InitA \(address(i, random: pdu.txRandom)) AdvA \(address(a, random: pdu.rxRandom)) AA \(Hex.format(d.accessAddress, width: 8)) interval \(milliseconds(d.intervalMicroseconds)) ms latency \(d.latency) timeout \(milliseconds(d.timeoutMicroseconds)) ms", fields)
        case .extended(let e):
            var parts = [name, advModeName(e.advMode)]
            if let a = e.advA { parts.append("AdvA \(address(a, random: pdu.txRandom))"); fields.append(DecodedField("AdvA", address(a, random: pdu.txRandom))) }
            if let t = e.targetA { parts.append("TargetA \(address(t, random: pdu.rxRandom))"); fields.append(DecodedField("TargetA", address(t, random: pdu.rxRandom))) }
            if let adi = e.adi {
                parts.append("SID \(adi.setID) DID \(Hex.format(adi.dataID, width: 3))")
                fields.append(DecodedField("ADI", "SID \(adi.setID), DID \(Hex.format(adi.dataID, width: 3))"))
            }
            if let p = e.auxPtr {
                let text = "ch \(p.channel) +\(p.offsetMicroseconds) µs \(p.phy)"
                parts.append("AuxPtr " + text)
                fields.append(DecodedField("AuxPtr", text + (p.accurateClock ? ", 0–50 ppm" : ", 51–500 ppm")))
            }
            if let s = e.syncInfo {
                fields.append(DecodedField("SyncInfo", "AA \(Hex.format(s.accessAddress, width: 8)), interval \(milliseconds(Int(s.interval) * LLConnectionRequestData.slotMicroseconds)) ms, event \(s.eventCounter)"))
            }
            if let t = e.txPower { fields.append(DecodedField("TxPower", "\(t) dBm")) }
            if !e.acad.isEmpty { fields.append(DecodedField("ACAD", Hex.string(e.acad, separator: " ", limit: 64))) }
            if !e.advData.isEmpty {
                parts.append("\(e.advData.count) bytes")
                fields.append(DecodedField("data", Hex.string(e.advData, separator: " ", limit: 64)))
            }
            return (parts.joined(separator: " "), fields)
        case .undecoded:
            fields.append(DecodedField("payload", Hex.string(pdu.payload, separator: " ", limit: 64)))
            return ("\(name) \(pdu.payload.count) bytes (not decoded)", fields)
        }
    }

    static func advModeName(_ mode: UInt8) -> String {
        switch mode {
        case 0: "non-connectable"
        case 1: "connectable"
        case 2: "scannable"
        default: "AdvMode \(mode)"
        }
    }

    static func data(_ frame: DecodedFrame, _ ll: LLFrame) -> (String, [DecodedField]) {
        guard let pdu = ll.data else { return ("LL data PDU \(ll.packet.pdu.count) bytes (no header)", []) }
        let h = pdu.header
        var fields = [DecodedField("LLID", "\(h.llid) (\(h.llid.rawValue))"), DecodedField("NESN", "\(h.nesn)"),
                      DecodedField("SN", "\(h.sn)"), DecodedField("MD", h.moreData ? "1" : "0"),
                      DecodedField("length", "\(h.length)")]
        var suffix = ""
        if ll.isRetransmission {
            suffix = " (retransmission)"
            fields.append(DecodedField("retransmission", "same SN and payload as the last PDU in this direction"))
        }
        if h.isEmpty { return ("LL Empty PDU SN \(h.sn) NESN \(h.nesn)" + suffix, fields) }
        if ll.isEncrypted {
            fields.append(DecodedField("encrypted", "payload and \(LLDataPDU.micLength)-byte MIC"))
            return ("LL Encrypted PDU (\(h.llid)) \(h.length) bytes" + suffix, fields)
        }
        if ll.crc == .bad {
            fields.append(DecodedField("payload", Hex.string(pdu.payload, separator: " ", limit: 64)))
            return ("\(h.llid) \(h.length) bytes" + suffix, fields)
        }
        if h.llid == .control, let control = pdu.control {
            let (summary, more) = self.control(control)
            return (summary + suffix, fields + more)
        }
        if let l2 = frame.l2cap {
            let (summary, more) = ProtocolDescription.l2cap(l2)
            return (summary + suffix, fields + more)
        }
        fields.append(DecodedField("payload", Hex.string(pdu.payload, separator: " ", limit: 64)))
        let state = h.llid == .start ? "start" : "continuation"
        let outcome = ll.isRetransmission ? "" : (frame.isMalformed ? " (dropped)" : " (L2CAP continues)")
        return ("LL Data \(state) \(pdu.payload.count) bytes" + outcome + suffix, fields)
    }

    static func control(_ c: LLControlPDU) -> (String, [DecodedField]) {
        let name = "\(c.opcode)"
        var fields = [DecodedField("opcode", "\(name) (\(Hex.u8(c.opcode.rawValue)))")]
        var detail: [String] = []
        func add(_ label: String, _ value: String, inSummary: Bool = true) {
            fields.append(DecodedField(label, value))
            if inSummary { detail.append("\(label) \(value)") }
        }
        let slot = LLConnectionRequestData.slotMicroseconds
        switch c.body {
        case .connectionUpdate(let w, let o, let i, let l, let t, let n):
            add("interval", "\(milliseconds(Int(i) * slot)) ms")
            add("latency", "\(l)", inSummary: l != 0)
            add("timeout", "\(milliseconds(Int(t) * LLConnectionRequestData.timeoutUnitMicroseconds)) ms")
            add("window", "\(milliseconds(Int(w) * slot)) ms at +\(milliseconds(Int(o) * slot)) ms", inSummary: false)
            add("instant", "\(n)")
        case .channelMap(let m, let n):
            add("channels", "\(LLChannelMap.usedChannels(m))")
            add("map", Hex.format(m, width: 10), inSummary: false)
            add("instant", "\(n)")
        case .error(let e):
            add("reason", "\(e) (\(Hex.u8(e.rawValue)))")
        case .encryptionRequest(let rand, let ediv, let skd, let iv):
            add("EDIV", Hex.u16(ediv))
            add("Rand", Hex.format(rand, width: 16), inSummary: false)
            add("SKDc", Hex.format(skd, width: 16), inSummary: false)
            add("IVc", Hex.format(iv, width: 8), inSummary: false)
        case .encryptionResponse(let skd, let iv):
            add("SKDp", Hex.format(skd, width: 16), inSummary: false)
            add("IVp", Hex.format(iv, width: 8), inSummary: false)
        case .unknownResponse(let o):
            add("unknown type", "\(o)")
        case .features(let f):
            add("features", Hex.format(f, width: 16))
        case .version(let v, let company, let sub):
            add("version", versionName(v))
            add("company", AssignedNumbers.companyName(company) ?? Hex.u16(company))
            add("subversion", Hex.u16(sub))
        case .connectionParameters(let a, let b, let l, let t, let p, let e):
            add("interval", "\(milliseconds(Int(a) * slot))–\(milliseconds(Int(b) * slot)) ms")
            add("latency", "\(l)")
            add("timeout", "\(milliseconds(Int(t) * LLConnectionRequestData.timeoutUnitMicroseconds)) ms")
            add("preferred periodicity", "\(p)", inSummary: false)
            add("reference event", "\(e)", inSummary: false)
        case .rejectExtended(let o, let e):
            add("rejected", "\(o)")
            add("reason", "\(e) (\(Hex.u8(e.rawValue)))")
        case .dataLength(let rxOctets, let rxTime, let txOctets, let txTime):
            add("max rx", "\(rxOctets) bytes \(rxTime) µs")
            add("max tx", "\(txOctets) bytes \(txTime) µs")
        case .phys(let tx, let rx):
            add("tx", phyNames(tx))
            add("rx", phyNames(rx))
        case .phyUpdate(let c2p, let p2c, let n):
            add("C→P", c2p == 0 ? "unchanged" : phyNames(c2p))
            add("P→C", p2c == 0 ? "unchanged" : phyNames(p2c))
            add("instant", "\(n)")
        case .minUsedChannels(let phys, let minimum):
            add("PHYs", phyNames(phys))
            add("minimum channels", "\(minimum)")
        case .clockAccuracy(let sca):
            add("SCA", "\(sca)")
        case .plain:
            if !c.data.isEmpty { add("data", Hex.string(c.data, separator: " ", limit: 64), inSummary: false) }
        case .truncated(let needed):
            add("truncated", "\(c.data.count) of \(needed) bytes")
        }
        return (([name] + detail).joined(separator: " "), fields)
    }

    /// PHY bit sets (LL_PHY_REQ/RSP/UPDATE_IND): bit 0 1M, bit 1 2M, bit 2 Coded.
    static func phyNames(_ bits: UInt8) -> String {
        let names = [(UInt8(0x01), "1M"), (0x02, "2M"), (0x04, "Coded")].filter { bits & $0.0 != 0 }.map(\.1)
        return names.isEmpty ? "none" : names.joined(separator: "+")
    }

    /// LL_VERSION_IND VersNr from 6 (Assigned Numbers, Link Layer Version): 6 is 4.0 … 14 is 6.0.
    static let firstLEVersion = 6
    static let versionNames = ["4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0"]
    static func versionName(_ v: UInt8) -> String {
        let i = Int(v) - firstLEVersion
        return versionNames.indices.contains(i) ? "\(versionNames[i]) (\(v))" : "\(v)"
    }

    /// Milliseconds with at most two decimals (1.25 ms units), as the HCI descriptions print them.
    static func milliseconds(_ microseconds: Int) -> String { Format.ms(Double(microseconds) / 1000) }
}
