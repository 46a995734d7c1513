import Foundation
import Testing
import TestSupport

@Suite("btlens anonymize")
struct AnonymizeCommandTests {
    @Test("writes a btsnoop copy that audits the same; refuses to overwrite its input or to pick among several captures")
    func command() throws {
        let dir = try TemporaryDirectory()
        let original = try writeScenario("wasteful-central")
        let copy = dir.file("shared.btsnoop")
        let r = try CLI.run(["anonymize", original, copy])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("btlens: wrote \(copy): 1523 records, "))
        let before = try CLI.run(["audit", "--format", "json", "--fail-on", "never", original]).stdout
        let after = try CLI.run(["audit", "--format", "json", "--fail-on", "never", copy]).stdout
        let rules: (String) -> [String] = { text in text.split(separator: "\n").filter { $0.contains("\"rule\"") }.map(String.init) }
        #expect(rules(after) == rules(before))
        #expect(!rules(before).isEmpty)

        #expect(try CLI.run(["anonymize", copy, copy]).status == 2)
        let zip = dir.file("two.zip")
        try ArchiveFixtures.write(zip, .zip, members: [("a.log", try TemporaryDirectory.contents(of: original)),
                                                       ("b.log", try TemporaryDirectory.contents(of: original))])
        let several = try CLI.run(["anonymize", zip, dir.file("x.btsnoop")])
        #expect(several.status == 2)
        #expect(several.stderr.contains("holds 2 captures"))
        // From a bug report, in one go.
        let gz = dir.file("capture.gz")
        try ArchiveFixtures.write(gz, .gzip, members: [("x", try TemporaryDirectory.contents(of: original))])
        #expect(try CLI.run(["anonymize", gz, dir.file("y.btsnoop")]).status == 0)
    }
}
