import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
import BTScenario
import TestSupport

/// The audit against randomised ground truth (`GroundTruth.scenario(seed:)`): for each seed a capture of several
/// episodes with a manifest of planted problems (a rule must report each) and controls (similar behaviour on the
/// fine side of the threshold that the rule must not report). Audited with the default configuration; prints one
/// line per rule with recall and false alarms, and lists every miss, false alarm and unexpected finding.
@Suite("Ground truth: randomised planted problems and controls")
struct GroundTruthTests {
    /// Seeds 1...24, or the range in BTLENS_TRUTH_SEEDS ("1...500") to explore more.
    static let seeds: ClosedRange<UInt64> = {
        let parts = ProcessInfo.processInfo.environment["BTLENS_TRUTH_SEEDS"]?.components(separatedBy: "...") ?? []
        if parts.count == 2, let lo = UInt64(parts[0]), let hi = UInt64(parts[1]), lo <= hi { return lo...hi }
        return 1...24
    }()
    /// Finding and item time ranges match when they overlap within this many seconds.
    static let tolerance = 2.0
    /// The seeds rotate through the formats the generator writes, so every reader is exercised.
    static let formats: [ScenarioFormat] = [.btsnoopH4, .pcapH4WithDirection, .packetLoggerLE]

    /// A finding reports an item: same rule, the item's connection and attribute when it names them, and time
    /// ranges that overlap (± `tolerance`).
    static func matches(_ f: Finding, _ item: GroundTruthItem) -> Bool {
        f.rule == item.rule
            && (item.connection == nil || f.connection?.id == item.connection)
            && (item.attributeHandle == nil || f.attributeHandle == item.attributeHandle)
            && f.start.seconds <= item.end + tolerance && f.end.seconds >= item.start - tolerance
    }

    /// An unmatched finding in the connection (and attribute) of a control of its rule: the control's situation
    /// was flagged at another time, which counts against the rule too.
    static func concerns(_ f: Finding, control item: GroundTruthItem) -> Bool {
        f.rule == item.rule
            && (item.connection == nil || f.connection?.id == item.connection)
            && (item.attributeHandle == nil || f.attributeHandle == item.attributeHandle)
    }

    struct Tally {
        var planted = 0
        var found = 0
        var controls = 0
        var flagged = 0
    }

    static func describe(_ item: GroundTruthItem) -> String {
        "connection \(item.connection.map(String.init) ?? "-"), handle \(item.attributeHandle.map { "0x" + String($0, radix: 16) } ?? "-"), "
            + "\(String(format: "%.3f", item.start))–\(String(format: "%.3f", item.end)): \(item.note)"
    }

    static func describe(_ f: Finding) -> String {
        "\(f.rule) connection \(f.connection.map { String($0.id) } ?? "-"), handle \(f.attributeHandle.map { "0x" + String($0, radix: 16) } ?? "-"), "
            + "\(String(format: "%.3f", f.start.seconds))–\(String(format: "%.3f", f.end.seconds)): \(f.message)"
    }

    @Test("every planted problem is found and no control is flagged, for all 13 rules")
    func groundTruth() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-truth")
        let rules = RuleRegistry.descriptions.map(\.name)
        var tallies = Dictionary(uniqueKeysWithValues: rules.map { ($0, Tally()) })
        var missed: [String] = []
        var flagged: [String] = []
        var unexpected: [String] = []
        var failingUnexpected: [String] = []
        for seed in Self.seeds {
            let (scenario, manifest) = GroundTruth.scenario(seed: seed)
            let format = Self.formats[Int(seed % UInt64(Self.formats.count))]
            let path = directory.file("truth-\(seed).\(format.fileExtension)")
            try scenario.write(to: path, format: format)
            let capture = try OpenedCapture.open(path: path)
            var collector = TrackingCollector()
            let model = try capture.accept(&collector)
            let findings = Auditor().audit(model, file: path)
            for item in manifest.planted {
                #expect(rules.contains(item.rule), "seed \(seed): unknown rule \(item.rule)")
                tallies[item.rule, default: Tally()].planted += 1
                if findings.contains(where: { Self.matches($0, item) }) {
                    tallies[item.rule, default: Tally()].found += 1
                } else {
                    missed.append("seed \(seed) \(item.rule) \(Self.describe(item))")
                }
            }
            for item in manifest.controls {
                #expect(rules.contains(item.rule), "seed \(seed): unknown rule \(item.rule)")
                tallies[item.rule, default: Tally()].controls += 1
                if let f = findings.first(where: { Self.matches($0, item) }) {
                    tallies[item.rule, default: Tally()].flagged += 1
                    flagged.append("seed \(seed) \(item.rule) \(Self.describe(item)) — flagged: \(f.message)")
                }
            }
            for f in findings where !(manifest.planted + manifest.controls).contains(where: { Self.matches(f, $0) }) {
                let line = "seed \(seed) \(Self.describe(f))"
                unexpected.append(line)
                if manifest.controls.contains(where: { Self.concerns(f, control: $0) }) { failingUnexpected.append(line) }
            }
        }

        var report = ["Ground truth over seeds \(Self.seeds.lowerBound)...\(Self.seeds.upperBound):"]
        var total = Tally()
        for rule in rules {
            let t = tallies[rule] ?? Tally()
            let recall = t.planted == 0 ? "-" : String(format: "%.0f", 100 * Double(t.found) / Double(t.planted))
            report.append("\(rule): planted \(t.planted), found \(t.found) (recall \(recall) %), controls \(t.controls), flagged \(t.flagged)")
            total.planted += t.planted; total.found += t.found; total.controls += t.controls; total.flagged += t.flagged
        }
        let totalRecall = total.planted == 0 ? "-" : String(format: "%.1f", 100 * Double(total.found) / Double(total.planted))
        report.append("total: planted \(total.planted), found \(total.found) (recall \(totalRecall) %), controls \(total.controls), flagged \(total.flagged)")
        report.append("missed planted problems: \(missed.count)")
        report += missed.map { "  " + $0 }
        report.append("flagged controls: \(flagged.count)")
        report += flagged.map { "  " + $0 }
        report.append("unexpected findings (neither planted nor control): \(unexpected.count)")
        report += unexpected.map { "  " + $0 }
        print(report.joined(separator: "\n"))

        for rule in rules {
            let t = tallies[rule] ?? Tally()
            #expect(t.planted > 0, "\(rule): no planted problem over the seeds")
            #expect(t.controls > 0, "\(rule): no control over the seeds")
            #expect(t.found == t.planted, "\(rule): found \(t.found) of \(t.planted) planted problems")
            #expect(t.flagged == 0, "\(rule): \(t.flagged) control(s) flagged")
        }
        #expect(failingUnexpected.isEmpty, "findings beside a control of their rule: \(failingUnexpected)")
    }

    @Test("the same seed gives the same capture and manifest")
    func deterministic() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-truth")
        let (a, manifestA) = GroundTruth.scenario(seed: 7)
        let (b, manifestB) = GroundTruth.scenario(seed: 7)
        #expect(manifestA == manifestB)
        try a.write(to: directory.file("a.btsnoop"))
        try b.write(to: directory.file("b.btsnoop"))
        #expect(try TemporaryDirectory.contents(of: directory.file("a.btsnoop")) == TemporaryDirectory.contents(of: directory.file("b.btsnoop")))
        #expect(manifestA.json() == manifestB.json())
        #expect(GroundTruth.scenario(seed: 8).1 != manifestA)
    }

    @Test("seeds 1...24 play every kind of episode")
    func coverage() {
        let played = Set((1...24 as ClosedRange<UInt64>).flatMap { GroundTruth.scenario(seed: $0).1.episodes })
        #expect(played == Set(GroundTruth.episodeNames))
    }
}
