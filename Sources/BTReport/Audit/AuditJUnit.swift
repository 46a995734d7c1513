import BTWire
import BTRules

/// JUnit XML: a testsuite per capture, a testcase per rule, a failure per finding at or above `--fail-on`
/// (findings below it are listed in system-out). A capture that could not be read has one testcase, in error.
public enum AuditJUnit {
    static func escape(_ s: String) -> String { MarkupEscaping.escape(s) }

    public static func render(_ run: AuditRun) -> String {
        let catalogue = RuleRegistry.descriptions
        var suites: [String] = []
        var totalTests = 0, totalFailures = 0, totalErrors = 0
        for capture in run.captures {
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
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="btlens audit" tests="\(totalTests)" failures="\(totalFailures)" errors="\(totalErrors)">
            \(suites.joined(separator: "\n"))
            </testsuites>
            """
    }
}
