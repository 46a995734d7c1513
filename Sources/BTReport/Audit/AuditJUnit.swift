import BTWire
import BTRules

/// JUnit XML: a testsuite per capture, a testcase per rule, a failure per finding at or above `--fail-on`
/// (findings below it are listed in system-out). A capture that could not be read has one testcase, in error.
/// A device farm's captures (a directory of `<test>-<serial>-btsnoop_hci.log`) are a testcase each instead.
public enum AuditJUnit {
    static func escape(_ s: String) -> String { MarkupEscaping.escape(s) }

    /// - Parameter testCases: captures of a device farm's test run (`TestCaseNaming`), by file: each is one
    ///   testcase (classname its device serial, name its test) with a failure per finding at or above `--fail-on`,
    ///   in one testsuite after those of the other captures. Empty: the report is as it always was.
    public static func render(_ run: AuditRun, testCases: [String: TestCaseNaming.TestCase] = [:]) -> String {
        var out = ""
        write(run, testCases: testCases) { out += $0 }
        return out
    }

    /// `render`, written a testcase at a time: the report is never held whole (a capture with tens of thousands of
    /// findings made a report of a hundred megabytes). The totals each element opens with are counted first.
    public static func write(_ run: AuditRun, testCases: [String: TestCaseNaming.TestCase] = [:], to out: (String) -> Void) {
        let catalogue = RuleRegistry.descriptions
        let plain = run.captures.filter { testCases[$0.file] == nil }
        let farm = run.captures.filter { testCases[$0.file] != nil }
        // A capture that could not be read has one testcase (in error) and none per rule: no rule ran on it.
        func cases(_ c: AuditedCapture) -> Int { c.error == nil ? catalogue.count : 1 }
        func failures(_ c: AuditedCapture) -> Int { c.error != nil ? 0 : c.findings.indices.reduce(0) { $0 + (run.fails(c.findings.key(at: $1)) ? 1 : 0) } }
        let farmFailures = farm.reduce(0) { $0 + failures($1) }
        let farmErrors = farm.filter { $0.error != nil }.count
        let totalTests = plain.reduce(0) { $0 + cases($1) } + farm.count
        let totalFailures = plain.reduce(0) { $0 + failures($1) } + farmFailures
        let totalErrors = plain.filter { $0.error != nil }.count + farmErrors
        out("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"btlens audit\" tests=\"\(totalTests)\" failures=\"\(totalFailures)\" errors=\"\(totalErrors)\">")
        // An empty line where no testsuite is (as the report always had).
        if plain.isEmpty && farm.isEmpty { out("\n") }
        for capture in plain {
            out("\n  <testsuite name=\"\(escape(capture.file))\" tests=\"\(cases(capture))\" failures=\"\(failures(capture))\" errors=\"\(capture.error == nil ? 0 : 1)\" skipped=\"0\">\n")
            var opened = false
            func testcase(_ text: String) {
                out((opened ? "\n" : "") + text)
                opened = true
            }
            if let error = capture.error {
                testcase("    <testcase classname=\"btlens.\(escape(capture.file))\" name=\"read capture\">\n      <error message=\"\(escape(error))\"/>\n    </testcase>")
            }
            for d in catalogue where capture.error == nil {
                // Each failure written as it is made: one rule's findings alone can run to megabytes.
                let all = capture.findings
                let ofRule = all.indices.filter { all.ruleID(at: $0) == d.id }
                testcase("    <testcase classname=\"btlens.\(escape(capture.file))\" name=\"\(d.id) \(d.name)\">")
                var body = false
                for i in ofRule where run.fails(all.key(at: i)) {
                    let f = all[i]
                    let where_ = f.connection.map { AuditText.connection($0) + ", " } ?? ""
                    out("\n      <failure type=\"\(f.severity.rawValue)\" message=\"\(escape(f.message))\">\(escape("\(where_)records \(AuditText.records(f.records))\n\(f.advice)"))</failure>")
                    body = true
                }
                var notes = 0
                for i in ofRule where !run.fails(all.key(at: i)) {
                    let f = all[i]
                    out((notes == 0 ? "\n      <system-out>" : escape("\n")) + escape("[\(f.severity.rawValue)] \(f.message)"))
                    notes += 1
                }
                if notes > 0 { out("</system-out>") }
                out((body || notes > 0 ? "\n    " : "") + "</testcase>")
            }
            out("\n  </testsuite>")
        }
        if !farm.isEmpty {
            out("\n  <testsuite name=\"btlens test farm\" tests=\"\(farm.count)\" failures=\"\(farmFailures)\" errors=\"\(farmErrors)\" skipped=\"0\">\n")
            for (i, capture) in farm.enumerated() {
                out((i == 0 ? "" : "\n") + farmTestCase(capture, testCases[capture.file]!, run: run).0)
            }
            out("\n  </testsuite>")
        }
        out("\n</testsuites>")
    }

    /// One capture of a test run as one testcase: its findings at or above `--fail-on` each a failure, the others
    /// in system-out, an unreadable capture an error. Returns the testcase and its failures.
    static func farmTestCase(_ capture: AuditedCapture, _ testCase: TestCaseNaming.TestCase, run: AuditRun) -> (String, Int) {
        let open = "    <testcase classname=\"\(escape(testCase.serial ?? "btlens"))\" name=\"\(escape(testCase.test))\" file=\"\(escape(capture.file))\">"
        if let error = capture.error {
            return (open + "\n      <error message=\"\(escape(error))\"/>\n    </testcase>", 0)
        }
        var body = ""
        let all = capture.findings
        let failing = all.indices.filter { run.fails(all.key(at: $0)) }
        for f in failing.lazy.map({ all[$0] }) {
            let where_ = f.connection.map { AuditText.connection($0) + ", " } ?? ""
            body += "\n      <failure type=\"\(f.severity.rawValue)\" message=\"\(escape("\(f.id) \(f.rule): \(f.message)"))\">\(escape("\(where_)records \(AuditText.records(f.records))\n\(f.advice)"))</failure>"
        }
        let notes = all.indices.filter { !run.fails(all.key(at: $0)) }
        if !notes.isEmpty {
            body += "\n      <system-out>\(escape(notes.map { let f = all[$0]; return "[\(f.severity.rawValue)] \(f.id) \(f.message)" }.joined(separator: "\n")))</system-out>"
        }
        return (open + body + (body.isEmpty ? "" : "\n    ") + "</testcase>", failing.count)
    }
}
