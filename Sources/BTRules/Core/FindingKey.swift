import BTWire

/// What reports read of a finding without reading the finding: how severe, what it saves, which rule, link and
/// peer (they count, order and group by these), and what orders it (`Auditor.precedes`). 56 bytes, where a
/// finding is near a kilobyte.
public struct FindingKey: Sendable {
    /// Where the finding's bytes begin in the spill; for findings held in memory, its place among them. Findings
    /// are written in the order finished, so it also orders equals as they were finished.
    var offset: Int64
    /// `start`, in nanoseconds.
    var start: Int64
    /// `cost.phone.chargeMC`, 0 without a cost.
    public var charge: Double
    /// `cost.phone.radioSeconds`, 0 without a cost: a group of repeats sums it without reading its members back.
    public var radioSeconds: Double
    /// The peer's address, `FindingKey.noPeer` when the finding names none.
    var peerRaw: UInt64
    /// The link's number in the capture (`FindingConnection.id`), `FindingKey.noConnection` for none.
    var connectionID: Int32
    var length: UInt32
    /// The rule's id, as its place in the list's `ruleIDs`.
    var rule: UInt16
    /// `attributeHandle`, 0 without one (as `Auditor.precedes` orders).
    var attribute: UInt16
    public var severity: Severity

    static let noPeer = UInt64.max
    static let noConnection = Int32.min

    init(_ f: Finding, offset: Int64, length: Int, rule: UInt16) {
        self.offset = offset
        self.length = UInt32(clamping: length)
        self.rule = rule
        severity = f.severity
        start = f.start.nanoseconds
        attribute = f.attributeHandle ?? 0
        charge = f.cost?.phone.chargeMC ?? 0
        radioSeconds = f.cost?.phone.radioSeconds ?? 0
        peerRaw = f.connection?.peerAddress?.rawValue ?? Self.noPeer
        connectionID = f.connection.map { Int32(clamping: $0.id) } ?? Self.noConnection
    }

    public var peer: BDAddr? { peerRaw == Self.noPeer ? nil : BDAddr(rawValue: peerRaw) }
    public var connection: Int? { connectionID == Self.noConnection ? nil : Int(connectionID) }
}

/// Rule ids as small numbers, in the order first seen.
struct RuleInterning {
    private(set) var ids: [String] = []
    private var slots: [String: UInt16] = [:]

    mutating func slot(_ id: String) -> UInt16 {
        if let s = slots[id] { return s }
        let s = UInt16(clamping: ids.count)
        slots[id] = s
        ids.append(id)
        return s
    }
}
