import BTWire

extension L2CAPSignal {
    /// A connection interval in HCI units (×1.25 ms) as milliseconds.
    public static func intervalMilliseconds(_ units: UInt16) -> Double { Double(units) * 1.25 }
    /// A supervision timeout in HCI units (×10 ms) as milliseconds.
    public static func timeoutMilliseconds(_ units: UInt16) -> Double { Double(units) * 10 }
}

/// One line and a field tree for `btlens decode`. Every line names the identifier, which pairs a request with
/// its response.
extension L2CAPSignal: PacketDescribing {
    /// e.g. `Connection Parameter Update Request id 3 interval 7.5-15 ms latency 0 timeout 2000 ms`,
    /// `Disconnection Request id 2 dcid 0x0041 scid 0x0040`.
    public var summary: String {
        let head = code.description + " id " + String(identifier)
        switch command {
        case .commandReject(let reason, _):
            return head + ": " + PDUFieldText.named(Self.rejectReasonName(reason), reason)
        case .connectionRequest(let psm, let scid):
            return head + " psm " + Self.psmText(psm) + " scid " + Hex.u16(scid)
        case .connectionResponse(let dcid, let scid, let result, let status):
            return head + " dcid " + Hex.u16(dcid) + " scid " + Hex.u16(scid) + " result " + resultText(result)
                + (result == 1 ? " status " + PDUFieldText.named(Self.connectionStatusName(status), status) : "")
        case .configurationRequest(let dcid, let flags, let options):
            return head + " dcid " + Hex.u16(dcid) + " flags " + Hex.u16(flags) + " options len " + String(options.count)
        case .configurationResponse(let scid, let flags, let result, let options):
            return head + " scid " + Hex.u16(scid) + " flags " + Hex.u16(flags) + " result " + resultText(result)
                + " options len " + String(options.count)
        case .disconnectionRequest(let dcid, let scid), .disconnectionResponse(let dcid, let scid):
            return head + " dcid " + Hex.u16(dcid) + " scid " + Hex.u16(scid)
        case .echoRequest(let data), .echoResponse(let data):
            return head + " len " + String(data.count)
        case .informationRequest(let type):
            return head + " " + PDUFieldText.named(Self.infoTypeName(type), type)
        case .informationResponse(let type, let result, let data):
            return head + " " + PDUFieldText.named(Self.infoTypeName(type), type) + " result " + resultText(result)
                + (data.isEmpty ? "" : " " + Hex.string(data))
        case .connectionParameterUpdateRequest(let min, let max, let latency, let timeout):
            return head + " interval " + Self.intervalRange(min, max) + " latency " + String(latency) + " timeout "
                + PDUFieldText.milliseconds(timeout, stepHundredths: 1000)
        case .connectionParameterUpdateResponse(let result):
            return head + " " + (Self.resultName(result, for: code) ?? "result " + Hex.u16(result))
        case .leCreditBasedConnectionRequest(let spsm, let scid, let mtu, let mps, let credits):
            return head + " spsm " + Self.psmText(spsm) + " scid " + Hex.u16(scid) + " mtu " + String(mtu) + " mps "
                + String(mps) + " credits " + String(credits)
        case .leCreditBasedConnectionResponse(let dcid, let mtu, let mps, let credits, let result):
            return head + " dcid " + Hex.u16(dcid) + " mtu " + String(mtu) + " mps " + String(mps) + " credits "
                + String(credits) + " result " + resultText(result)
        case .flowControlCreditIndication(let cid, let credits):
            return head + " cid " + Hex.u16(cid) + " credits " + String(credits)
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let scids):
            return head + " spsm " + Self.psmText(spsm) + " mtu " + String(mtu) + " mps " + String(mps) + " credits "
                + String(credits) + " scids " + Self.cidList(scids)
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let dcids):
            return head + " mtu " + String(mtu) + " mps " + String(mps) + " credits " + String(credits) + " result "
                + resultText(result) + " dcids " + Self.cidList(dcids)
        case .creditBasedReconfigureRequest(let mtu, let mps, let dcids):
            return head + " mtu " + String(mtu) + " mps " + String(mps) + " dcids " + Self.cidList(dcids)
        case .creditBasedReconfigureResponse(let result):
            return head + " result " + resultText(result)
        case .unknown(let data):
            return head + " len " + String(data.count)
        case .malformed(let reason):
            return "Malformed " + head + ": " + reason
        }
    }

    public var fields: [DecodedField] {
        var out = [
            DecodedField("Code", PDUFieldText.named(code.name, code.rawValue)),
            DecodedField("Identifier", String(identifier)),
            DecodedField("Length", String(length)),
        ]
        func add(_ name: String, _ value: String) { out.append(DecodedField(name, value)) }
        func cid(_ name: String, _ value: UInt16) { add(name, Hex.u16(value)) }
        switch command {
        case .commandReject(let reason, let data):
            add("Reason", PDUFieldText.named(Self.rejectReasonName(reason), reason))
            if !data.isEmpty { add("Data", PDUFieldText.hex(data)) }
        case .connectionRequest(let psm, let scid):
            add("PSM", Self.psmText(psm))
            cid("Source CID", scid)
        case .connectionResponse(let dcid, let scid, let result, let status):
            cid("Destination CID", dcid)
            cid("Source CID", scid)
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
            add("Status", PDUFieldText.named(Self.connectionStatusName(status), status))
        case .configurationRequest(let dcid, let flags, let options):
            cid("Destination CID", dcid)
            add("Flags", Hex.u16(flags) + (flags & 1 != 0 ? " continuation" : ""))
            add("Options", PDUFieldText.hex(options))
        case .configurationResponse(let scid, let flags, let result, let options):
            cid("Source CID", scid)
            add("Flags", Hex.u16(flags) + (flags & 1 != 0 ? " continuation" : ""))
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
            add("Options", PDUFieldText.hex(options))
        case .disconnectionRequest(let dcid, let scid), .disconnectionResponse(let dcid, let scid):
            cid("Destination CID", dcid)
            cid("Source CID", scid)
        case .echoRequest(let data), .echoResponse(let data):
            add("Data", PDUFieldText.value(data))
        case .informationRequest(let type):
            add("InfoType", PDUFieldText.named(Self.infoTypeName(type), type))
        case .informationResponse(let type, let result, let data):
            add("InfoType", PDUFieldText.named(Self.infoTypeName(type), type))
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
            add("Data", PDUFieldText.hex(data))
        case .connectionParameterUpdateRequest(let min, let max, let latency, let timeout):
            add("Interval Min", PDUFieldText.interval(min))
            add("Interval Max", PDUFieldText.interval(max))
            add("Latency", String(latency) + " events")
            add("Timeout", PDUFieldText.timeout(timeout))
        case .connectionParameterUpdateResponse(let result):
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
        case .leCreditBasedConnectionRequest(let spsm, let scid, let mtu, let mps, let credits):
            add("SPSM", Self.psmText(spsm))
            cid("Source CID", scid)
            add("MTU", String(mtu))
            add("MPS", String(mps))
            add("Initial Credits", String(credits))
        case .leCreditBasedConnectionResponse(let dcid, let mtu, let mps, let credits, let result):
            cid("Destination CID", dcid)
            add("MTU", String(mtu))
            add("MPS", String(mps))
            add("Initial Credits", String(credits))
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
        case .flowControlCreditIndication(let channel, let credits):
            cid("CID", channel)
            add("Credits", String(credits))
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let scids):
            add("SPSM", Self.psmText(spsm))
            add("MTU", String(mtu))
            add("MPS", String(mps))
            add("Initial Credits", String(credits))
            add("Source CIDs", Self.cidList(scids))
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let dcids):
            add("MTU", String(mtu))
            add("MPS", String(mps))
            add("Initial Credits", String(credits))
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
            add("Destination CIDs", Self.cidList(dcids))
        case .creditBasedReconfigureRequest(let mtu, let mps, let dcids):
            add("MTU", String(mtu))
            add("MPS", String(mps))
            add("Destination CIDs", Self.cidList(dcids))
        case .creditBasedReconfigureResponse(let result):
            add("Result", PDUFieldText.named(Self.resultName(result, for: code), result))
        case .unknown(let data):
            add("Data", PDUFieldText.hex(data))
        case .malformed(let reason):
            add("Malformed", reason)
            if !data.isEmpty { add("Data", PDUFieldText.hex(data)) }
        }
        return out
    }

    /// The result's name, or its hex when reserved.
    func resultText(_ result: UInt16) -> String {
        Self.resultName(result, for: code) ?? Hex.u16(result)
    }

    /// `SDP (0x0001)`, or just `0x0080` for a dynamic PSM.
    static func psmText(_ psm: L2CAPPSM) -> String { PDUFieldText.named(psm.name, psm.rawValue) }

    /// `7.5-15 ms`, or `30 ms` when min and max agree.
    static func intervalRange(_ min: UInt16, _ max: UInt16) -> String {
        if min == max { return PDUFieldText.milliseconds(min, stepHundredths: 125) }
        let low = PDUFieldText.milliseconds(min, stepHundredths: 125)
        return String(low.dropLast(3)) + "-" + PDUFieldText.milliseconds(max, stepHundredths: 125)
    }

    /// `0x0040,0x0041` (a trailing odd byte is shown as `+1 byte`).
    static func cidList(_ list: UInt16List) -> String {
        let cids = list.map(Hex.u16).joined(separator: ",")
        let trailing = list.trailingBytes.isEmpty ? "" : " +" + String(list.trailingBytes.count) + " byte"
        return (cids.isEmpty ? "none" : cids) + trailing
    }
}
