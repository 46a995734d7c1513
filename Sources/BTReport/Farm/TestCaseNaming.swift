/// Device-farm capture names: Android's test harness names each test's log `<test>-<serial>-btsnoop_hci.log`, so
/// a folder of them is a test run. The pattern is a regular expression over the file's base name with a named
/// group `test` (required) and optionally `serial` (the device); audit's JUnit report, per-test baselines and the
/// directory diff use it.
public struct TestCaseNaming: @unchecked Sendable {
    /// The test is the name up to the first `-`; the serial the rest (serials such as `emulator-5554` hold one).
    public static let defaultPattern = #"(?<test>[^-/]+)-(?<serial>.+)-btsnoop_hci\.log"#

    public struct TestCase: Sendable, Hashable {
        public var test: String
        public var serial: String?
    }

    public struct PatternError: Error, CustomStringConvertible {
        public var description: String
    }

    let regex: Regex<AnyRegexOutput>
    public let pattern: String

    public init(pattern: String = TestCaseNaming.defaultPattern) throws {
        do {
            regex = try Regex(pattern)
        } catch {
            throw PatternError(description: "not a regular expression: \(pattern) (\(error))")
        }
        guard pattern.contains("(?<test>") else {
            throw PatternError(description: "the pattern needs a named group (?<test>…): \(pattern)")
        }
        self.pattern = pattern
    }

    /// The test case of a capture path (its base name; an archive member's own name), or nil when it does not match.
    public func testCase(_ path: String) -> TestCase? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let member = name.split(separator: ":").last.map(String.init) ?? name
        guard let match = try? regex.wholeMatch(in: member),
              let test = match["test"]?.substring.map(String.init), !test.isEmpty else { return nil }
        return TestCase(test: test, serial: match["serial"]?.substring.map(String.init))
    }
}
