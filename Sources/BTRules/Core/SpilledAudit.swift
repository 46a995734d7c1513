import BTWire
import BTCapture
import BTTrack

/// Where a finished finding goes (`Auditor.audit(_:file:judged:spill:finishing:)`).
public enum FindingDestination: Sendable {
    /// Into the report.
    case reported
    /// Out of the report, accepted by a baseline; kept so that a refreshed baseline still lists it.
    case accepted
}

extension Auditor {
    /// `audit(_:file:judged:)` for captures with more findings than memory should hold: each finding is set aside
    /// in `spill` as a rule makes it (`judged`'s too, when it was made with the same spill), then read back once,
    /// in the order made, to be de-duplicated, capped (`MeasuredCap`) and handed to `finishing` (owners, a
    /// baseline), and written to a second file in `spill`'s directory; memory keeps a key per finding
    /// (`FindingKey`). The findings, read back in report order, are those `audit(_:file:judged:)` returns, every
    /// field the same.
    public func audit(_ model: CaptureModel, file: String, judged: LinkJudgement?, spill: FindingSpill,
                      finishing: (inout Finding) -> FindingDestination = { _ in .reported })
        throws(FindingStoreError) -> (reported: StoredFindings, accepted: StoredFindings) {
        var made: [FindingSpill.Ref] = []
        let rest = judged == nil ? model : model.withoutJudgedLinks
        for rule in RuleRegistry.all {
            let d = rule.description
            guard configuration.isEnabled(d) else { continue }
            let prepared = prepare(rule)
            if d.scope == .link, let judged {
                var refs = judged.spilledFindings(of: d.id, in: spill)
                prepared.evaluate(rest) { refs.append(spill.append($0)) }
                // In link order, as one evaluation over every link gives them (`inLinkOrder`).
                made += refs.enumerated().sorted { ($0.element.link, $0.offset) < ($1.element.link, $1.offset) }.map(\.element)
            } else {
                prepared.evaluate(model) { made.append(spill.append($0)) }
            }
        }
        if let failure = spill.failure { throw failure }

        let finished: Spill
        do { finished = try Spill(directory: spill.directory, name: "findings") } catch {
            throw .spill(cause: (error as? SpillError).map { "\($0.path): \($0.cause)" } ?? "\(error)")
        }
        var reported = FinishedFindings(spill: finished), accepted = FinishedFindings(spill: finished)
        do {
            // The de-duplication's hashes and the places made are let go before the keys are sorted.
            var duplicates = Deduplication()
            let cap = MeasuredCap(model.controllerActivity)
            for (i, ref) in made.enumerated() {
                var f = try spill.read(ref)
                guard try duplicates.isFirst(f, at: i, reading: { j throws(FindingStoreError) in try spill.read(made[j]) })
                else { continue }
                f.file = file
                cap.apply(to: &f)
                switch finishing(&f) {
                case .reported: reported.append(f)
                case .accepted: accepted.append(f)
                }
            }
            made = []
        }
        finished.flush()
        if let failure = finished.failure { throw .spill(cause: failure) }
        return (reported.sorted(), accepted.sorted())
    }
}

/// `Auditor.deduplicate` over findings read one at a time: the first of each fingerprint and start stays. Memory
/// keeps a hash of each pair; a finding whose hash was seen is compared with the earlier ones of that hash,
/// read back, so that only the same fingerprint and start count as the same.
struct Deduplication {
    /// The first finding of each hash, by its place in the order made.
    private var first: [UInt64: Int32] = [:]
    /// Further findings of a hash already seen that differ from the first (a hash collision): nearly always none.
    private var others: [UInt64: [Int32]] = [:]

    mutating func isFirst(_ f: Finding, at place: Int, reading: (Int) throws(FindingStoreError) -> Finding)
        throws(FindingStoreError) -> Bool {
        let hash = Self.hash(f)
        guard let seen = first[hash] else {
            first[hash] = Int32(place)
            return true
        }
        for j in [seen] + (others[hash] ?? []) {
            let earlier = try reading(Int(j))
            if earlier.fingerprint == f.fingerprint && earlier.start == f.start { return false }
        }
        others[hash, default: []].append(Int32(place))
        return true
    }

    /// FNV-1a over the fingerprint's bytes and the start.
    static func hash(_ f: Finding) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in f.fingerprint.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var t = UInt64(bitPattern: f.start.nanoseconds)
        for _ in 0..<8 {
            h = (h ^ (t & 0xFF)) &* 0x0000_0100_0000_01B3
            t >>= 8
        }
        return h
    }
}

/// Finished findings written to a spill as they come, with their keys; `sorted()` puts the keys in report order.
struct FinishedFindings {
    let spill: Spill
    private var keys: [FindingKey] = []
    private var rules = RuleInterning()
    /// Host parts that are not 0, by where the finding is in the spill.
    private var hostCharges: [Int64: Double] = [:]
    private var bytes: [UInt8] = []

    init(spill: Spill) { self.spill = spill }

    mutating func append(_ f: Finding) {
        bytes.removeAll(keepingCapacity: true)
        FindingCoding.encode(f, into: &bytes)
        let offset = bytes.withUnsafeBytes { spill.append($0) }
        keys.append(FindingKey(f, offset: offset, length: bytes.count, rule: rules.slot(f.id)))
        if let host = f.cost?.hostMC, host != 0 { hostCharges[offset] = host }
    }

    /// The findings in `Auditor.precedes`'s order: time, rule id, link, attribute (the file is the capture's, the
    /// same for all), then the order finished (the order `Array.sort` keeps among equals). The keys are sorted in
    /// place and handed over.
    mutating func sorted() -> StoredFindings {
        // Rule ids by their text's order.
        let byText = rules.ids.indices.sorted { rules.ids[$0] < rules.ids[$1] }
        var rank = [Int](repeating: 0, count: rules.ids.count)
        for (r, slot) in byText.enumerated() { rank[slot] = r }
        keys.sort { a, b in
            if a.start != b.start { return a.start < b.start }
            if a.rule != b.rule {
                let ra = rank[Int(a.rule)], rb = rank[Int(b.rule)]
                if ra != rb { return ra < rb }
            }
            let ca = a.connectionID == FindingKey.noConnection ? 0 : a.connectionID
            let cb = b.connectionID == FindingKey.noConnection ? 0 : b.connectionID
            if ca != cb { return ca < cb }
            if a.attribute != b.attribute { return a.attribute < b.attribute }
            return a.offset < b.offset
        }
        let hosts = hostCharges.isEmpty ? [] : keys.compactMap { hostCharges[$0.offset] }
        defer { keys = [] }
        return StoredFindings(storage: .spilled(spill), keys: keys, ruleIDs: rules.ids, hostCharges: hosts)
    }
}
