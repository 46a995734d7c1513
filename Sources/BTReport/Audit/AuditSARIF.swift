import BTWire
import BTCapture
import BTTrack
import BTRules

/// SARIF 2.1.0: `tool.driver.rules` from the catalogue, each result with `ruleId` and a physical location in the
/// capture file whose region is the cited record's byte offset and length. `invocations` says whether every
/// capture could be read.
public enum AuditSARIF {
    static func level(_ s: Severity) -> String {
        switch s {
        case .info: "note"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func render(_ run: AuditRun) -> String {
        var text = ""
        write(run, to: JSONStreamWriter { text += $0 })
        return text
    }

    /// The log piece by piece, byte for byte what `render` returns: each result is made when it is written and let
    /// go, so the log is never held whole.
    public static func write(_ run: AuditRun, to writer: JSONStreamWriter) {
        let catalogue = RuleRegistry.descriptions
        let rules: [JSONValue] = catalogue.map { d in
            .object([
                ("id", .string(d.id)),
                ("name", .string(d.name)),
                ("shortDescription", .object([("text", .string(d.title))])),
                ("fullDescription", .object([("text", .string(d.rationale))])),
                ("help", .object([("text", .string(d.advice)),
                                  ("markdown", .string("**CoreBluetooth:** \(d.coreBluetooth)\n\n**Android:** \(d.android)"))])),
                ("defaultConfiguration", .object([("level", .string(level(d.defaultSeverity)))])),
                ("properties", .object([("category", .string(d.category.rawValue)),
                                        ("tags", .array([.string("bluetooth"), .string(d.category.rawValue)]))])),
            ])
        }
        // Each capture once, in input order; results and notifications point at it by index. Looked up in
        // dictionaries (a linear search per finding was quadratic in large runs), its URI encoded once.
        var artifacts: [String] = []
        var artifactIndex: [String: Int] = [:]
        for c in run.captures where artifactIndex[c.file] == nil {
            artifactIndex[c.file] = artifacts.count
            artifacts.append(c.file)
        }
        let artifactURIs = artifacts.map(uri)
        func artifactLocation(_ file: String) -> JSONValue {
            let index = artifactIndex[file]
            return .object([("uri", .string(index.map { artifactURIs[$0] } ?? uri(file))), ("index", .int(index ?? 0))])
        }
        var ruleIndex: [String: Int] = [:]
        for (i, d) in catalogue.enumerated() where ruleIndex[d.id] == nil { ruleIndex[d.id] = i }
        func result(_ f: Finding) -> JSONValue {
            var region: [(String, JSONValue)] = []
            if let r = f.records.first {
                region.append(("byteOffset", .int(Int(r.offset))))
                region.append(("byteLength", .int(max(r.length, 1))))
            }
            var location: [(String, JSONValue)] = [("artifactLocation", artifactLocation(f.file))]
            if !region.isEmpty { location.append(("region", .object(region))) }
            var properties: [(String, JSONValue)] = [
                ("rule", .string(f.rule)), ("controller", .int(Int(f.controller))),
                ("start", .number(f.start.decimalString())), ("end", .number(f.end.decimalString())),
                ("records", .array(f.records.map { .int($0.number) })),
            ]
            if let c = f.connection {
                properties.append(("connection", .string(Hex.u16(c.handle))))
                if let peer = c.peerAddress { properties.append(("peer_address", .string(peer.description))) }
            }
            if let h = f.attributeHandle { properties.append(("attribute_handle", .string(Hex.u16(h)))) }
            if let owner = f.owner {
                properties.append(("owner", .string(owner.name)))
                properties.append(("owner_evidence", .string(owner.evidence)))
            }
            return .object([
                ("ruleId", .string(f.id)),
                ("ruleIndex", .int(ruleIndex[f.id] ?? 0)),
                ("level", .string(level(f.severity))),
                ("message", .object([("text", .string(f.message + " " + f.advice))])),
                ("locations", .array([.object([("physicalLocation", .object(location))])])),
                ("partialFingerprints", .object([("btlens/v2", .string(f.fingerprint))])),
                ("properties", .object(properties)),
            ])
        }
        // A capture that could not be read was not audited: the run did not execute successfully, and each such
        // capture gets an error notification (an absence of results would read as a clean capture).
        let notifications: [JSONValue] = run.captures.compactMap { c in
            c.error.map { error in
                .object([
                    ("level", .string("error")),
                    ("message", .object([("text", .string("cannot read the capture: \(error)"))])),
                    ("locations", .array([.object([("physicalLocation", .object([
                        ("artifactLocation", artifactLocation(c.file)),
                    ]))])])),
                ])
            }
        }
        var invocation: [(String, JSONValue)] = [("executionSuccessful", .bool(run.status != .unreadable))]
        if !notifications.isEmpty { invocation.append(("toolExecutionNotifications", .array(notifications))) }
        writer.object { root in
            root.member("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json"))
            root.member("version", .string("2.1.0"))
            root.objects("runs", CollectionOfOne(())) { _, r in
                r.member("tool", .object([("driver", .object([
                    ("name", .string("btlens")),
                    ("version", .string(run.version)),
                    ("informationUri", .string("https://btlens.invalid/rules")),
                    ("rules", .array(rules)),
                ]))]))
                r.member("invocations", .array([.object(invocation)]))
                r.member("artifacts", .array(artifactURIs.map { .object([("location", .object([("uri", .string($0))]))]) }))
                r.array("results", run.findings, result)
                r.member("columnKind", .string("unicodeCodePoints"))
            }
        }
    }

    /// A capture's path as a URI reference: a relative path stays relative (SARIF viewers resolve it against the
    /// repository), an absolute one becomes a `file://` URI, and "-" is stdin. Every UTF-8 byte other than RFC 3986's
    /// unreserved characters (ALPHA, DIGIT, "-", ".", "_", "~") and the "/" between segments is percent-encoded, so
    /// the result is a valid reference whatever the file is called: a space, "#", "?", "%", "[" or a non-ASCII name
    /// included, and a ":" that would otherwise make the first segment read as a scheme.
    static func uri(_ path: String) -> String {
        if path == "-" { return "stdin" }
        let hex = Array("0123456789ABCDEF".utf8)
        var out = Array((path.hasPrefix("/") ? "file://" : "").utf8)
        out.reserveCapacity(out.count + path.utf8.count)
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
