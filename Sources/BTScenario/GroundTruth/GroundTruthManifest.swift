import BTWire

/// One behaviour a ground-truth capture contains on purpose: a planted problem a rule must report, or a control
/// — similar behaviour on the fine side of the rule's threshold — that the rule must not report.
public struct GroundTruthItem: Sendable, Equatable, Codable {
    /// The rule's kebab name, e.g. `poll-instead-of-notify`.
    public var rule: String
    /// The connection's 1-based order of appearance in the capture (the tracker's `Connection.id`); nil for
    /// scan-level items and failed connection attempts.
    public var connection: Int?
    /// The value handle when the item is about one attribute.
    public var attributeHandle: UInt16?
    /// The span of the behaviour, capture time in Unix seconds.
    public var start: Double
    public var end: Double
    /// What happens, in plain words.
    public var note: String

    public init(rule: String, connection: Int?, attributeHandle: UInt16?, start: Double, end: Double, note: String) {
        self.rule = rule
        self.connection = connection
        self.attributeHandle = attributeHandle
        self.start = start
        self.end = end
        self.note = note
    }

    enum CodingKeys: String, CodingKey {
        case rule, connection, attributeHandle = "attribute_handle", start, end, note
    }

    /// Absent values are written as null, so every item has every key.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rule, forKey: .rule)
        try c.encode(connection, forKey: .connection)
        try c.encode(attributeHandle, forKey: .attributeHandle)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
        try c.encode(note, forKey: .note)
    }
}

/// A scan's expected duty cycle: the share of time the controller listens, all PHYs together (a 1M+Coded
/// extended scan listens on each PHY's window in turn).
public struct GroundTruthScanDuty: Sendable, Equatable, Codable {
    /// The scan's span, capture time in Unix seconds.
    public var start: Double
    public var end: Double
    /// 0...1.
    public var dutyCycle: Double
    public var note: String

    public init(start: Double, end: Double, dutyCycle: Double, note: String) {
        self.start = start
        self.end = end
        self.dutyCycle = dutyCycle
        self.note = note
    }
}

/// What a ground-truth capture contains: every planted problem and every control, and the episodes it was
/// made of (in capture order).
public struct GroundTruthManifest: Sendable, Equatable, Codable {
    public var seed: UInt64
    /// The episode catalogue the seed drew from.
    public var catalog: GroundTruth.Catalog
    public var episodes: [String]
    public var planted: [GroundTruthItem]
    public var controls: [GroundTruthItem]
    /// Scans whose duty cycle the energy model must show (stack catalogue only).
    public var scanDuty: [GroundTruthScanDuty]

    public init(seed: UInt64, catalog: GroundTruth.Catalog = .classic, episodes: [String] = [],
                planted: [GroundTruthItem] = [], controls: [GroundTruthItem] = [], scanDuty: [GroundTruthScanDuty] = []) {
        self.seed = seed
        self.catalog = catalog
        self.episodes = episodes
        self.planted = planted
        self.controls = controls
        self.scanDuty = scanDuty
    }
}

extension GroundTruthManifest {
    /// The manifest as JSON: `{"seed", "capture", "episodes", "planted": [item], "controls": [item]}`, each item
    /// `{"rule", "connection", "attribute_handle", "start", "end", "note"}` (connection and attribute_handle null
    /// when the item names none; times in Unix seconds with microseconds). Written by hand so the bytes are the
    /// same on every platform.
    public func json(capture: String? = nil) -> String {
        func string(_ s: String) -> String { "\"" + TextEscaping.escaped(s) + "\"" }
        func seconds(_ t: Double) -> String {
            let micros = Int64((t * 1e6).rounded())
            let fraction = String(micros % 1_000_000)
            return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
        }
        func item(_ i: GroundTruthItem) -> String {
            "    {\"rule\": \(string(i.rule)), \"connection\": \(i.connection.map(String.init) ?? "null"), "
                + "\"attribute_handle\": \(i.attributeHandle.map { String($0) } ?? "null"), "
                + "\"start\": \(seconds(i.start)), \"end\": \(seconds(i.end)), \"note\": \(string(i.note))}"
        }
        func list(_ items: [GroundTruthItem]) -> String {
            items.isEmpty ? "[]" : "[\n" + items.map(item).joined(separator: ",\n") + "\n  ]"
        }
        func fraction(_ v: Double) -> String {
            let tenThousandths = Int((v * 10_000).rounded())
            let digits = String(tenThousandths % 10_000)
            return "\(tenThousandths / 10_000)." + String(repeating: "0", count: 4 - digits.count) + digits
        }
        func duty(_ d: GroundTruthScanDuty) -> String {
            "    {\"start\": \(seconds(d.start)), \"end\": \(seconds(d.end)), "
                + "\"duty_cycle\": \(fraction(d.dutyCycle)), \"note\": \(string(d.note))}"
        }
        var out = "{\n  \"seed\": \(seed),\n"
        // The classic catalogue's manifests keep the layout they always had.
        if catalog != .classic { out += "  \"catalog\": \(string(catalog.rawValue)),\n" }
        if let capture { out += "  \"capture\": \(string(capture)),\n" }
        out += "  \"episodes\": [" + episodes.map(string).joined(separator: ", ") + "],\n"
        out += "  \"planted\": \(list(planted)),\n  \"controls\": \(list(controls))"
        if !scanDuty.isEmpty { out += ",\n  \"scan_duty\": [\n" + scanDuty.map(duty).joined(separator: ",\n") + "\n  ]" }
        return out + "\n}\n"
    }
}
