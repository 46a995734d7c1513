import Foundation
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules

/// One side of `btlens diff`: a capture audited and priced here, or an `audit --format json` report (findings
/// and the captures' radio charge, no activities).
public struct DiffSide: Sendable {
    /// A finding as diff compares it: by fingerprint, shown by its rule and message.
    public struct Item: Sendable {
        public var fingerprint: String
        public var id: String
        public var rule: String
        public var severity: Severity
        public var message: String
        public var chargeMC: Double
        /// The finding as `audit --format json` prints it.
        public var json: JSONValue
    }

    public var label: String
    public var findings: [Item]
    /// The phone's radio charge over the capture(s).
    public var chargeMC: Double?
    /// Radio cost per activity: `scanning`, `advertising`, `connections to ADDRESS`.
    public var activities: [(name: String, cost: RadioCost)] = []
    public var connections: Int?
    public var connectionSeconds: Double?
    public var attTransactions: Int?

    public init(label: String, model: CaptureModel, findings: [Finding], energy: EnergyModel) {
        self.label = label
        self.findings = findings.map { f in
            Item(fingerprint: f.fingerprint, id: f.id, rule: f.rule, severity: f.severity, message: f.message,
                 chargeMC: f.cost?.phone.chargeMC ?? 0, json: AuditJSON.finding(f))
        }
        let report = EnergyReport(model: model, energy: energy)
        chargeMC = report.phoneTotal.chargeMC
        var order: [String] = []
        var costs: [String: RadioCost] = [:]
        func add(_ name: String, _ c: RadioCost) {
            if costs[name] == nil { order.append(name) }
            costs[name, default: .zero] += c
        }
        add("scanning", report.scans.reduce(.zero) { $0 + $1.phone })
        for l in report.links {
            add("connections to \(l.connection.peerAddress?.description ?? "an unknown peer")", l.phone)
        }
        add("advertising", report.advertising.reduce(.zero) { $0 + $1.phone })
        activities = order.map { ($0, costs[$0] ?? .zero) }
        connections = model.connections.count
        connectionSeconds = report.links.reduce(0) { $0 + Double($1.end.nanoseconds - $1.start.nanoseconds) / 1e9 }
        attTransactions = model.connections.reduce(0) { $0 + $1.transactions.completed + $1.transactions.errors }
    }

    public enum ReadError: Error, CustomStringConvertible {
        case notAnAuditReport
        public var description: String { "not an audit --format json report (no \"findings\" array)" }
    }

    /// An `audit --format json` report.
    public init(label: String, auditJSON data: Data) throws {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["findings"] as? [[String: Any]]
        else { throw ReadError.notAnAuditReport }
        self.label = label
        findings = list.compactMap { f in
            guard let fingerprint = f["fingerprint"] as? String else { return nil }
            let cost = ((f["cost"] as? [String: Any])?["phone"] as? [String: Any])?["charge_mc"] as? NSNumber
            return Item(fingerprint: fingerprint, id: f["id"] as? String ?? "", rule: f["rule"] as? String ?? "",
                        severity: Severity(rawValue: f["severity"] as? String ?? "") ?? .info,
                        message: f["message"] as? String ?? "", chargeMC: cost?.doubleValue ?? 0, json: JSONValue(any: f))
        }
        let captures = root["captures"] as? [[String: Any]] ?? []
        let charges = captures.compactMap { ($0["radio_charge_mc"] as? NSNumber)?.doubleValue }
        chargeMC = charges.isEmpty ? nil : charges.reduce(0, +)
        let counts = captures.compactMap { ($0["connections"] as? NSNumber)?.intValue }
        connections = counts.isEmpty ? nil : counts.reduce(0, +)
    }

    /// Whether `data` looks like JSON rather than a capture (captures never start with `{`).
    public static func isJSON(_ data: Data) -> Bool {
        data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) } == UInt8(ascii: "{")
    }
}

extension JSONValue {
    /// A value read by JSONSerialization (object keys sorted, since it keeps no order).
    public init(any: Any) {
        switch any {
        // JSONSerialization gives booleans as NSNumbers of type "c", integers as "i"/"q", decimals as "d".
        case let n as NSNumber where String(cString: n.objCType) == "c": self = .bool(n.boolValue)
        case let n as NSNumber where String(cString: n.objCType) == "d": self = .number("\(n.doubleValue)")
        case let n as NSNumber: self = .int(n.intValue)
        case let s as String: self = .string(s)
        case let a as [Any]: self = .array(a.map(JSONValue.init(any:)))
        case let o as [String: Any]: self = .object(o.keys.sorted().map { ($0, JSONValue(any: o[$0]!)) })
        default: self = .null
        }
    }
}
