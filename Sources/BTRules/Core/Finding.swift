import BTWire
import BTCapture
import BTTrack

/// How much a finding matters. Ordered: info < warning < error.
public enum Severity: String, Sendable, Comparable, CaseIterable, Codable {
    case info, warning, error

    var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .error: 2
        }
    }

    public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
}

/// The connection a finding concerns.
public struct FindingConnection: Sendable, Hashable {
    /// Its number in the capture's timeline (#1, #2, …).
    public var id: Int
    public var handle: UInt16
    public var peerAddress: BDAddr?
    public var start: Timestamp

    public init(_ c: Connection) {
        id = c.id
        handle = c.handle
        peerAddress = c.peerAddress
        start = c.start.timestamp
    }
}

/// One problem a rule found: what was seen (times, connection, records), why it costs, what to do instead.
public struct Finding: Sendable {
    /// The rule's kebab name, e.g. `scan-after-connect`.
    public var rule: String
    /// The rule's stable id, e.g. `BTL001`.
    public var id: String
    public var severity: Severity
    public var controller: UInt16
    /// nil for scan- or advertising-level findings.
    public var connection: FindingConnection?
    /// When one attribute is concerned.
    public var attributeHandle: UInt16?
    public var start: Timestamp
    public var end: Timestamp
    /// The records that show it (the first is the primary location).
    public var records: [RecordRef]
    /// One line with the measured numbers.
    public var message: String
    /// What to do instead, in CoreBluetooth and Android terms.
    public var advice: String
    /// The capture the finding comes from (set by the auditor).
    public var file: String = ""

    public init(rule: RuleDescription, severity: Severity? = nil, controller: UInt16, connection: Connection? = nil,
                attributeHandle: UInt16? = nil, start: Timestamp, end: Timestamp, records: [RecordRef], message: String) {
        self.rule = rule.name
        self.id = rule.id
        self.severity = severity ?? rule.defaultSeverity
        self.controller = controller
        self.connection = connection.map(FindingConnection.init)
        self.attributeHandle = attributeHandle
        self.start = start
        self.end = end
        self.records = records.sorted()
        self.message = message
        self.advice = rule.advice
    }

    /// Identifies the finding across runs (for de-duplication and baselines): rule, controller, peer and
    /// attribute — not times or record numbers, which shift when a capture is re-recorded.
    public var fingerprint: String {
        var parts = [id, "hci\(controller)"]
        if let c = connection {
            parts.append(c.peerAddress?.description ?? "handle-\(Hex.u16(c.handle))")
        }
        if let h = attributeHandle { parts.append(Hex.u16(h)) }
        parts.append(Self.withoutNumbers(message))
        return parts.joined(separator: "|")
    }

    /// The message without its numbers (times, counts), so a finding keeps its fingerprint from run to run.
    /// Messages are nearly always ASCII, where only 0–9 are numbers: filtering bytes then gives the same text as
    /// filtering Characters, without a Unicode property lookup per character.
    static func withoutNumbers(_ message: String) -> String {
        let utf8 = message.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return message.filter { !$0.isNumber } }
        return String(decoding: utf8.filter { $0 < UInt8(ascii: "0") || $0 > UInt8(ascii: "9") }, as: UTF8.self)
    }
}
