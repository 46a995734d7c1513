import Foundation
import Testing
import BTCapture
import BTScenario
import TestSupport

/// `btlens audit --app` on a shared test phone's bug report: only that app's findings, each with its owner, the
/// others named once; the configuration file's `app`; `--bugreport` beside a pulled snoop log; the fallback.
@Suite("audit --app")
struct AppFocusCommandTests {
    static func bugReport(_ dir: TemporaryDirectory) throws -> (zip: String, truth: SharedPhoneTruth) {
        let zip = dir.file("bugreport.zip")
        let truth = try SharedPhoneBugReport.writeZip(zip, layout: .android10, scratch: dir.file("scratch.btsnoop"))
        return (zip, truth)
    }

    @Test("judges one app, names the others once, and tags findings with their owner")
    func focus() throws {
        let dir = try TemporaryDirectory()
        let (zip, _) = try Self.bugReport(dir)
        let all = try CLI.run(["audit", zip])
        #expect(all.stdout.contains("apps (bug report"))
        #expect(all.stdout.contains("owner: com.example.lock"))
        let one = try CLI.run(["audit", "--app", "com.example.tracker", zip])
        #expect(one.status == 1)
        #expect(one.stdout.contains("--app com.example.tracker: only its scans and links are judged"))
        #expect(one.stdout.contains("    com.example.lock: 1 scan"))
        #expect(one.stdout.contains("BTL014") && one.stdout.contains("BTL001") && !one.stdout.contains("BTL006"))
        let json = try CLI.run(["audit", "--app", "com.example.tracker", "--format", "json", zip])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let findings = try #require(root["findings"] as? [[String: Any]])
        #expect(!findings.isEmpty)
        for f in findings { #expect((f["owner"] as? [String: Any])?["name"] as? String == "com.example.tracker") }
        let capture = try #require((root["captures"] as? [[String: Any]])?.first)
        #expect((capture["app"] as? [String: Any])?["name"] as? String == "com.example.tracker")
        #expect(capture["attribution"] != nil)
        let sarif = try CLI.run(["audit", "--app", "com.example.tracker", "--format", "sarif", zip])
        #expect(sarif.stdout.contains("\"owner\": \"com.example.tracker\"") || sarif.stdout.contains("\"owner\":\"com.example.tracker\""))
    }

    @Test("the configuration file's app, and --bugreport beside a pulled snoop log")
    func configAndSeparateText() throws {
        let dir = try TemporaryDirectory()
        let (zip, truth) = try Self.bugReport(dir)
        let config = dir.file("btlens.yml")
        try "app: com.example.lock\n".write(toFile: config, atomically: true, encoding: .utf8)
        let configured = try CLI.run(["audit", "--config", config, zip])
        #expect(configured.stdout.contains("--app com.example.lock: only its scans and links are judged"))
        #expect(configured.stdout.contains("BTL006") && !configured.stdout.contains("BTL014"))
        let log = dir.file("btsnoop_hci.log"), text = dir.file("dumpsys.txt")
        try SharedPhone.scenario().write(to: log, format: .btsnoopH4)
        try SharedPhoneBugReport.text(truth, layout: .android10).write(toFile: text, atomically: true, encoding: .utf8)
        let separate = try CLI.run(["audit", "--app", "com.example.tracker", "--bugreport", text, log])
        #expect(separate.stdout.contains("--app com.example.tracker: only its scans and links are judged"))
        #expect(separate.stdout.contains("owner: com.example.tracker"))
    }

    @Test("without a bug report --app says what it fell back to; other captures print as before")
    func fallback() throws {
        let plain = try ScenarioFixtures.path("android-scan-churn")
        let result = try CLI.run(["audit", "--app", "com.example.app", plain])
        #expect(result.stdout.contains("--app com.example.app: no bug report with per-app sections came with this capture"))
        let before = try CLI.run(["audit", plain])
        #expect(!before.stdout.contains("owner:") && !before.stdout.contains("apps ("))
    }
}
