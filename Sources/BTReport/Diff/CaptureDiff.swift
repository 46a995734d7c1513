import BTWire
import BTEnergy
import BTRules

/// `btlens diff BASE HEAD`: findings new, fixed and unchanged (by fingerprint), and the change in the phone's
/// radio charge, per activity, in connections and ATT transactions. Schema: Schemas/diff.schema.json.
public struct CaptureDiff: Sendable {
    public var base: DiffSide
    public var head: DiffSide
    public var new: DiffSelection
    public var fixed: DiffSelection
    public var unchanged: DiffSelection
    /// Activities of either side, base's order first (a side's links by peer, in the order each peer first came);
    /// those that cost nothing on both sides are left out. Set aside when made with a directory.
    public private(set) var activities = PlainList<DiffActivity>()

    /// `directory`: where the fingerprints are sorted in runs set aside (`SortedRuns`) when there are many; nil
    /// sorts them in memory.
    /// `runLength`: values sorted in memory at once before a run is set aside there.
    public init(base: DiffSide, head: DiffSide, directory: String? = nil, runLength: Int = CaptureDiff.matchRunLength) {
        self.base = base
        self.head = head
        let (baseMatched, headMatched, matchFailure) = Self.match(base.findings, head.findings, directory: directory,
                                                                  runLength: runLength)
        new = DiffSelection(head.findings, where: headMatched, is: false)
        fixed = DiffSelection(base.findings, where: baseMatched, is: false)
        unchanged = DiffSelection(head.findings, where: headMatched, is: true)
        activities = PlainList(directory: directory)
        let sortFailure = Self.activities(base, head, directory: directory, runLength: runLength) { activities.append($0) }
        failure = matchFailure ?? sortFailure ?? activities.failure ?? base.linkCharges.failure ?? head.linkCharges.failure
            ?? base.failure ?? head.failure
    }

    /// What went wrong setting the comparison aside in temporary files (a full disk), if anything: the report may
    /// then lack findings or activities, and `btlens diff` fails.
    public private(set) var failure: String?

    /// The activities in order: where a peer's links come in its sides' lists is learnt by sorting every link's
    /// cost by peer (summed in id order, as the sides list them), and the peers then sorted by where they go.
    static func activities(_ base: DiffSide, _ head: DiffSide, directory: String?, runLength: Int,
                           _ body: (DiffActivity) -> Void) -> String? {
        // An audit report's side lists no activities (nor links).
        let baseLeads = base.scanning != nil
        guard baseLeads || head.scanning != nil else { return nil }
        typealias Charge = (peer: UInt64, tagged: UInt64, cost: RadioCost)
        let byPeer: (Charge, Charge) -> Bool = { ($0.peer, $0.tagged) < ($1.peer, $1.tagged) }
        var charges = SortedRuns<Charge>(directory: directory, runLength: runLength)
        // The side above the id: the base's links before the head's, each side's in id order.
        for c in base.linkCharges { charges.append((c.peer, UInt64(bitPattern: c.id), c.cost)) { byPeer } }
        for c in head.linkCharges { charges.append((c.peer, 1 << 63 | UInt64(bitPattern: c.id), c.cost)) { byPeer } }
        // Where each goes: (group, the id of the peer's first link, the peer). The base's names come first when it
        // has activities (scanning, its peers, advertising), then the head's that are not among them.
        typealias Placed = (group: UInt64, first: UInt64, activity: DiffActivity)
        let byPlace: (Placed, Placed) -> Bool = { ($0.group, $0.first, $0.activity.peer) < ($1.group, $1.first, $1.activity.peer) }
        var placed = SortedRuns<Placed>(directory: directory, runLength: runLength)
        placed.append((0, 0, DiffActivity(peer: DiffActivity.scanning, base: base.scanning, head: head.scanning))) { byPlace }
        placed.append((2, 0, DiffActivity(peer: DiffActivity.advertising, base: base.advertising, head: head.advertising))) { byPlace }
        var current: DiffActivity?
        var baseFirst: UInt64?, headFirst: UInt64?
        func flush() {
            guard let a = current else { return }
            if baseLeads {
                if let baseFirst { placed.append((1, baseFirst, a)) { byPlace } } else { placed.append((3, headFirst ?? 0, a)) { byPlace } }
            } else {
                placed.append((1, headFirst ?? 0, a)) { byPlace }
            }
        }
        charges.drain(by: byPeer) { c in
            if current?.peer != c.peer {
                flush()
                current = DiffActivity(peer: c.peer, base: nil, head: nil)
                baseFirst = nil
                headFirst = nil
            }
            let id = c.tagged & ~(1 << 63)
            if c.tagged >> 63 == 0 {
                if base.scanning == nil { return }  // an audit report's side lists no activities
                current!.add(base: c.cost)
                if baseFirst == nil { baseFirst = id }
            } else {
                if head.scanning == nil { return }
                current!.add(head: c.cost)
                if headFirst == nil { headFirst = id }
            }
        }
        flush()
        placed.drain(by: byPlace) { p in
            let a = p.activity
            if (a.base?.chargeMC ?? 0) == 0 && (a.head?.chargeMC ?? 0) == 0 { return }
            body(a)
        }
        return charges.failure ?? placed.failure
    }

    /// Whether each finding of `base` has its fingerprint among `head`'s, and each of `head` among `base`'s. The
    /// fingerprints are hashed to 128 bits and sorted together, a head finding twice: its first copy sorts before
    /// the base findings of the same fingerprint, its second after them, so one pass in order tells every finding
    /// whether the other side has its fingerprint, holding nothing per fingerprint.
    static func match(_ base: DiffFindings, _ head: DiffFindings, directory: String?, runLength: Int)
        -> (base: Bits, head: Bits, failure: String?) {
        typealias Key = (high: UInt64, low: UInt64, tagged: UInt64)
        let order: (Key, Key) -> Bool = { ($0.high, $0.low, $0.tagged) < ($1.high, $1.low, $1.tagged) }
        var keys = SortedRuns<Key>(directory: directory, runLength: runLength)
        func hashed(_ fingerprint: String) -> (UInt64, UInt64) {
            var a = Hasher(), b = Hasher()
            a.combine(0 as UInt8)
            b.combine(1 as UInt8)
            a.combine(fingerprint)
            b.combine(fingerprint)
            return (UInt64(bitPattern: Int64(a.finalize())), UInt64(bitPattern: Int64(b.finalize())))
        }
        // The tag above the place: 0 a head finding's first copy, 1 a base finding, 2 its second copy.
        for i in head.indices {
            let (high, low) = hashed(head.fingerprint(i))
            keys.append((high, low, UInt64(i))) { order }
            keys.append((high, low, 2 << 32 | UInt64(i))) { order }
        }
        for i in base.indices {
            let (high, low) = hashed(base.fingerprint(i))
            keys.append((high, low, 1 << 32 | UInt64(i))) { order }
        }
        var baseMatched = Bits(count: base.count)
        var headMatched = Bits(count: head.count)
        var current: (UInt64, UInt64)?
        var inHead = false, inBase = false
        keys.drain(by: order) { key in
            if current.map({ $0 != (key.high, key.low) }) ?? true {
                current = (key.high, key.low)
                inHead = false
                inBase = false
            }
            let place = Int(key.tagged & 0xFFFF_FFFF)
            switch key.tagged >> 32 {
            case 0: inHead = true
            case 1:
                inBase = true
                baseMatched[place] = inHead
            default: headMatched[place] = inBase
            }
        }
        return (baseMatched, headMatched, keys.failure)
    }

    /// Fingerprints (24 bytes each) or links' costs sorted in memory at once before a run is set aside.
    public static let matchRunLength = 1 << 14

    /// Percent change of the phone's radio charge; nil when a side has none, or the base is 0.
    public var changePercent: Double? {
        guard let b = base.chargeMC, let h = head.chargeMC, b > 0 else { return nil }
        return (h - b) / b * 100
    }

    /// Exit 1 when the charge rose more than `increase` % or a new finding reaches `failOn`.
    public func fails(increase: Double?, failOn: Severity?) -> Bool {
        if let increase, let change = changePercent, change > increase { return true }
        guard let failOn else { return false }
        return new.contains { AuditCost.severityRank($0.severity) <= AuditCost.severityRank(failOn) }
    }

    // MARK: Output

    static func pct(_ v: Double?) -> String {
        guard let v else { return "n/a" }
        return (v > 0 ? "+" : "") + DecimalText.fixed(v, fractionDigits: 1) + " %"
    }

    static func mc(_ v: Double?) -> String { v.map { DecimalText.fixed($0, fractionDigits: 2) + " mC" } ?? "n/a" }

    /// `json()` written piece by piece: each finding's JSON made as it is written.
    public func write(to writer: JSONStreamWriter) {
        let whole = json(lists: false)
        guard case .object(let members) = whole else { return }
        writer.object { root in
            for (key, value) in members {
                if key == "activities" {
                    root.array("activities", activities, Self.activity)
                } else if key == "findings" {
                    root.object("findings") { lists in
                        lists.array("new", new, \.json)
                        lists.array("fixed", fixed, \.json)
                        lists.array("unchanged", unchanged, \.json)
                    }
                } else {
                    root.member(key, value)
                }
            }
        }
    }

    public func json() -> JSONValue { json(lists: true) }

    static func activity(_ a: DiffActivity) -> JSONValue {
        func side(_ c: RadioCost?) -> JSONValue { c.map(EnergyJSON.cost) ?? .null }
        return .object([("name", .string(a.name)), ("base", side(a.base)), ("head", side(a.head))])
    }

    /// The report's value; without `lists`, the findings and activities are left out (`write(to:)` writes them
    /// one by one in their places).
    func json(lists: Bool) -> JSONValue {
        func side(_ c: RadioCost?) -> JSONValue { c.map(EnergyJSON.cost) ?? .null }
        func optionalInt(_ v: Int?) -> JSONValue { v.map { .int($0) } ?? .null }
        func optionalNumber(_ v: Double?, _ digits: Int = 4) -> JSONValue { v.map { EnergyJSON.round($0, digits) } ?? .null }
        return .object([
            ("base", .string(base.label)), ("head", .string(head.label)),
            ("findings", lists ? .object([("new", .array(new.map(\.json))), ("fixed", .array(fixed.map(\.json))),
                                             ("unchanged", .array(unchanged.map(\.json)))]) : .null),
            ("charge", .object([("base_mc", optionalNumber(base.chargeMC)), ("head_mc", optionalNumber(head.chargeMC)),
                                ("change_pct", optionalNumber(changePercent, 2))])),
            ("activities", lists ? .array(activities.map(Self.activity)) : .null),
            ("connections", .object([("base", optionalInt(base.connections)), ("head", optionalInt(head.connections))])),
            ("connection_s", .object([("base", optionalNumber(base.connectionSeconds, 3)), ("head", optionalNumber(head.connectionSeconds, 3))])),
            ("att_transactions", .object([("base", optionalInt(base.attTransactions)), ("head", optionalInt(head.attTransactions))])),
        ])
    }

    public func text() -> String {
        var out = ""
        text { out += $0 }
        return out
    }

    /// The text report written piece by piece (its lines, joined by new lines, without one after the last).
    public func text(_ write: @escaping (String) -> Void) {
        var lines = Lines(write: write)
        func line(_ text: String) { lines.add(text) }
        line("btlens diff \(base.label) → \(head.label)")
        line("  radio charge (phone): \(Self.mc(base.chargeMC)) → \(Self.mc(head.chargeMC)) (\(Self.pct(changePercent)))")
        for a in activities {
            line("    \(a.name): \(Self.mc(a.base?.chargeMC)) → \(Self.mc(a.head?.chargeMC))\(a.changePercent.map { " (\(Self.pct($0)))" } ?? "")")
        }
        if let b = base.connections, let h = head.connections { line("  connections: \(b) → \(h)") }
        if let b = base.connectionSeconds, let h = head.connectionSeconds {
            line("  time connected: \(DecimalText.fixed(b, fractionDigits: 1)) s → \(DecimalText.fixed(h, fractionDigits: 1)) s")
        }
        if let b = base.attTransactions, let h = head.attTransactions { line("  ATT transactions: \(b) → \(h)") }
        for (title, list) in [("new", new), ("fixed", fixed)] {
            line("  \(title) findings: \(list.count)")
            for f in list { line("    \(f.severity.rawValue) \(f.id) \(f.rule): \(f.message)") }
        }
        line("  unchanged findings: \(unchanged.count)")
    }

    /// A pull-request comment.
    public func markdown() -> String {
        var out = ""
        markdown { out += $0 }
        return out
    }

    /// The pull-request comment written piece by piece (its lines, joined by new lines).
    public func markdown(_ write: @escaping (String) -> Void) {
        var lines = Lines(write: write)
        func line(_ text: String) { lines.add(text) }
        let icon = (changePercent ?? 0) > 0 || !new.isEmpty ? "⚠️" : "✅"
        line("## \(icon) btlens diff")
        line("")
        line("Radio charge (phone): **\(Self.mc(base.chargeMC)) → \(Self.mc(head.chargeMC))** (\(Self.pct(changePercent)))")
        line("")
        line("Findings: **\(new.count) new**, \(fixed.count) fixed, \(unchanged.count) unchanged.")
        if !activities.isEmpty {
            line("")
            line("| activity | base | head | change |")
            line("|---|---:|---:|---:|")
            for a in activities {
                line("| \(a.name.replacingPipes()) | \(Self.mc(a.base?.chargeMC)) | \(Self.mc(a.head?.chargeMC)) | \(Self.pct(a.changePercent)) |")
            }
        }
        for (title, list) in [("New", new), ("Fixed", fixed)] where !list.isEmpty {
            line("")
            line("### \(title) findings")
            line("")
            for f in list { line("- **\(f.severity.rawValue)** `\(f.id)` \(f.rule): \(f.message.replacingPipes())") }
        }
    }
}

/// Lines written one at a time, joined by new lines (none after the last), as a report's text joins them.
struct Lines {
    let write: (String) -> Void
    private var first = true

    init(write: @escaping (String) -> Void) { self.write = write }

    mutating func add(_ text: String) {
        write(first ? text : "\n" + text)
        first = false
    }
}

/// Some of a side's findings, in its order (`CaptureDiff`'s new, fixed and unchanged): a bit per finding of the side.
public struct DiffSelection: Collection, Sendable {
    let findings: DiffFindings
    /// Whether each finding of the side is selected.
    let selected: Bits
    public let count: Int

    init(_ findings: DiffFindings, where matched: Bits, is wanted: Bool) {
        self.findings = findings
        var selected = Bits(count: findings.count)
        var count = 0
        for i in 0..<findings.count where matched[i] == wanted {
            selected[i] = true
            count += 1
        }
        self.selected = selected
        self.count = count
    }

    public var startIndex: Int { selected.first(from: 0, below: findings.count) }
    public var endIndex: Int { findings.count }
    public func index(after i: Int) -> Int { selected.first(from: i + 1, below: findings.count) }
    public var isEmpty: Bool { count == 0 }
    public subscript(position: Int) -> DiffSide.Item { findings[position] }
}

/// A bit per finding of a side (`CaptureDiff.match`, `DiffSelection`).
struct Bits: Sendable {
    private var words: [UInt64]

    init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

    subscript(i: Int) -> Bool {
        get { words[i >> 6] & (1 << UInt64(i & 63)) != 0 }
        set {
            if newValue { words[i >> 6] |= 1 << UInt64(i & 63) } else { words[i >> 6] &= ~(1 << UInt64(i & 63)) }
        }
    }

    /// The first set bit at or after `i`, or `end` when there is none below it (a word of clear bits at a time).
    func first(from i: Int, below end: Int) -> Int {
        var word = i >> 6
        guard word < words.count else { return end }
        var w = words[word] & (~0 << UInt64(i & 63))
        while w == 0 {
            word += 1
            guard word < words.count else { return end }
            w = words[word]
        }
        return min(word << 6 + w.trailingZeroBitCount, end)
    }
}

/// An activity `diff` compares: scanning, advertising, or the links to one peer, with its cost on each side that
/// has it.
public struct DiffActivity: Sendable {
    /// `BDAddr.rawValue` for a peer's links, else one of the values past any address below.
    let peer: UInt64
    private var baseCost = RadioCost.zero, headCost = RadioCost.zero
    private var onBase = false, onHead = false

    static let scanning = UInt64(1) << 62
    static let advertising = UInt64(1) << 62 | 1

    init(peer: UInt64, base: RadioCost?, head: RadioCost?) {
        self.peer = peer
        if let base { add(base: base) }
        if let head { add(head: head) }
    }

    mutating func add(base cost: RadioCost) {
        baseCost += cost
        onBase = true
    }

    mutating func add(head cost: RadioCost) {
        headCost += cost
        onHead = true
    }

    public var base: RadioCost? { onBase ? baseCost : nil }
    public var head: RadioCost? { onHead ? headCost : nil }

    /// Percent change of the phone's charge; nil without a base charge above 0.
    public var changePercent: Double? {
        guard let b = base?.chargeMC, b > 0 else { return nil }
        return ((head?.chargeMC ?? 0) - b) / b * 100
    }

    public var name: String {
        switch peer {
        case Self.scanning: "scanning"
        case Self.advertising: "advertising"
        case DiffSide.LinkCharge.unknownPeer: "connections to an unknown peer"
        default: "connections to \(BDAddr(rawValue: peer))"
        }
    }
}
