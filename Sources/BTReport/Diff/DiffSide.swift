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

        public init(fingerprint: String, id: String, rule: String, severity: Severity, message: String, chargeMC: Double,
                    json: JSONValue) {
            self.fingerprint = fingerprint
            self.id = id
            self.rule = rule
            self.severity = severity
            self.message = message
            self.chargeMC = chargeMC
            self.json = json
        }

        public init(_ f: Finding) {
            self.init(fingerprint: f.fingerprint, id: f.id, rule: f.rule, severity: f.severity, message: f.message,
                      chargeMC: f.cost?.phone.chargeMC ?? 0, json: AuditJSON.finding(f))
        }
    }

    public var label: String
    /// In report order.
    public var findings: DiffFindings
    /// The phone's radio charge over the capture(s).
    public var chargeMC: Double?
    /// Radio cost of scanning and of the phone's advertising (nil for an audit report, which has no activities).
    public var scanning: RadioCost?
    public var advertising: RadioCost?
    /// Each link's phone cost with its peer, in id order (`CaptureDiff` sums them by peer): set aside in a
    /// temporary file when the side was made with a directory.
    var linkCharges = PlainList<LinkCharge>()
    public var connections: Int?
    public var connectionSeconds: Double?
    public var attTransactions: Int?

    public init(label: String, model: CaptureModel, findings: [Finding], energy: EnergyModel) {
        self.init(label: label, model: model, findings: StoredFindings(findings), energy: energy)
    }

    /// A capture's side whose links were judged and let go as they finished (`LinkRetirement`), as `audit` judges
    /// them: `findings` read back from their spill one at a time, `links` the judged links priced then
    /// (`DiffLinks.add`), so the side is what the whole model gives. `directory`: where the links' costs are set
    /// aside (nil: memory).
    public init(label: String, model: CaptureModel, findings: StoredFindings, energy: EnergyModel,
                links judged: DiffLinks? = nil, directory: String? = nil) {
        self.label = label
        self.findings = DiffFindings(findings)
        // Scans and advertising priced as a report of the whole capture prices them; the links one at a time.
        var rest = model
        rest.connections = []
        let report = EnergyReport(model: rest, energy: energy)
        let links = judged ?? DiffLinks(energy: energy, directory: directory)
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: 0)
        var transactions = links.attTransactions
        for c in model.connections where !(judged != nil && c.isJudged) {
            links.append(EnergyReport.link(c, captureEnd: captureEnd, energy: energy))
            transactions += c.transactions.completed + c.transactions.errors
        }
        scanning = report.scans.reduce(.zero) { $0 + $1.phone }
        advertising = report.advertising.reduce(.zero) { $0 + $1.phone }
        linkCharges = PlainList(directory: directory)
        var phone = RadioCost.zero, seconds = 0.0
        links.drain { id, peer, cost, start, end in
            phone = phone + cost
            seconds += Double(end - start) / 1e9
            linkCharges.append(LinkCharge(peer: peer, id: id, cost: cost))
        }
        chargeMC = report.phoneTotal(links: CollectionOfOne(phone)).chargeMC
        connections = judged == nil ? model.connections.count : model.linkCount
        connectionSeconds = seconds
        attTransactions = transactions
        failure = links.failure
    }

    /// What went wrong setting the links' costs aside (a full disk), if anything.
    public private(set) var failure: String?

    /// A link's phone cost and its peer.
    struct LinkCharge {
        /// `BDAddr.rawValue` (48 bits), or `unknownPeer`.
        var peer: UInt64
        var id: Int64
        var cost: RadioCost

        static let unknownPeer = UInt64.max
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
        findings = DiffFindings(list.compactMap { f in
            guard let fingerprint = f["fingerprint"] as? String else { return nil }
            let cost = ((f["cost"] as? [String: Any])?["phone"] as? [String: Any])?["charge_mc"] as? NSNumber
            return Item(fingerprint: fingerprint, id: f["id"] as? String ?? "", rule: f["rule"] as? String ?? "",
                        severity: Severity(rawValue: f["severity"] as? String ?? "") ?? .info,
                        message: f["message"] as? String ?? "", chargeMC: cost?.doubleValue ?? 0, json: JSONValue(any: f))
        })
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

/// One side's findings in report order, as `diff` compares them: held (those of an audit report read from JSON), or
/// read back one at a time from the audit's spill (`StoredFindings`), so that a capture of hundreds of thousands of
/// findings never holds them, nor their JSON.
public struct DiffFindings: RandomAccessCollection, Sendable {
    enum Storage: Sendable {
        case items([DiffSide.Item])
        case stored(StoredFindings)
    }

    let storage: Storage

    public init(_ items: [DiffSide.Item]) { storage = .items(items) }
    public init(_ stored: StoredFindings) { storage = .stored(stored) }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .items(let items): items.count
        case .stored(let stored): stored.count
        }
    }

    public subscript(position: Int) -> DiffSide.Item {
        switch storage {
        case .items(let items): items[position]
        case .stored(let stored): DiffSide.Item(stored[position])
        }
    }

    /// The fingerprint of the finding at `position` (without making its JSON).
    func fingerprint(_ position: Int) -> String {
        switch storage {
        case .items(let items): items[position].fingerprint
        case .stored(let stored): stored[position].fingerprint
        }
    }

    /// The first finding that could not be read back from the spill, if any (the run must then fail).
    public var failure: FindingStoreError? {
        if case .stored(let stored) = storage { return stored.failure }
        return nil
    }
}

/// A side's links priced one at a time — those judged while the capture is read (`add`, on the link thread), then
/// the model's others — and handed over in id order (`drain`), as a report of every link lists and sums them: kept
/// in sorted runs set aside, not a row per link in memory.
public final class DiffLinks: @unchecked Sendable {
    typealias Entry = (id: Int64, peer: UInt64, phone: RadioCost, start: Int64, end: Int64)
    private var entries: SortedRuns<Entry>
    private static func byID(_ a: Entry, _ b: Entry) -> Bool { a.id < b.id }
    let energy: EnergyModel
    /// ATT transactions of the links judged.
    public private(set) var attTransactions = 0

    /// Links priced in memory at once before they are sorted and set aside.
    public static let runLength = 1 << 14

    public init(energy: EnergyModel, directory: String?) {
        self.energy = energy
        entries = SortedRuns(directory: directory, runLength: Self.runLength)
    }

    /// Prices `c`, judged and kept in the model (`LinkRetirement`'s `kept`): judged links are closed.
    public func add(_ c: Connection) {
        guard let end = c.end?.timestamp else { return }
        append(EnergyReport.link(c, captureEnd: end, energy: energy))
        attTransactions += c.transactions.completed + c.transactions.errors
    }

    func append(_ l: EnergyReport.Link) {
        let entry: Entry = (Int64(l.connection.id), l.connection.peerAddress?.rawValue ?? DiffSide.LinkCharge.unknownPeer, l.phone,
                            l.start.nanoseconds, l.end.nanoseconds)
        entries.append(entry) { Self.byID }
    }

    /// Every link in id order, once.
    func drain(_ body: (_ id: Int64, _ peer: UInt64, _ phone: RadioCost, _ start: Int64, _ end: Int64) -> Void) {
        entries.drain(by: Self.byID) { body($0.id, $0.peer, $0.phone, $0.start, $0.end) }
    }

    var failure: String? { entries.failure }
}
