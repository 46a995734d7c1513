import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
import BTEnergy
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
        let report = try Self.audit(catalog: .classic, seeds: Self.seeds)
        for rule in report.rules where !Self.stackCatalogueRules.contains(rule) {
            let t = report.tallies[rule] ?? Tally()
            #expect(t.planted > 0, "\(rule): no planted problem over the seeds")
            #expect(t.controls > 0, "\(rule): no control over the seeds")
        }
        report.expectAllHold()
    }

    /// Rules whose planted problems and controls only real phone stacks' behaviour produces: the stack
    /// catalogue covers them (`stackGroundTruth`).
    static let stackCatalogueRules: Set<String> = ["scan-churn"]

    /// Seeds 1...14 of the stack catalogue (each kind at least twice), or the range in BTLENS_STACK_TRUTH_SEEDS.
    static let stackSeeds: ClosedRange<UInt64> = {
        let parts = ProcessInfo.processInfo.environment["BTLENS_STACK_TRUTH_SEEDS"]?.components(separatedBy: "...") ?? []
        if parts.count == 2, let lo = UInt64(parts[0]), let hi = UInt64(parts[1]), lo <= hi { return lo...hi }
        return 1...14
    }()

    @Test("real phone-stack behaviour: planted problems found, controls silent, scan duty over all PHYs")
    func stackGroundTruth() throws {
        let report = try Self.audit(catalog: .stack, seeds: Self.stackSeeds)
        report.expectAllHold()
        for rule in Self.stackCatalogueRules {
            let t = report.tallies[rule] ?? Tally()
            #expect(t.planted > 0 && t.controls > 0, "\(rule): planted \(t.planted), controls \(t.controls) over the stack seeds")
        }
        #expect(report.dutyChecked > 0, "no scan duty expectation over the seeds")
        #expect(report.dutyMismatches.isEmpty, "scan duty cycles: \(report.dutyMismatches)")
    }

    /// What auditing a catalogue's seeds gave.
    struct Report {
        var rules: [String]
        var tallies: [String: Tally]
        var unknownRules: [String] = []
        var failingUnexpected: [String] = []
        var dutyChecked = 0
        var dutyMismatches: [String] = []

        func expectAllHold() {
            #expect(unknownRules.isEmpty, "planted or control items of rules the audit does not have: \(unknownRules)")
            for rule in rules {
                let t = tallies[rule] ?? Tally()
                #expect(t.found == t.planted, "\(rule): found \(t.found) of \(t.planted) planted problems")
                #expect(t.flagged == 0, "\(rule): \(t.flagged) control(s) flagged")
            }
            #expect(failingUnexpected.isEmpty, "findings beside a control of their rule: \(failingUnexpected)")
        }
    }

    /// A scan of the energy report (what `btlens energy --json` prints as `scans[].duty_cycle`) overlapping the
    /// expected span has the expected duty cycle, all PHYs together.
    static let dutyTolerance = 0.01

    /// Writes and audits every seed of `catalog` (rotating through the formats), tallies planted problems and
    /// controls per rule, checks expected scan duty cycles against the energy report, and prints one line per
    /// rule with every miss, false alarm and unexpected finding.
    static func audit(catalog: GroundTruth.Catalog, seeds: ClosedRange<UInt64>) throws -> Report {
        let directory = try TemporaryDirectory(prefix: "btlens-truth")
        let rules = RuleRegistry.descriptions.map(\.name)
        var result = Report(rules: rules, tallies: Dictionary(uniqueKeysWithValues: rules.map { ($0, Tally()) }))
        var missed: [String] = []
        var flagged: [String] = []
        var unexpected: [String] = []
        for seed in seeds {
            let (scenario, manifest) = GroundTruth.scenario(seed: seed, catalog: catalog)
            let format = Self.formats[Int(seed % UInt64(Self.formats.count))]
            let path = directory.file("truth-\(catalog.rawValue)-\(seed).\(format.fileExtension)")
            try scenario.write(to: path, format: format)
            let capture = try OpenedCapture.open(path: path)
            var collector = TrackingCollector()
            let model = try capture.accept(&collector)
            let findings = Auditor().audit(model, file: path)
            for item in manifest.planted + manifest.controls where !rules.contains(item.rule) {
                result.unknownRules.append("seed \(seed) \(item.rule) \(Self.describe(item))")
            }
            for item in manifest.planted {
                result.tallies[item.rule, default: Tally()].planted += 1
                if findings.contains(where: { Self.matches($0, item) }) {
                    result.tallies[item.rule, default: Tally()].found += 1
                } else {
                    missed.append("seed \(seed) \(item.rule) \(Self.describe(item))")
                }
            }
            for item in manifest.controls {
                result.tallies[item.rule, default: Tally()].controls += 1
                if let f = findings.first(where: { Self.matches($0, item) }) {
                    result.tallies[item.rule, default: Tally()].flagged += 1
                    flagged.append("seed \(seed) \(item.rule) \(Self.describe(item)) — flagged: \(f.message)")
                }
            }
            for f in findings where !(manifest.planted + manifest.controls).contains(where: { Self.matches(f, $0) }) {
                let line = "seed \(seed) \(Self.describe(f))"
                unexpected.append(line)
                if manifest.controls.contains(where: { Self.concerns(f, control: $0) }) { result.failingUnexpected.append(line) }
            }
            if !manifest.scanDuty.isEmpty {
                let energy = EnergyReport(model: model)
                for expected in manifest.scanDuty {
                    result.dutyChecked += 1
                    // The scan that covers most of the expected span (its neighbours may touch its ends).
                    func overlap(_ s: EnergyReport.Scan) -> Double {
                        min(s.end.seconds, expected.end) - max(s.start.seconds, expected.start)
                    }
                    let main = energy.scans.filter { overlap($0) > 0 }.max { overlap($0) < overlap($1) }
                    let shown = main.map { [$0.session.parametersKnown ? $0.session.dutyCycle : 0] } ?? []
                    if shown.isEmpty || shown.contains(where: { abs($0 - expected.dutyCycle) > dutyTolerance }) {
                        result.dutyMismatches.append("seed \(seed) \(String(format: "%.3f", expected.start))–\(String(format: "%.3f", expected.end)): expected duty \(String(format: "%.3f", expected.dutyCycle)) (\(expected.note)), energy shows \(shown.map { String(format: "%.3f", $0) })")
                    }
                }
            }
        }

        var lines = ["Ground truth (\(catalog.rawValue)) over seeds \(seeds.lowerBound)...\(seeds.upperBound):"]
        var total = Tally()
        for rule in Set(rules + result.tallies.keys).sorted() {
            let t = result.tallies[rule] ?? Tally()
            guard catalog == .classic || t.planted + t.controls > 0 else { continue }
            let recall = t.planted == 0 ? "-" : String(format: "%.0f", 100 * Double(t.found) / Double(t.planted))
            lines.append("\(rule): planted \(t.planted), found \(t.found) (recall \(recall) %), controls \(t.controls), flagged \(t.flagged)")
            total.planted += t.planted; total.found += t.found; total.controls += t.controls; total.flagged += t.flagged
        }
        let totalRecall = total.planted == 0 ? "-" : String(format: "%.1f", 100 * Double(total.found) / Double(total.planted))
        lines.append("total: planted \(total.planted), found \(total.found) (recall \(totalRecall) %), controls \(total.controls), flagged \(total.flagged)")
        lines.append("missed planted problems: \(missed.count)")
        lines += missed.map { "  " + $0 }
        lines.append("flagged controls: \(flagged.count)")
        lines += flagged.map { "  " + $0 }
        lines.append("unexpected findings (neither planted nor control): \(unexpected.count)")
        lines += unexpected.map { "  " + $0 }
        if result.dutyChecked > 0 {
            lines.append("scan duty expectations: \(result.dutyChecked), mismatched \(result.dutyMismatches.count)")
            lines += result.dutyMismatches.map { "  " + $0 }
        }
        print(lines.joined(separator: "\n"))
        return result
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

    @Test("seeds 1...7 of the stack catalogue play every stack kind; the catalogues' manifests say which they are")
    func stackCoverage() {
        let manifests = (1...7 as ClosedRange<UInt64>).map { GroundTruth.scenario(seed: $0, catalog: .stack).1 }
        #expect(Set(manifests.flatMap(\.episodes)) == Set(GroundTruth.episodeNames(.stack)))
        #expect(manifests.allSatisfy { $0.json().contains("\"catalog\": \"stack\"") })
        #expect(!GroundTruth.scenario(seed: 7).1.json().contains("\"catalog\""))
        #expect(Set(GroundTruth.episodeNames(.stack)).isDisjoint(with: GroundTruth.episodeNames))
    }
}
