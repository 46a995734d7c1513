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
        let catalogue = RuleRegistry.descriptions
        var suites: [String] = []
        var totalTests = 0, totalFailures = 0, totalErrors = 0
        var farm: [String] = []
        var farmFailures = 0, farmErrors = 0
        for capture in run.captures {
            if let testCase = testCases[capture.file] {
                let (testcase, failures) = farmTestCase(capture, testCase, run: run)
                farm.append(testcase)
                farmFailures += failures
                if capture.error != nil { farmErrors += 1 }
                continue
            }
            var cases: [String] = []
            var failures = 0
            if let error = capture.error {
                totalErrors += 1
                cases.append("    <testcase classname=\"btlens.\(escape(capture.file))\" name=\"read capture\">\n      <error message=\"\(escape(error))\"/>\n    </testcase>")
            }
            // No rule ran on a capture that could not be read: a passing testcase per rule would claim it did.
            for d in catalogue where capture.error == nil {
                let findings = capture.findings.filter { $0.id == d.id }
                let failing = findings.filter(run.fails)
                var body = ""
                for f in failing {
                    failures += 1
                    let where_ = f.connection.map { AuditText.connection($0) + ", " } ?? ""
                    body += "\n      <failure type=\"\(f.severity.rawValue)\" message=\"\(escape(f.message))\">\(escape("\(where_)records \(AuditText.records(f.records))\n\(f.advice)"))</failure>"
                }
                let notes = findings.filter { !run.fails($0) }
                if !notes.isEmpty {
                    body += "\n      <system-out>\(escape(notes.map { "[\($0.severity.rawValue)] \($0.message)" }.joined(separator: "\n")))</system-out>"
                }
                cases.append("    <testcase classname=\"btlens.\(escape(capture.file))\" name=\"\(d.id) \(d.name)\">\(body)\(body.isEmpty ? "" : "\n    ")</testcase>")
            }
            totalTests += cases.count
            totalFailures += failures
            suites.append("  <testsuite name=\"\(escape(capture.file))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(capture.error == nil ? 0 : 1)\" skipped=\"0\">\n\(cases.joined(separator: "\n"))\n  </testsuite>")
        }
        if !farm.isEmpty {
            totalTests += farm.count
            totalFailures += farmFailures
            totalErrors += farmErrors
            suites.append("  <testsuite name=\"btlens test farm\" tests=\"\(farm.count)\" failures=\"\(farmFailures)\" errors=\"\(farmErrors)\" skipped=\"0\">\n\(farm.joined(separator: "\n"))\n  </testsuite>")
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="btlens audit" tests="\(totalTests)" failures="\(totalFailures)" errors="\(totalErrors)">
            \(suites.joined(separator: "\n"))
            </testsuites>
            """
    }

    /// One capture of a test run as one testcase: its findings at or above `--fail-on` each a failure, the others
    /// in system-out, an unreadable capture an error. Returns the testcase and its failures.
    static func farmTestCase(_ capture: AuditedCapture, _ testCase: TestCaseNaming.TestCase, run: AuditRun) -> (String, Int) {
        let open = "    <testcase classname=\"\(escape(testCase.serial ?? "btlens"))\" name=\"\(escape(testCase.test))\" file=\"\(escape(capture.file))\">"
        if let error = capture.error {
            return (open + "\n      <error message=\"\(escape(error))\"/>\n    </testcase>", 0)
        }
        var body = ""
        let failing = capture.findings.filter(run.fails)
        for f in failing {
            let where_ = f.connection.map { AuditText.connection($0) + ", " } ?? ""
            body += "\n      <failure type=\"\(f.severity.rawValue)\" message=\"\(escape("\(f.id) \(f.rule): \(f.message)"))\">\(escape("\(where_)records \(AuditText.records(f.records))\n\(f.advice)"))</failure>"
        }
        let notes = capture.findings.filter { !run.fails($0) }
        if !notes.isEmpty {
            body += "\n      <system-out>\(escape(notes.map { "[\($0.severity.rawValue)] \($0.id) \($0.message)" }.joined(separator: "\n")))</system-out>"
        }
        return (open + body + (body.isEmpty ? "" : "\n    ") + "</testcase>", failing.count)
    }
}
