import BTWire
import BTEnergy
import BTRules

/// `btlens diff BASE_DIR HEAD_DIR`: two runs of a device farm's tests (say builds 411 and 412), captures paired by
/// test and device (`TestCaseNaming`), each pair compared as `btlens diff` compares two captures; reported per test
/// and in total: new and fixed findings and the change in the phone's radio charge. Schema:
/// Schemas/farm-diff.schema.json.
public struct FarmDiff: Sendable {
    public struct Test: Sendable {
        public var name: String
        /// One per device that ran the test in both runs.
        public var pairs: [CaptureDiff] = []
        /// Captures of the test in one run only (a device added or gone).
        public var baseOnly: [String] = []
        public var headOnly: [String] = []

        public var new: Int { pairs.reduce(0) { $0 + $1.new.count } }
        public var fixed: Int { pairs.reduce(0) { $0 + $1.fixed.count } }
        public var unchanged: Int { pairs.reduce(0) { $0 + $1.unchanged.count } }
        public var baseMC: Double { pairs.reduce(0) { $0 + ($1.base.chargeMC ?? 0) } }
        public var headMC: Double { pairs.reduce(0) { $0 + ($1.head.chargeMC ?? 0) } }
        public var changePercent: Double? { FarmDiff.percent(baseMC, headMC) }
    }

    public var base: String
    public var head: String
    public var tests: [Test]
    /// Captures whose names are no test's (the pattern did not match), per side.
    public var unnamed: [String]

    /// - Parameter base, head: each capture's file and test case, and its side (audited and priced).
    public init(base: String, head: String, baseCaptures: [(file: String, testCase: TestCaseNaming.TestCase?, side: DiffSide)],
                headCaptures: [(file: String, testCase: TestCaseNaming.TestCase?, side: DiffSide)]) {
        self.base = base
        self.head = head
        unnamed = (baseCaptures + headCaptures).filter { $0.testCase == nil }.map(\.file)
        var byTest: [String: Test] = [:]
        // A device's captures of a test, in file order; paired in that order with the other run's.
        func grouped(_ captures: [(file: String, testCase: TestCaseNaming.TestCase?, side: DiffSide)])
            -> [String: [(file: String, side: DiffSide)]] {
            var out: [String: [(file: String, side: DiffSide)]] = [:]
            for c in captures.sorted(by: { $0.file < $1.file }) {
                guard let t = c.testCase else { continue }
                out[t.test + "\u{0}" + (t.serial ?? ""), default: []].append((c.file, c.side))
            }
            return out
        }
        let b = grouped(baseCaptures), h = grouped(headCaptures)
        for key in Set(b.keys).union(h.keys) {
            let test = String(key.split(separator: "\u{0}", omittingEmptySubsequences: false)[0])
            var entry = byTest[test] ?? Test(name: test)
            let left = b[key] ?? [], right = h[key] ?? []
            for i in 0..<max(left.count, right.count) {
                if i < left.count && i < right.count {
                    entry.pairs.append(CaptureDiff(base: left[i].side, head: right[i].side))
                } else if i < left.count {
                    entry.baseOnly.append(left[i].file)
                } else {
                    entry.headOnly.append(right[i].file)
                }
            }
            byTest[test] = entry
        }
        tests = byTest.values.sorted { $0.name < $1.name }
    }

    static func percent(_ base: Double, _ head: Double) -> Double? { base > 0 ? (head - base) / base * 100 : nil }

    public var new: Int { tests.reduce(0) { $0 + $1.new } }
    public var fixed: Int { tests.reduce(0) { $0 + $1.fixed } }
    public var unchanged: Int { tests.reduce(0) { $0 + $1.unchanged } }
    public var baseMC: Double { tests.reduce(0) { $0 + $1.baseMC } }
    public var headMC: Double { tests.reduce(0) { $0 + $1.headMC } }
    public var changePercent: Double? { Self.percent(baseMC, headMC) }

    /// The tests that fail: the radio charge rose more than `increase` % on the test (its devices together), or a
    /// new finding reaches `failOn`.
    public func failing(increase: Double?, failOn: Severity?) -> [String] {
        tests.filter { t in
            if let increase, let change = t.changePercent, change > increase { return true }
            return t.pairs.contains { $0.fails(increase: nil, failOn: failOn) }
        }.map(\.name)
    }

    // MARK: Output

    public func json(increase: Double?, failOn: Severity?) -> JSONValue {
        let failing = Set(failing(increase: increase, failOn: failOn))
        func charge(_ b: Double, _ h: Double, _ p: Double?) -> JSONValue {
            .object([("base_mc", EnergyJSON.round(b, 4)), ("head_mc", EnergyJSON.round(h, 4)),
                     ("change_pct", p.map { EnergyJSON.round($0, 2) } ?? .null)])
        }
        return .object([
            ("base", .string(base)), ("head", .string(head)),
            ("tests", .array(tests.map { t in
                .object([
                    ("test", .string(t.name)), ("devices", .int(t.pairs.count)),
                    ("new", .int(t.new)), ("fixed", .int(t.fixed)), ("unchanged", .int(t.unchanged)),
                    ("charge", charge(t.baseMC, t.headMC, t.changePercent)),
                    ("failed", .bool(failing.contains(t.name))),
                    ("new_findings", .array(t.pairs.flatMap { p in p.new.map { f in
                        .object([("capture", .string(p.head.label)), ("finding", f.json)]) } })),
                    ("fixed_findings", .array(t.pairs.flatMap { p in p.fixed.map { f in
                        .object([("capture", .string(p.base.label)), ("finding", f.json)]) } })),
                    ("base_only", .array(t.baseOnly.map { .string($0) })), ("head_only", .array(t.headOnly.map { .string($0) })),
                ])
            })),
            ("total", .object([("tests", .int(tests.count)), ("new", .int(new)), ("fixed", .int(fixed)),
                               ("unchanged", .int(unchanged)), ("charge", charge(baseMC, headMC, changePercent)),
                               ("failed_tests", .int(failing.count))])),
            ("unnamed", .array(unnamed.map { .string($0) })),
        ])
    }

    public func text(increase: Double?, failOn: Severity?) -> String {
        let failing = Set(failing(increase: increase, failOn: failOn))
        var out = ["btlens diff \(base) → \(head): \(Plural.of(tests.count, "test"))"]
        for t in tests {
            var line = "  \(t.name) (\(Plural.of(t.pairs.count, "device"))): radio charge \(CaptureDiff.mc(t.baseMC)) → "
                + "\(CaptureDiff.mc(t.headMC)) (\(CaptureDiff.pct(t.changePercent))), \(t.new) new, \(t.fixed) fixed"
            if failing.contains(t.name) { line += " — failing" }
            out.append(line)
            for p in t.pairs {
                for f in p.new { out.append("    new in \(p.head.label): \(f.severity.rawValue) \(f.id) \(f.rule): \(f.message)") }
                for f in p.fixed { out.append("    fixed in \(p.head.label): \(f.id) \(f.rule)") }
            }
            for f in t.baseOnly { out.append("    only in \(base): \(f)") }
            for f in t.headOnly { out.append("    only in \(head): \(f)") }
        }
        out.append("  total: radio charge \(CaptureDiff.mc(baseMC)) → \(CaptureDiff.mc(headMC)) (\(CaptureDiff.pct(changePercent))), "
                   + "\(new) new, \(fixed) fixed, \(unchanged) unchanged findings; \(Plural.of(failing.count, "test")) failing")
        if !unnamed.isEmpty { out.append("  not a test's capture (--test-pattern): \(unnamed.joined(separator: ", "))") }
        return out.joined(separator: "\n")
    }

    public func markdown(increase: Double?, failOn: Severity?) -> String {
        let failing = Set(failing(increase: increase, failOn: failOn))
        var out = ["## \(failing.isEmpty ? "✅" : "⚠️") btlens diff: \(Plural.of(tests.count, "test"))", ""]
        out.append("Radio charge (phone): **\(CaptureDiff.mc(baseMC)) → \(CaptureDiff.mc(headMC))** (\(CaptureDiff.pct(changePercent))); "
                   + "findings: **\(new) new**, \(fixed) fixed.")
        out.append("")
        out.append("| test | devices | base | head | change | new | fixed |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for t in tests {
            out.append("| \(failing.contains(t.name) ? "⚠️ " : "")\(t.name.replacingPipes()) | \(t.pairs.count) | \(CaptureDiff.mc(t.baseMC)) | "
                       + "\(CaptureDiff.mc(t.headMC)) | \(CaptureDiff.pct(t.changePercent)) | \(t.new) | \(t.fixed) |")
        }
        return out.joined(separator: "\n")
    }
}
