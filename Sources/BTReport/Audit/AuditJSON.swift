import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules

/// `btlens audit --format json`: a top-level `findings` array; schema in Schemas/audit.schema.json.
public enum AuditJSON {
    public static func finding(_ f: Finding) -> JSONValue {
        var m: [(String, JSONValue)] = []
        m.append(("rule", .string(f.rule)))
        m.append(("id", .string(f.id)))
        m.append(("severity", .string(f.severity.rawValue)))
        m.append(("file", .string(f.file)))
        m.append(("controller", .int(Int(f.controller))))
        if let c = f.connection {
            m.append(("connection", .object([
                ("id", .int(c.id)), ("handle", .string(Hex.u16(c.handle))),
                ("peer_address", c.peerAddress.map { .string($0.description) } ?? .null),
                ("start", .number(c.start.decimalString())),
            ])))
        } else {
            m.append(("connection", .null))
        }
        m.append(("attribute_handle", f.attributeHandle.map { .string(Hex.u16($0)) } ?? .null))
        m.append(("start", .number(f.start.decimalString())))
        m.append(("end", .number(f.end.decimalString())))
        m.append(("records", .array(f.records.map { r in
            .object([("number", .int(r.number)), ("offset", .int(Int(r.offset))), ("length", .int(r.length)),
                     ("time", .number(r.timestamp.decimalString()))])
        })))
        m.append(("message", .string(f.message)))
        m.append(("advice", .string(f.advice)))
        m.append(("fingerprint", .string(f.fingerprint)))
        // Only when a bug report named the apps: reports of captures without one stay as they were.
        if let owner = f.owner { m.append(("owner", AttributionReport.owner(owner))) }
        m.append(("cost", f.cost.map { c in
            // "measured_cap" only where the counters capped the saving: other reports stay as they were.
            .object([("phone", EnergyJSON.cost(c.phone)), ("peripheral", EnergyJSON.cost(c.peripheral)),
                     ("host_mc", EnergyJSON.round(c.hostMC, 4))] + (c.measuredCap ? [("measured_cap", .bool(true))] : []))
        } ?? .null))
        return .object(m)
    }

    public static func render(_ run: AuditRun) -> String {
        var text = ""
        write(run, to: JSONStreamWriter { text += $0 })
        return text
    }

    /// The report piece by piece, byte for byte what `render` returns: findings are made into JSON one at a time
    /// and let go, so the report is never held whole (63 MB of JSON for 31,000 findings).
    public static func write(_ run: AuditRun, to writer: JSONStreamWriter) {
        writer.object { root in
            root.member("tool", .object([("name", .string("btlens")), ("version", .string(run.version))]))
            root.member("fail_on", run.failOn.map { .string($0.rawValue) } ?? .string("never"))
            root.member("failed", .bool(run.failed))
            root.member("status", .string(run.status.rawValue))
            root.member("summary", .object([("error", .int(run.count(.error))), ("warning", .int(run.count(.warning))),
                                            ("info", .int(run.count(.info)))]))
            root.array("captures", run.captures, capture)
            root.member("waste", run.wasteLine.map { line in .object([("charge_mc", EnergyJSON.round(run.wasteMC, 4)),
                                                                      ("host_mc", EnergyJSON.round(run.hostWasteMC, 4)),
                                                                      ("summary", .string(line))]) } ?? .null)
            root.array("findings", run.findings, finding)
        }
    }

    static func capture(_ c: AuditedCapture) -> JSONValue {
        var fields: [(String, JSONValue)] = [("file", .string(c.file)), ("error", c.error.map { .string($0) } ?? .null),
                 ("records", .int(c.records)), ("connections", .int(c.connections)),
                 ("platform", c.platform.platform.map { .string($0.rawValue) } ?? .null),
                 ("radio_charge_mc", c.radioChargeMC.map { EnergyJSON.round($0, 4) } ?? .null),
                 ("radio_charge_model_mc", c.modelRadioChargeMC.map { EnergyJSON.round($0, 4) } ?? .null),
                 ("counted_s", c.countedSeconds.map { EnergyJSON.round($0, 3) } ?? .null),
                 ("capture_s", EnergyJSON.round(c.captureSeconds, 3)),
                 ("platform_evidence", c.platform.evidence.map { .string($0) } ?? .null),
                 ("notes", .array(c.notes.map { .string($0) })),
                 ("findings", .int(c.findings.count)), ("suppressed", .int(c.suppressed))]
        if let a = c.attribution { fields.append(("attribution", AttributionReport.json(a, model: c.captureEnd))) }
        if let focus = c.focus { fields.append(("app", AttributionReport.json(focus))) }
        return .object(fields)
    }

    /// The baseline file: the fingerprints of accepted findings, with enough context to review them.
    public static func baseline(_ findings: [Finding]) -> String {
        JSONValue.object([
            ("version", .int(1)),
            ("findings", .array(findings.map { f in
                .object([("fingerprint", .string(f.fingerprint)), ("rule", .string(f.rule)), ("file", .string(f.file)),
                         ("message", .string(f.message))])
            })),
        ]).serialized()
    }
}
