import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
@testable import BTRules

/// A finding set aside as bytes (`FindingCoding`) comes back with every field as it was, and a list read back from
/// a spill (`StoredFindings`, `Findings`) answers what its keys hold as the findings would.
@Suite("Findings as bytes")
struct FindingCodingTests {
    /// A finding with every optional part, or none.
    static func finding(full: Bool, id: Int = 1) -> Finding {
        let start = Timestamp(nanoseconds: 1_768_471_200_002_826_000 + Int64(id))
        let records = (0..<(full ? 9 : 0)).map {
            RecordRef(number: $0 * 1000 + id, offset: Int64($0) << 33, timestamp: Timestamp(nanoseconds: -Int64($0) * 7),
                      controller: UInt16($0), length: $0 == 3 ? Int(UInt32.max) : $0)
        }
        var f = Finding(rule: full ? ReconnectByScanRule.description : RuleDescription(
            id: "XYZ9", name: "not-registered", title: "t", category: .scanning, defaultSeverity: .info, rationale: "r",
            coreBluetooth: "c", android: "a", fixtures: []),
                        severity: full ? .error : nil, controller: full ? 65535 : 0, start: start,
                        end: Timestamp(nanoseconds: full ? Timestamp.limit : -Timestamp.limit), records: records,
                        message: full ? "Scanné 12 s — «×3» | \u{1F4F1}\n" : "")
        f.file = full ? "/captures/ünïcode file.btsnoop" : ""
        if full {
            f.advice = "custom advice"
            f.cost = FindingCost(phone: RadioCost(radioSeconds: 0.1 + 0.2, chargeMC: 1e-300, lowMC: 0, highMC: .greatestFiniteMagnitude),
                                 peripheral: RadioCost(radioSeconds: 3, chargeMC: 4), hostMC: 0.5)
            f.cost?.measuredCap = true
            f.owner = Owner(kind: .app, apps: ["com.example.a", "com.example.b"], evidence: "bug report: GATT Scanner Map")
        }
        return f
    }

    /// Every field of `a` and `b`, as text (`Finding` is not `Equatable`).
    static func fields(_ f: Finding) -> String {
        "\(f.rule)|\(f.id)|\(f.severity)|\(f.controller)|\(String(describing: f.connection))|\(String(describing: f.attributeHandle))|"
            + "\(f.discriminator)|\(f.start)|\(f.end)|\(f.records)|\(f.message)|\(f.advice)|\(f.file)|"
            + "\(String(describing: f.cost))|\(String(describing: f.owner))|\(f.fingerprint)"
    }

    static func roundTrip(_ f: Finding) throws -> Finding {
        var bytes: [UInt8] = []
        FindingCoding.encode(f, into: &bytes)
        return try bytes.withUnsafeBytes { try FindingCoding.decode($0) }
    }

    @Test("every field comes back as it was, with or without its optional parts")
    func roundTrip() throws {
        for full in [true, false] {
            let f = Self.finding(full: full)
            let back = try Self.roundTrip(f)
            #expect(Self.fields(back) == Self.fields(f))
            #expect(back.cost?.phone.chargeMC.bitPattern == f.cost?.phone.chargeMC.bitPattern)
        }
    }

    @Test("a link's fields come back, its peer and access address present or not")
    func connection() throws {
        for peer in [BDAddr(rawValue: 0xC15C_A000_002C), nil] {
            for aa in [UInt32(0x5065_4D3A), nil] {
                let link = FindingConnection(id: Int(Int32.max), handle: 0x0EFF, peerAddress: peer, peerLink: 3,
                                             start: Timestamp(nanoseconds: 42), accessAddress: aa)
                let f = Finding(rule: "reconnect-by-scan", id: "BTL007", severity: .warning, controller: 1, connection: link,
                                attributeHandle: 0x2A, discriminator: "connections#2", start: Timestamp(nanoseconds: 1),
                                end: Timestamp(nanoseconds: 2), records: [], message: "m",
                                advice: ReconnectByScanRule.description.advice, file: "f", cost: nil, owner: nil, fingerprint: "fp")
                #expect(Self.fields(try Self.roundTrip(f)) == Self.fields(f))
            }
        }
    }

    @Test("bytes that are not a finding are a typed error, never a crash")
    func corrupt() {
        var bytes: [UInt8] = []
        FindingCoding.encode(Self.finding(full: true), into: &bytes)
        for cut in [0, 1, bytes.count / 2, bytes.count - 1] {
            #expect(throws: FindingStoreError.self) { _ = try Array(bytes.prefix(cut)).withUnsafeBytes { try FindingCoding.decode($0) } }
        }
        #expect(throws: FindingStoreError.self) { _ = try (bytes + [0]).withUnsafeBytes { try FindingCoding.decode($0) } }
    }

    @Test("a list's keys count, sum and name rules as its findings do, held or concatenated")
    func keys() {
        var list: [Finding] = []
        for i in 0..<7 {
            var f = Self.finding(full: i % 2 == 0, id: i)
            f.severity = [Severity.info, .warning, .error][i % 3]
            list.append(f)
        }
        let one = Findings(list)
        let two = Findings(concatenating: [one, Findings(Array(list.prefix(3))), []])
        #expect(two.count == 10)
        let all = list + list.prefix(3)
        for s in Severity.allCases { #expect(two.count(s) == all.filter { $0.severity == s }.count) }
        #expect(two.chargeSum == all.reduce(0) { $0 + ($1.cost?.phone.chargeMC ?? 0) })
        #expect(two.hostChargeSum == all.reduce(0) { $0 + ($1.cost?.hostMC ?? 0) })
        #expect(two.indices.map(two.ruleID(at:)) == all.map(\.id))
        #expect(two.map(Self.fields) == all.map(Self.fields))
        #expect(two.contains(atLeast: .error) && !Findings(list.filter { $0.severity == .info }).contains(atLeast: .warning))
    }

    @Test("findings read one at a time are de-duplicated as the whole list is: the first of each fingerprint and start")
    func deduplication() throws {
        var list: [Finding] = []
        for i in 0..<40 {
            var f = Self.finding(full: i % 2 == 0, id: i % 5)
            f.message = "finding \(i)"
            list.append(f)
        }
        // Set aside in a directory, in runs of 7 (so the hashes are merged from several), and in memory.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("btlens-dedup-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (where_, runLength) in [(Optional(directory), 7), (nil, 7), (Optional(directory), FindingDeduplication.runLength)] {
            let spill = try FindingSpill(directory: where_)
            var made = PlainList<FindingSpill.Ref>(directory: where_)
            for f in list { made.append(spill.append(f)) }
            let places = try FindingDeduplication.duplicates(of: made, in: spill, runLength: runLength)
            let dropped = Set((places.map(Array.init) ?? []).map(Int.init))
            let kept = list.indices.filter { !dropped.contains($0) }.map { list[$0] }
            #expect(kept.map(Self.fields) == Auditor.deduplicated(list).map(Self.fields))
            #expect(kept.count < list.count)
            // Findings with no fingerprint and start in common: nothing to leave out, and no list made for it.
            let distinct = try FindingDeduplication.duplicates(of: Array(made.values(in: 0..<5)), in: spill, runLength: runLength)
            #expect(distinct == nil)
        }
    }
}
