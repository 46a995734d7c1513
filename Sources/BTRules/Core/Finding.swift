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
    /// Which link to that peer it is (`Connection.peerLink`): 1 for the first.
    public var peerLink: Int
    public var start: Timestamp
    /// Air captures: the link's access address (it has no HCI handle).
    public var accessAddress: UInt32?

    public init(_ c: Connection) { self.init(LinkSummary(c)) }

    public init(_ link: LinkSummary) {
        id = link.id
        handle = link.handle
        accessAddress = link.accessAddress
        peerAddress = link.peerAddress
        peerLink = link.peerLink
        start = link.start.timestamp
    }
}

extension FindingConnection {
    /// `handle 0x0040`, or `AA 0x50654d3a` for a link followed on the air.
    public var linkName: String { LinkName.of(handle: handle, accessAddress: accessAddress) }
    /// `0x0040` or `AA 0x50654d3a`.
    public var shortLinkName: String { LinkName.of(handle: handle, accessAddress: accessAddress, short: true) }
}

/// One problem a rule found: what was seen (times, connection, records), why it costs, what to do instead.
public struct Finding: Sendable {
    /// The rule's kebab name, e.g. `scan-after-connect`.
    public let rule: String
    /// The rule's stable id, e.g. `BTL001`.
    public let id: String
    public var severity: Severity
    public let controller: UInt16
    /// nil for scan- or advertising-level findings.
    public let connection: FindingConnection?
    /// When one attribute is concerned.
    public let attributeHandle: UInt16?
    /// Tells apart the different things one rule reports about the same link and attribute (the request that
    /// timed out, advertising left on or turned back on, a second polling run); empty when there is one.
    public let discriminator: String
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
    /// What the fix would save (radio time and charge), as the rule's counterfactual; nil when it cannot say.
    public var cost: FindingCost?
    /// Whose scan or link it concerns, when a bug report named the apps (`AppAttribution`); nil otherwise.
    public var owner: Owner?
    /// Identifies the finding across runs and recordings: baselines, SARIF `partialFingerprints`, the auditor's
    /// de-duplication and live mode's "already shown" all match on it. Built from structured fields only — see
    /// `Finding.fingerprint(...)` for the format — never from the message, whose numbers, units and clauses
    /// change from one recording to the next, nor from connection handles, which the controller picks anew.
    public let fingerprint: String

    /// `perPeer`: the finding concerns every link to the peer (connection churn), not `connection` alone, so the
    /// fingerprint leaves out which link it is. `discriminator`: see the property.
    public init(rule: RuleDescription, severity: Severity? = nil, controller: UInt16, connection: Connection? = nil,
                perPeer: Bool = false, attributeHandle: UInt16? = nil, discriminator: String = "",
                start: Timestamp, end: Timestamp, records: [RecordRef], message: String) {
        self.init(rule: rule, severity: severity, controller: controller, link: connection.map(FindingConnection.init),
                  perPeer: perPeer, attributeHandle: attributeHandle,
                  attribute: attributeHandle.map { Self.attribute($0, in: connection?.gatt) }, discriminator: discriminator,
                  start: start, end: end, records: records, message: message)
    }

    /// A finding of a capture-wide rule about a link it read from its summary (no attribute).
    public init(rule: RuleDescription, severity: Severity? = nil, controller: UInt16, connection: LinkSummary,
                perPeer: Bool = false, discriminator: String = "",
                start: Timestamp, end: Timestamp, records: [RecordRef], message: String) {
        self.init(rule: rule, severity: severity, controller: controller, link: FindingConnection(connection),
                  perPeer: perPeer, attributeHandle: nil, attribute: nil, discriminator: discriminator,
                  start: start, end: end, records: records, message: message)
    }

    /// `attribute`: the fingerprint's ATTRIBUTE field for `attributeHandle`.
    private init(rule: RuleDescription, severity: Severity?, controller: UInt16, link: FindingConnection?,
                 perPeer: Bool, attributeHandle: UInt16?, attribute: String?, discriminator: String,
                 start: Timestamp, end: Timestamp, records: [RecordRef], message: String) {
        self.rule = rule.name
        self.id = rule.id
        self.severity = severity ?? rule.defaultSeverity
        self.controller = controller
        self.connection = link
        self.attributeHandle = attributeHandle
        self.discriminator = discriminator
        self.start = start
        self.end = end
        self.records = records.sorted()
        self.message = message
        self.advice = rule.advice
        self.fingerprint = Self.fingerprint(
            id: rule.id, controller: controller,
            subject: Self.subject(link.map { ($0.peerAddress, $0.peerLink) }, perPeer: perPeer),
            attribute: attribute, discriminator: discriminator)
    }

    /// The fingerprint format's version, its first field. Fingerprints of another version never match.
    public static let fingerprintVersion = "v2"

    /// Bytes of a fingerprint besides its version and fields: five `|`, `hci` and a controller index of up to 5 digits.
    static let fingerprintPunctuation = 13

    /// `v2|RULE|hciN|SUBJECT|ATTRIBUTE|DISCRIMINATOR`, for example
    /// `v2|BTL010|hci0|E1:7F:03:9A:42:42/2|3e2a0003-6f1c-4b5e-9d2a-7c1e5a0b4c11|0x12`:
    /// - RULE: the rule's id; hciN: the controller index.
    /// - SUBJECT: `ADDRESS/N` for the Nth link to that peer in the capture (`Connection.peerLink`),
    ///   `unknown-peer/N` for the Nth link whose peer the capture does not show, `ADDRESS` alone for a finding
    ///   about the peer across its links, `no-peer` for one about no link (scanning, advertising, failed attempts).
    /// - ATTRIBUTE: `-`, or what `attribute(_:in:)` gives: the characteristic's UUID when discovery showed it.
    /// - DISCRIMINATOR: the rule's, or `-`.
    static func fingerprint(id: String, controller: UInt16, subject: String, attribute: String?,
                            discriminator: String) -> String {
        // Appended in place: every finding has one, and joining an array of the parts cost several times more.
        let attribute = attribute ?? "-", discriminator = discriminator.isEmpty ? "-" : discriminator
        var s = fingerprintVersion
        s.reserveCapacity(fingerprintVersion.utf8.count + id.utf8.count + subject.utf8.count + attribute.utf8.count
                          + discriminator.utf8.count + fingerprintPunctuation)
        s += "|"
        s += id
        s += "|hci"
        s += String(controller)
        s += "|"
        s += subject
        s += "|"
        s += attribute
        s += "|"
        s += discriminator
        return s
    }

    /// The SUBJECT field: see `fingerprint(...)`. `link`: the peer (nil: not shown) and which link to it.
    static func subject(_ link: (peer: BDAddr?, n: Int)?, perPeer: Bool) -> String {
        guard let link else { return "no-peer" }
        let peer = link.peer?.description ?? "unknown-peer"
        return perPeer ? peer : "\(peer)/\(link.n)"
    }

    /// The ATTRIBUTE field for a handle: what the handle is in the peer's database, which stays when the
    /// database is laid out again, rather than its number. The characteristic UUID for a value (`2a37`, or the
    /// full lowercase form), with `@N` for the Nth characteristic of that UUID when there are several; a
    /// declaration or descriptor under its characteristic (`2a37/declaration`, `2a37/2902`, `2a37/+2` for an
    /// undiscovered one two handles past the value); a service declaration as `service:180d`; otherwise, when
    /// discovery did not reveal it, the handle (`0x001d`).
    static func attribute(_ handle: UInt16, in gatt: GATTDatabase?) -> String {
        guard let gatt else { return Hex.u16(handle) }
        /// `uuid`, or `uuid@N` when `all` has it more than once and `isThis` picks the Nth.
        func instance<T>(_ uuid: BluetoothUUID, among all: [T], uuidOf: (T) -> BluetoothUUID, isThis: (T) -> Bool) -> String {
            let same = all.filter { uuidOf($0) == uuid }
            guard same.count > 1, let i = same.firstIndex(where: isThis) else { return uuid.description }
            return "\(uuid)@\(i + 1)"
        }
        if let s = gatt.services.first(where: { $0.startHandle == handle }) {
            return "service:" + instance(s.uuid, among: gatt.services, uuidOf: \.uuid, isThis: { $0.startHandle == handle })
        }
        guard let c = gatt.characteristic(containing: handle) else { return Hex.u16(handle) }
        let characteristic = instance(c.uuid, among: gatt.characteristics, uuidOf: \.uuid,
                                      isThis: { $0.valueHandle == c.valueHandle })
        if handle == c.valueHandle { return characteristic }
        if handle == c.declarationHandle { return characteristic + "/declaration" }
        if let d = gatt.descriptor(handle) {
            return characteristic + "/" + instance(d.uuid, among: gatt.descriptors(of: c), uuidOf: \.uuid,
                                                   isThis: { $0.handle == handle })
        }
        let offset = Int(handle) - Int(c.valueHandle)
        return characteristic + "/" + (offset >= 0 ? "+\(offset)" : "\(offset)")
    }

    /// The fingerprint btlens wrote before `fingerprintVersion` 2: rule, controller, peer (or the connection
    /// handle), attribute handle and the message without its numbers. Only to tell the user what an old
    /// baseline would have accepted (`Baseline.acceptedBeforeV2`); nothing matches on it any more.
    public var legacyFingerprint: String {
        var parts = [id, "hci\(controller)"]
        if let c = connection {
            parts.append(c.peerAddress?.description ?? "handle-\(Hex.u16(c.handle))")
        }
        if let h = attributeHandle { parts.append(Hex.u16(h)) }
        parts.append(Self.withoutNumbers(message))
        return parts.joined(separator: "|")
    }

    /// The message without its numbers (times, counts), as the version 1 fingerprint had it.
    /// Messages are nearly always ASCII, where only 0–9 are numbers: filtering bytes then gives the same text as
    /// filtering Characters, without a Unicode property lookup per character.
    static func withoutNumbers(_ message: String) -> String {
        let utf8 = message.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return message.filter { !$0.isNumber } }
        return String(decoding: utf8.filter { $0 < UInt8(ascii: "0") || $0 > UInt8(ascii: "9") }, as: UTF8.self)
    }
}

/// Numbers what a rule reports more than once about the same link and attribute (a second polling run of one
/// characteristic, a second unfiltered scan session), so that each keeps a fingerprint of its own: the first
/// keeps `base`, the next get `base#2`, `base#3`… in the order the rule reports them (the capture's order).
public struct RepeatNumbering: Sendable {
    private var seen: [String: Int] = [:]

    public init() {}

    /// The discriminator for the next finding about `key` (the link, attribute and `base` it concerns).
    public mutating func discriminator(_ base: String = "", key: String) -> String {
        let n = (seen[key + "|" + base] ?? 0) + 1
        seen[key + "|" + base] = n
        return n == 1 ? base : base + "#\(n)"
    }
}

extension Finding {
    /// Every field as it was: a finding read back from a spill (`FindingCoding`) is the one that was written.
    init(rule: String, id: String, severity: Severity, controller: UInt16, connection: FindingConnection?,
         attributeHandle: UInt16?, discriminator: String, start: Timestamp, end: Timestamp, records: [RecordRef],
         message: String, advice: String, file: String, cost: FindingCost?, owner: Owner?, fingerprint: String) {
        self.rule = rule
        self.id = id
        self.severity = severity
        self.controller = controller
        self.connection = connection
        self.attributeHandle = attributeHandle
        self.discriminator = discriminator
        self.start = start
        self.end = end
        self.records = records
        self.message = message
        self.advice = advice
        self.file = file
        self.cost = cost
        self.owner = owner
        self.fingerprint = fingerprint
    }
}

extension FindingConnection {
    /// Every field as it was (`FindingCoding`).
    init(id: Int, handle: UInt16, peerAddress: BDAddr?, peerLink: Int, start: Timestamp, accessAddress: UInt32?) {
        self.id = id
        self.handle = handle
        self.peerAddress = peerAddress
        self.peerLink = peerLink
        self.start = start
        self.accessAddress = accessAddress
    }
}
