import Testing
import BTWire
import BTCapture
@testable import BTRules
import BTEnergy
@testable import BTReport

/// `AuditCost.groupedIndices`: repeats of one rule on one peer (three or more) become groups in the order of their
/// first members, the rest keep their order; each group's line sums and ranks its members.
@Suite("Audit repeats grouped")
struct AuditGroupingTests {
    static func finding(_ n: Int, rule: (name: String, id: String), peer: UInt64?, severity: Severity, charge: Double) -> Finding {
        let link = FindingConnection(id: n % 7, handle: 0x40, peerAddress: peer.map(BDAddr.init(rawValue:)), peerLink: 1,
                                     start: Timestamp(nanoseconds: Int64(n)), accessAddress: nil)
        return Finding(rule: rule.name, id: rule.id, severity: severity, controller: 0, connection: link,
                       attributeHandle: nil, discriminator: "", start: Timestamp(nanoseconds: Int64(n)),
                       end: Timestamp(nanoseconds: Int64(n) + 1), records: [], message: "finding \(n)", advice: "a",
                       file: "f",
                       cost: FindingCost(phone: RadioCost(radioSeconds: Double(n) / 100, chargeMC: charge), peripheral: nil),
                       owner: nil, fingerprint: "fp\(n)")
    }

    @Test("groups and rest as a list of each rule and peer's findings would make them")
    func sameAsReference() {
        let rules = [("reconnect-by-scan", "BTL007"), ("connection-churn", "BTL009")]
        let severities: [Severity] = [.info, .warning, .error]
        // Peers 0–4 on two rules, some findings without a peer: keys with 1 to many findings.
        var list: [Finding] = []
        for n in 0..<400 {
            // Without a peer, a peer of its own, or one of a few.
            let peer: UInt64? = n % 11 == 0 ? nil : n % 17 == 0 ? 0xD0_0000_0000 + UInt64(n)
                : 0xC0_0000_0000 + UInt64((n * n) % 5 * (n % 3))
            list.append(Self.finding(n, rule: rules[(n / 3) % 2], peer: peer, severity: severities[(n * 7) % 3],
                                     charge: Double(n % 13) / 8))
        }
        let findings = Findings(list)
        let (groups, rest) = AuditCost.groupedIndices(findings)

        // Reference: each key's places in order; groups in the order of first members.
        var byKey: [String: [Int]] = [:]
        var firstSeen: [String] = []
        for (i, f) in list.enumerated() {
            guard let peer = f.connection?.peerAddress else { continue }
            let key = "\(f.id) \(peer)"
            if byKey[key] == nil { firstSeen.append(key) }
            byKey[key, default: []].append(i)
        }
        let grouped = firstSeen.filter { byKey[$0]!.count >= AuditCost.groupedFrom }
        #expect(grouped.count > 1 && grouped.count < firstSeen.count, "the list makes groups and leaves keys ungrouped")
        #expect(groups.map { "\($0.id) \($0.peer)" } == grouped)
        for g in groups {
            let members = byKey["\(g.id) \(g.peer)"]!
            #expect(g.indices.map(Int.init) == members)
            let messages: [String] = g.findings.map { (f: Finding) in f.message }
            #expect(g.count == members.count && messages == members.map { list[$0].message })
            var charge = 0.0
            for m in members { charge += list[m].cost?.phone.chargeMC ?? 0 }
            #expect(g.charge == charge)
            let worst = members.map { list[$0].severity }.min { AuditCost.severityRank($0) < AuditCost.severityRank($1) }
            #expect(g.severity == worst)
        }
        let inGroups = Set(groups.flatMap { $0.indices.map(Int.init) })
        #expect(rest.map(Int.init) == list.indices.filter { !inGroups.contains($0) })
    }

    @Test("no repeats: no group, every finding in the rest")
    func noRepeats() {
        let list = (0..<5).map { Self.finding($0, rule: ("connection-churn", "BTL009"), peer: UInt64($0 + 1), severity: .warning, charge: 1) }
        let (groups, rest) = AuditCost.groupedIndices(Findings(list))
        #expect(groups.isEmpty && rest == [0, 1, 2, 3, 4])
    }
}
