import BTWire
import BTCapture
import BTDecode
import BTTrack

/// How a timeline event reads, for people (`text`) and for JSON (`type` and `fields`).
public struct TimelineEventDescription {
    public var type: String
    public var text: String
    public var fields: [(String, JSONValue)]

    public static func handleName(_ handle: UInt16, _ c: Connection) -> String {
        if let name = c.gatt.name(of: handle) { return "\(name) [\(Hex.u16(handle))]" }
        return "handle \(Hex.u16(handle))"
    }

    static func ms(_ d: Duration) -> Double { (d.seconds * 1000 * 1000).rounded() / 1000 }

    /// Who did an ATT operation, for an HCI link (where `byHost` is the phone): the peer as GATT client reading
    /// the phone's own database is said so, and so is the phone's GATT server pushing values. Air links are
    /// seen from the central and keep their wording.
    static func side(_ byHost: Bool, client: Bool, _ c: Connection) -> String {
        guard c.air == nil else { return "" }
        if client { return byHost ? "" : "peer: " }
        return byHost ? "phone's server: " : ""
    }

    public static func describe(_ event: TimelineEvent, in c: Connection) -> TimelineEventDescription {
        switch event.kind {
        case .connected(let parameters):
            var text = "connected"
            if let air = c.air {
                text = (air.auxiliaryRequest ? "AUX_CONNECT_REQ" : "CONNECT_IND")
                    + ": central \(air.centralAddress.map { "\($0)" } ?? "?") → peripheral "
                    + (c.peerAddress.map { "\($0)" } ?? "?") + " AA \(air.accessAddressText)"
            } else if let peer = c.peerAddress { text += " to \(peer)" }
            if let parameters { text += ", " + parameters.description }
            if c.scanningAtConnect { text += " (scanning still on)" }
            if c.advertisingAtConnect { text += " (advertising on)" }
            var fields: [(String, JSONValue)] = []
            if let parameters { fields.append(("parameters", parametersJSON(parameters))) }
            return .init(type: "connected", text: text, fields: fields)
        case .mtuExchange(let client, let server):
            let effective = server.map { max(23, min(client, $0)) }
            return .init(type: "mtu_exchange",
                         text: "MTU exchange: client \(client), server \(server.map(String.init) ?? "?") → \(effective.map(String.init) ?? "?")",
                         fields: [("client_mtu", .int(client)), ("server_mtu", server.map { .int($0) } ?? .null),
                                  ("effective_mtu", effective.map { .int($0) } ?? .null)])
        case .enhancedATTBearers(let requested, let opened, let result, let mtu):
            let who = event.byHost ? "host" : "peer"
            var text = "EATT: \(opened) of \(Plural.of(requested, "bearer")) opened (\(who) asked)"
            if let mtu, opened > 0 { text += ", MTU \(mtu)" }
            let resultName = L2CAPSignal.resultName(result, for: .creditBasedConnectionResponse)
            if result != 0 { text += " — " + (resultName ?? "result \(Hex.u16(result))") }
            return .init(type: "eatt_bearers", text: text,
                         fields: [("requested", .int(requested)), ("opened", .int(opened)),
                                  ("result", .string(Hex.u16(result))), ("result_name", resultName.map { .string($0) } ?? .null),
                                  ("by_host", .bool(event.byHost)), ("mtu", mtu.map { .int($0) } ?? .null)])
        case .enhancedATTReconfigured(let result, let mtu):
            let resultName = L2CAPSignal.resultName(result, for: .creditBasedReconfigureResponse)
            let text = result == 0
                ? "EATT bearers reconfigured" + (mtu.map { ", MTU \($0)" } ?? "")
                : "EATT reconfiguration refused — " + (resultName ?? "result \(Hex.u16(result))")
            return .init(type: "eatt_reconfigured", text: text,
                         fields: [("result", .string(Hex.u16(result))), ("result_name", resultName.map { .string($0) } ?? .null),
                                  ("by_host", .bool(event.byHost)), ("mtu", mtu.map { .int($0) } ?? .null)])
        case .parametersRequested(let range, let source):
            let by = source == .host ? "host asks" : source == .l2capRequest ? "peripheral asks (L2CAP)" : "peer asks (LL)"
            return .init(type: "parameters_requested", text: "\(by) for \(range.description)",
                         fields: [("source", .string(source.rawValue)),
                                  ("interval_min_ms", .number(Format.ms(HCIUnits.intervalToMilliseconds(range.intervalMin)))),
                                  ("interval_max_ms", .number(Format.ms(HCIUnits.intervalToMilliseconds(range.intervalMax)))),
                                  ("latency", .int(Int(range.latency))),
                                  ("supervision_timeout_ms", .number(Format.ms(HCIUnits.timeoutToMilliseconds(range.supervisionTimeout))))])
        case .parameterRequestAnswered(let accepted):
            return .init(type: "parameter_request_answered", text: "parameter request \(accepted ? "accepted" : "rejected")",
                         fields: [("accepted", .bool(accepted))])
        case .parametersChanged(let p):
            return .init(type: "parameters_changed", text: "parameters now " + p.description,
                         fields: [("parameters", parametersJSON(p))])
        case .phyChanged(let tx, let rx):
            let names: [UInt8: String] = [1: "1M", 2: "2M", 3: "Coded"]
            return .init(type: "phy_changed", text: "PHY tx \(names[tx] ?? Hex.u8(tx)) rx \(names[rx] ?? Hex.u8(rx))",
                         fields: [("tx_phy", .string(names[tx] ?? Hex.u8(tx))), ("rx_phy", .string(names[rx] ?? Hex.u8(rx)))])
        case .dataLengthChanged(let tx, let rx):
            return .init(type: "data_length_changed", text: "data length tx \(tx) rx \(rx) octets",
                         fields: [("max_tx_octets", .int(Int(tx))), ("max_rx_octets", .int(Int(rx)))])
        case .encryptionChanged(let enabled, let status):
            return .init(type: "encryption_changed",
                         text: "encryption \(enabled ? "on" : "off")" + (status == .success ? "" : " (\(status))"),
                         fields: [("enabled", .bool(enabled)), ("status", .string(Hex.u8(status.rawValue)))])
        case .pairing(let code, let sent, let detail):
            return .init(type: "pairing", text: "SMP \(sent ? "→" : "←") \(detail)",
                         fields: [("smp_code", .string(Hex.u8(code.rawValue))), ("name", .string(code.description)),
                                  ("sent", .bool(sent))])
        case .discovery(let i):
            let d = c.discoveries[i]
            let duration = d.last.timestamp - d.first.timestamp
            let text = side(event.byHost, client: true, c) + "discovery\(event.byHost || c.air != nil ? "" : " of the phone's database"): \(d.description): \(d.found) found in \(Plural.of(d.requests, "request")), \(TimeFormat.human(duration))" + (d.completed ? "" : " (incomplete)")
            return .init(type: "discovery", text: text,
                         fields: [("procedure", .string(d.kind.rawValue)), ("start_handle", .string(Hex.u16(d.startHandle))),
                                  ("end_handle", .string(Hex.u16(d.endHandle))),
                                  ("uuid", d.uuid.map { .string($0.description) } ?? .null),
                                  ("requests", .int(d.requests)), ("found", .int(d.found)),
                                  ("completed", .bool(d.completed)), ("end", .number(d.last.timestamp.decimalString())),
                                  ("by_host", .bool(event.byHost))])
        case .subscription(let cccd, let valueHandle, let value, let sent):
            let what = value == 0 ? "unsubscribed from" : value & 2 != 0 && value & 1 == 0 ? "subscribed to indications of" : "subscribed to notifications of"
            let target = valueHandle.map { handleName($0, c) } ?? "CCCD \(Hex.u16(cccd))"
            return .init(type: "subscription", text: side(sent, client: true, c) + "\(what) \(target)",
                         fields: [("by_host", .bool(sent)), ("cccd_handle", .string(Hex.u16(cccd))),
                                  ("value_handle", valueHandle.map { .string(Hex.u16($0)) } ?? .null),
                                  ("value", .string(value == 0 ? "off" : value == 2 ? "indicate" : value == 1 ? "notify" : Hex.u16(value)))])
        case .activity(let i):
            let run = c.runs[i]
            let pushed = run.kind == .notification || run.kind == .indication
            var text = side(run.sent, client: !pushed, c) + "\(Plural.of(run.count, run.kind.singular, plural: run.kind.plural)) \(handleName(run.handle, c))"
            if let rate = run.rate, run.count > 2 { text += " at " + Format.ms((rate * 10).rounded() / 10) + " Hz" }
            if run.count > 1 { text += " over \(TimeFormat.human(run.last.timestamp - run.first.timestamp))" }
            if run.blobReads > 0 {
                text += " (long read: +\(Plural.of(run.blobReads, "blob read")), \(Plural.of(run.bytes, "byte")))"
            }
            if let value = c.usage[run.handle]?.lastValue, run.kind == .notification || run.kind == .indication || run.kind == .read {
                text += ", last " + CharacteristicValue.describe(value, uuid: c.gatt.characteristic(valueHandle: run.handle)?.uuid)
            }
            return .init(type: "activity", text: text,
                         fields: [("operation", .string(run.kind.rawValue)), ("handle", .string(Hex.u16(run.handle))),
                                  ("name", c.gatt.name(of: run.handle).map { .string($0) } ?? .null),
                                  ("by_host", .bool(run.sent)), ("count", .int(run.count)), ("bytes", .int(run.bytes)),
                                  ("blob_reads", .int(run.blobReads)),
                                  ("end", .number(run.last.timestamp.decimalString())),
                                  ("rate_hz", run.rate.map { .number(Format.ms(($0 * 1000).rounded() / 1000)) } ?? .null)])
        case .l2capChannel(let psm, let requested, let opened, let result, let response):
            let name = L2CAPPSM(rawValue: psm).description
            let resultName = L2CAPSignal.resultName(result, for: L2CAPSignalCode(rawValue: response))
            let who = event.byHost ? "host asked" : "peer asked"
            let channels = requested == 1 ? "channel" : "\(opened) of \(requested) channels"
            let text = opened > 0
                ? "L2CAP \(channels) \(name) opened (\(who))"
                : "L2CAP \(channels) \(name) refused (\(who)): \(resultName ?? "result") (\(Hex.u16(result)))"
            return .init(type: "l2cap_channel", text: text,
                         fields: [("psm", .string(Hex.u16(psm))), ("psm_name", L2CAPPSM(rawValue: psm).name.map { .string($0) } ?? .null),
                                  ("requested", .int(requested)), ("opened", .int(opened)),
                                  ("result", .string(Hex.u16(result))), ("result_name", resultName.map { .string($0) } ?? .null)])
        case .executeWrite(let executed, let prepared, let bytes, let handles):
            let targets = handles.count == 1 ? handleName(handles[0], c) : Plural.of(handles.count, "attribute")
            let what = prepared == 0
                ? "no prepared writes seen"
                : "\(Plural.of(prepared, "prepared write")) to \(targets), \(Plural.of(bytes, "byte"))"
                    + (handles.count > 1 ? " (reliable write)" : " (long write)")
            return .init(type: "execute_write", text: side(event.byHost, client: true, c) + (executed ? "executed queued writes: " : "cancelled queued writes: ") + what,
                         fields: [("by_host", .bool(event.byHost)), ("executed", .bool(executed)), ("prepared", .int(prepared)), ("bytes", .int(bytes)),
                                  ("handles", .array(handles.map { .string(Hex.u16($0)) }))])
        case .attError(let request, let handle, let error):
            let refusedBy = c.air == nil && !event.byHost ? " (the phone's server refused it)" : ""
            return .init(type: "att_error", text: side(event.byHost, client: true, c) + "\(request) \(handleName(handle, c)) failed: \(error)" + refusedBy,
                         fields: [("by_host", .bool(event.byHost)), ("request", .string(Hex.u8(request.rawValue))), ("handle", .string(Hex.u16(handle))),
                                  ("error", .string(Hex.u8(error.rawValue))), ("error_name", .string(error.name))])
        case .attTimeout(let request, let handle, let waited, let timedOut):
            let target = handle.map { " " + handleName($0, c) } ?? ""
            // Not timed out: the link ended, or the next request came first (on the air, most often a response
            // the sniffer did not hear).
            // The next request is ATT traffic, so it comes no later than the link's last ATT PDU; the link's end does.
            let answeredBy = event.at.timestamp.nanoseconds &+ Int64(saturating: waited.seconds * 1e9)
            let untilEnd = c.lastATT.map { answeredBy > $0.timestamp.nanoseconds } ?? true
            let text = timedOut ? "ATT timeout: \(request)\(target) unanswered for \(TimeFormat.human(waited))"
                : untilEnd ? "\(request)\(target) still unanswered when the link ended (\(TimeFormat.human(waited)))"
                : "\(request)\(target) unanswered before the next request (\(TimeFormat.human(waited)))"
                    + (c.air != nil ? ": the sniffer may have missed the response" : "")
            let indication = request == .handleValueIndication
            let who = indication ? side(event.byHost, client: false, c) : side(event.byHost, client: true, c)
            return .init(type: "att_timeout", text: who + text,
                         fields: [("by_host", .bool(event.byHost)), ("request", .string(Hex.u8(request.rawValue))), ("handle", handle.map { .string(Hex.u16($0)) } ?? .null),
                                  ("waited_ms", .number(Format.ms(ms(waited)))), ("timed_out", .bool(timedOut))])
        case .idle(let until):
            let d = until.timestamp - event.at.timestamp
            return .init(type: "idle", text: "idle \(TimeFormat.human(d)) (no ATT traffic)",
                         fields: [("end", .number(until.timestamp.decimalString())), ("duration_ms", .number(Format.ms(ms(d))))])
        case .disconnected(let reason, let local):
            let r = reason.map { "\($0) (\(Hex.u8($0.rawValue)))" } ?? "?"
            let by = c.air != nil ? (local ? ", LL_TERMINATE_IND from the central" : ", LL_TERMINATE_IND from the peripheral")
                : local ? ", requested by the host" : ""
            return .init(type: "disconnected", text: "disconnected: \(r)" + by,
                         fields: [("reason", reason.map { .string(Hex.u8($0.rawValue)) } ?? .null),
                                  ("requested_by_host", .bool(local))])
        case .closedByReset:
            return .init(type: "closed_by_reset", text: "link gone: controller reset, removed, or handle reused without a disconnect in the capture", fields: [])
        case .linkLayerControl(let opcode, let summary):
            return linkLayerControl(opcode, summary, byCentral: event.byHost)
        case .linkLost(let silence):
            return .init(type: "link_lost",
                         text: "link lost (inferred): no packet for \(TimeFormat.human(silence)), its supervision timeout, while the capture went on",
                         fields: [("silence_ms", .number(Format.ms(ms(silence)))), ("inferred", .bool(true))])
        }
    }

    /// An LL control PDU as `decode` names it, with what it changes.
    static func linkLayerControl(_ opcode: LLControlOpcode, _ summary: LLControlSummary, byCentral: Bool)
        -> TimelineEventDescription
    {
        var text = "\(byCentral ? "C→P" : "P→C") \(opcode)"
        var fields: [(String, JSONValue)] = [("opcode", .string(Hex.u8(opcode.rawValue))), ("name", .string(opcode.description)),
                                             ("by_central", .bool(byCentral))]
        switch summary {
        case .connectionUpdate(let p, let instant):
            text += " \(p.description) instant \(instant)"
            fields += [("parameters", parametersJSON(p)), ("instant", .int(Int(instant)))]
        case .channelMap(let used, let instant):
            text += " \(used) channels instant \(instant)"
            fields += [("channels", .int(used)), ("instant", .int(Int(instant)))]
        case .parameterRange(let range):
            text += " " + range.description
        case .features(let features):
            text += " features \(Hex.format(features, width: 16))"
            fields.append(("features", .string(Hex.format(features, width: 16))))
        case .version(let number, let company, let subversion):
            let version = LinkLayerDescription.versionName(number)
            text += " Bluetooth \(version) \(CompanyID(rawValue: company)) subversion \(Hex.u16(subversion))"
            fields += [("version", .string(version)), ("company_id", .string(Hex.u16(company))),
                       ("subversion", .string(Hex.u16(subversion)))]
        case .dataLength(let rx, let tx):
            text += " max tx \(tx) rx \(rx) octets"
            fields += [("max_tx_octets", .int(Int(tx))), ("max_rx_octets", .int(Int(rx)))]
        case .phys(let tx, let rx):
            text += " tx \(LinkLayerDescription.phyNames(tx)) rx \(LinkLayerDescription.phyNames(rx))"
        case .phyUpdate(let cp, let pc, let instant):
            let names: [UInt8: String] = [0: "unchanged", 1: "1M", 2: "2M", 3: "Coded"]
            text += " C→P \(names[cp] ?? "?") P→C \(names[pc] ?? "?") instant \(instant)"
            fields.append(("instant", .int(Int(instant))))
        case .rejected(let rejected, let reason):
            if let rejected { text += " of \(rejected)" }
            if let reason { text += ": \(reason) (\(Hex.u8(reason.rawValue)))" }
            fields.append(("reason", reason.map { .string(Hex.u8($0.rawValue)) } ?? .null))
        case .plain:
            break
        }
        return .init(type: "ll_control", text: text, fields: fields)
    }


    static func parametersJSON(_ p: ConnectionParameters) -> JSONValue {
        .object([("interval_ms", .number(Format.ms(p.intervalMilliseconds))), ("latency", .int(Int(p.latency))),
                 ("supervision_timeout_ms", .number(Format.ms(p.supervisionTimeoutMilliseconds)))])
    }
}
