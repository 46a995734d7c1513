import Foundation
import Testing
import BTWire
import BTEnergy
import BTRules
@testable import BTReport

/// `btlens diff` sorts the two sides' fingerprints and their links' costs by peer, in runs set aside on a long
/// capture, rather than holding sets and dictionaries of them: new, fixed and unchanged findings and the activities
/// must come out as the plain set and dictionary logic gives them, in the same order.
@Suite("diff: findings matched and activities summed in sorted runs")
struct DiffMatchTests {
    typealias Random = TraceOrderTests.Random

    /// A side of `count` findings drawn from `kinds` fingerprints (so repeated, and shared with the other side),
    /// and `links` links to `peers` peers (one in seven to no known peer).
    static func side(_ label: String, count: Int, kinds: Int, links: Int, peers: Int, seed: UInt64) throws -> DiffSide {
        var random = Random(state: seed)
        var items: [DiffSide.Item] = []
        for i in 0..<count {
            let fingerprint = "fp\(random.next(kinds))"
            items.append(DiffSide.Item(fingerprint: fingerprint, id: "rule", rule: "Rule", severity: .warning,
                                       message: "\(label) \(i)", chargeMC: 0, json: .string("\(label) \(i) \(fingerprint)")))
        }
        var side = try DiffSide(label: label, auditJSON: Data(#"{"findings": []}"#.utf8))
        side.findings = DiffFindings(items)
        side.scanning = RadioCost(radioSeconds: 1, chargeMC: Double(random.next(5)))
        side.advertising = RadioCost(radioSeconds: 1, chargeMC: Double(random.next(3)))
        for id in 0..<links {
            let peer = random.next(7) == 0 ? DiffSide.LinkCharge.unknownPeer : UInt64(0xD0_0000_0000 + random.next(peers))
            let charge = random.next(6) == 0 ? 0 : Double(random.next(1_000)) / 7
            side.linkCharges.append(DiffSide.LinkCharge(peer: peer, id: Int64(id * 3 + random.next(3)),
                                                        cost: RadioCost(radioSeconds: charge / 10, chargeMC: charge)))
        }
        return side
    }

    /// The activities as a dictionary by name gives them: the base's names in order, then the head's others.
    static func expectedActivities(_ base: DiffSide, _ head: DiffSide) -> [String] {
        func activities(_ s: DiffSide) -> [(name: String, cost: RadioCost)] {
            guard let scanning = s.scanning, let advertising = s.advertising else { return [] }
            var order: [String] = []
            var costs: [String: RadioCost] = [:]
            func add(_ name: String, _ c: RadioCost) {
                if costs[name] == nil { order.append(name) }
                costs[name, default: .zero] += c
            }
            add("scanning", scanning)
            for c in s.linkCharges {
                add(c.peer == DiffSide.LinkCharge.unknownPeer ? "connections to an unknown peer"
                    : "connections to \(BDAddr(rawValue: c.peer))", c.cost)
            }
            add("advertising", advertising)
            return order.map { ($0, costs[$0]!) }
        }
        let b = activities(base), h = activities(head)
        var names = b.map(\.name)
        for a in h where !names.contains(a.name) { names.append(a.name) }
        return names.compactMap { n in
            let x = b.first { $0.name == n }?.cost, y = h.first { $0.name == n }?.cost
            return (x?.chargeMC ?? 0) == 0 && (y?.chargeMC ?? 0) == 0 ? nil : "\(n) \(x?.chargeMC.bitPattern ?? 0) \(y?.chargeMC.bitPattern ?? 0)"
        }
    }

    @Test("the same new, fixed and unchanged findings and activities as sets and dictionaries give", arguments: [1, 5, 64, 1 << 16])
    func sameAsSets(runLength: Int) throws {
        let directory = FileManager.default.temporaryDirectory.path
        for seed in [1, 2] as [UInt64] {
            let base = try Self.side("base", count: 300, kinds: 120, links: 200, peers: 40, seed: seed)
            let head = try Self.side("head", count: 250, kinds: 150, links: 150, peers: 60, seed: seed + 10)
            let diff = CaptureDiff(base: base, head: head, directory: directory, runLength: runLength)
            let baseKeys = Set(base.findings.map(\.fingerprint)), headKeys = Set(head.findings.map(\.fingerprint))
            let new = head.findings.filter { !baseKeys.contains($0.fingerprint) }.map(\.message)
            let fixed = base.findings.filter { !headKeys.contains($0.fingerprint) }.map(\.message)
            let unchanged = head.findings.filter { baseKeys.contains($0.fingerprint) }.map(\.message)
            #expect(!new.isEmpty && !fixed.isEmpty && !unchanged.isEmpty)
            #expect(diff.new.map(\.message) == new)
            #expect(diff.fixed.map(\.message) == fixed)
            #expect(diff.unchanged.map(\.message) == unchanged)
            let activities = diff.activities.map { "\($0.name) \($0.base?.chargeMC.bitPattern ?? 0) \($0.head?.chargeMC.bitPattern ?? 0)" }
            let expected = Self.expectedActivities(base, head)
            #expect(expected.count > 50)
            #expect(activities == expected, "seed \(seed), runs of \(runLength)")
            // An audit report's side (no activities) on either side.
            var report = try DiffSide(label: "report", auditJSON: Data(#"{"findings": []}"#.utf8))
            report.findings = DiffFindings([])
            for (b, h) in [(report, head), (base, report)] {
                let d = CaptureDiff(base: b, head: h, directory: directory, runLength: runLength)
                #expect(d.activities.map { "\($0.name) \($0.base?.chargeMC.bitPattern ?? 0) \($0.head?.chargeMC.bitPattern ?? 0)" }
                        == Self.expectedActivities(b, h))
            }
            let none = CaptureDiff(base: report, head: report)
            #expect(none.activities.isEmpty && none.new.isEmpty && none.unchanged.isEmpty)
        }
    }
}
