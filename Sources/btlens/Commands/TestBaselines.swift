import Foundation
import BTWire
import BTRules
import BTReport

/// A test run's baselines: one file per test, DIR/<test>.json (the format of `--write-baseline`), so each test
/// accepts its own findings and a new finding in one test is not hidden by the same finding accepted in another.
struct TestBaselines: Sendable {
    var byTest: [String: Baseline] = [:]

    /// `path` names a directory of baselines: an existing directory, or a path ending in `/`.
    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    init(directory: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
        for name in names {
            byTest[String(name.dropLast(".json".count))] = try Baseline(path: directory + "/" + name)
        }
    }

    /// The baseline of a capture's test; none for a capture of no test or a test without one.
    func baseline(for testCase: TestCaseNaming.TestCase?) -> Baseline? {
        testCase.flatMap { byTest[$0.test] }
    }

    /// Writes DIR/<test>.json per test of the run with the findings of all its captures (every device's).
    static func write(_ run: AuditRun, to directory: String, testCase: (String) -> TestCaseNaming.TestCase?) throws {
        var byTest: [String: [Finding]] = [:]
        var outside: [String] = []
        for capture in run.captures {
            guard let test = testCase(capture.file)?.test else {
                outside.append(capture.file)
                continue
            }
            byTest[test, default: []] += Auditor.ordered(capture.findings.array + capture.accepted.array)
        }
        for file in outside { Diagnostics.warning(file: file, "not named as a test's capture: left out of the per-test baselines") }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (test, findings) in byTest.sorted(by: { $0.key < $1.key }) {
                try (AuditJSON.baseline(findings) + "\n").write(toFile: directory + "/" + test + ".json", atomically: true, encoding: .utf8)
            }
        } catch {
            Diagnostics.error(file: directory, "cannot write the baselines: \(error.localizedDescription)")
            throw ExitStatus.inputUnreadable
        }
        Diagnostics.printRaw("btlens: wrote the baselines of \(Plural.of(byTest.count, "test")) (\(Plural.of(byTest.values.map(\.count).reduce(0, +), "accepted finding"))) to \(directory)")
    }
}
