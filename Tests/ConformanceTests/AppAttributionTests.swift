import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
import BTReport
import BTScenario
import TestSupport

/// Bug reports of a shared test phone (`SharedPhone`, three apps, one misbehaving) in each Android layout: every
/// scan and link btlens attributes goes to the app that made it, never to another; `--app` judges one app as
/// the same capture without the others would be judged.
@Suite("apps named by bug reports")
struct AppAttributionTests {
    static let layouts: [DumpLayout] = [.android7, .android8, .android10]

    /// The model of the zip's snoop log with its attribution, and the ground truth.
    static func attributed(_ layout: DumpLayout, apps: Set<SharedPhone.App> = Set(SharedPhone.App.allCases),
                           withZone: Bool = true, snoopInLocalTime: Bool = false, in dir: TemporaryDirectory) throws -> (CaptureModel, SharedPhoneTruth) {
        let path = dir.file("bugreport-\(layout.rawValue)-\(apps.count)-\(withZone)-\(snoopInLocalTime).zip")
        let truth = try SharedPhoneBugReport.writeZip(path, layout: layout, apps: apps, withZone: withZone,
                                                      snoopInLocalTime: snoopInLocalTime, scratch: path + ".snoop")
        let inputs = try CaptureInputs.resolve(path)
        try #require(inputs.count == 1)
        let report = try #require(try inputs[0].bugReportApps())
        var collector = TrackingCollector()
        var model = try inputs[0].open().accept(&collector)
        model.attribution = BugReportClock.attribute(model, report: report)
        return (model, truth)
    }

    @Test("every scan and link goes to the app that made it or stays unattributed, never to another", arguments: layouts)
    func groundTruth(_ layout: DumpLayout) throws {
        let dir = try TemporaryDirectory()
        let (model, truth) = try Self.attributed(layout, in: dir)
        let attribution = try #require(model.attribution)
        guard case .clock = attribution.clock else { Issue.record("matched \(attribution.clock.description)"); return }
        var attributed = 0
        for scan in attribution.scans {
            // The truth's scan this controller scan is: the one whose start it follows within milliseconds.
            let made = truth.scans.min { abs($0.start.nanoseconds - scan.start.timestamp.nanoseconds) < abs($1.start.nanoseconds - scan.start.timestamp.nanoseconds) }
            let app = try #require(made).app.rawValue
            if scan.owner.kind == .app {
                #expect(scan.owner.apps == [app], "\(layout): scan at \(scan.start.timestamp.seconds) is \(app)'s, attributed to \(scan.owner.name)")
                attributed += 1
            }
        }
        // Android 7 prints no filter flag: its filtered scans cannot be told from unfiltered ones by count.
        #expect(attributed >= (layout == .android7 ? 7 : 10), "\(layout): \(attributed) of \(attribution.scans.count) scans attributed")
        for (i, link) in model.links.enumerated() {
            let made = try #require(truth.links.first { $0.handle == link.handle })
            #expect(attribution.linkOwners[i].apps == [made.app.rawValue], "\(layout): link \(link.handle) is \(made.app)'s")
        }
        // The report's own figures, within the capture's span, against what btlens matched.
        for f in attribution.apps where f.keptInSpan > 0 {
            #expect(f.matched == f.keptInSpan, "\(layout): \(f.name) kept \(f.keptInSpan) scans in the span, \(f.matched) matched")
            #expect(abs(f.matchedMs - f.keptInSpanMs) <= 1_000 * Int64(max(f.matched, 1)), "\(layout): \(f.name) \(f.matchedMs) ms vs \(f.keptInSpanMs) ms")
        }
    }

    @Test("without a time zone the scans' pattern places the report's times")
    func pattern() throws {
        let dir = try TemporaryDirectory()
        let (model, _) = try Self.attributed(.android10, withZone: false, in: dir)
        let attribution = try #require(model.attribution)
        #expect(attribution.clock == .pattern(offsetSeconds: SharedPhoneBugReport.zone(.android10).offsetSeconds, clockOffsetSeconds: nil))
        #expect(attribution.scans.filter { $0.owner.kind == .app }.count >= 10)
    }

    @Test("a capture in the phone's local time is matched by pattern, and the report says so")
    func localTimeCapture() throws {
        let dir = try TemporaryDirectory()
        let (model, _) = try Self.attributed(.android8, snoopInLocalTime: true, in: dir)
        let attribution = try #require(model.attribution)
        #expect(attribution.clock == .pattern(offsetSeconds: 0, clockOffsetSeconds: SharedPhoneBugReport.zone(.android8).offsetSeconds))
        #expect(attribution.clock.description.contains("local time"))
        #expect(attribution.scans.filter { $0.owner.kind == .app }.count >= 10)
    }

    @Test("a bug report with only the btsnooz summary in its text is attributed from the summary")
    func btsnoozSummary() throws {
        let dir = try TemporaryDirectory()
        let truth = SharedPhoneTruth()
        let log = dir.file("full.btsnoop")
        try SharedPhone.scenario(truth: truth).write(to: log, format: .btsnoopH4)
        let summary = ArchiveFixtures.btsnooz(fromBTSnoop: try TemporaryDirectory.contents(of: log), version: 2)
        // The report's own header (its dumpstate time) first, then the text around the summary.
        let text = Array(SharedPhoneBugReport.text(truth, layout: .android8).utf8) + ArchiveFixtures.bugReportText(summary: summary)
        let zip = dir.file("bugreport.zip")
        try ArchiveFixtures.write(zip, .zip, members: [("bugreport-phone-2026-01-15.txt", text)])
        let inputs = try CaptureInputs.resolve(zip)
        try #require(inputs.count == 1)
        let report = try #require(try inputs[0].bugReportApps())
        var collector = TrackingCollector()
        let model = try inputs[0].open().accept(&collector)
        let attribution = BugReportClock.attribute(model, report: report)
        guard case .clock = attribution.clock else { Issue.record("matched \(attribution.clock.description)"); return }
        #expect(attribution.scans.filter { $0.owner.kind == .app }.count >= 10,
                "\(attribution.scans.map { "\($0.start.timestamp.seconds) \($0.owner.name) \($0.owner.evidence)" })")
        #expect(attribution.linkOwners.map(\.name).sorted() == ["com.example.lock", "com.example.tracker"])
    }

    @Test("an empty GATT Scanner Map leaves the capture's scans unattributed")
    func emptyMap() throws {
        let dir = try TemporaryDirectory()
        let (model, _) = try Self.attributed(.android10, in: dir)
        let empty = BugReportAppsParser.parse(text: "[persist.sys.timezone]: [Europe/Berlin]\nGATT Scanner Map\n  Entries: 0\n\nGATT Client Map\n  Entries: 0\n")
        let attribution = BugReportClock.attribute(model, report: empty)
        #expect(attribution.scans.allSatisfy { $0.owner.kind != .app })
        #expect(attribution.notes.contains { $0.contains("empty") })
    }

    /// The fingerprints of the findings of `model` focused on `app` (as `btlens audit --app`). A discriminator
    /// that is a record number (the first of a series) is left out: removing the other apps renumbers records.
    static func findings(_ model: CaptureModel, app: String?) -> [String] {
        var model = model
        if let app { _ = AppFocus.focus(&model, on: app) }
        return Auditor().audit(model, file: "x").map { f in
            var fields = f.fingerprint.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            if let last = fields.last, Int(last) != nil { fields[fields.count - 1] = "#" }
            return "\(f.id) " + fields.joined(separator: "|")
        }.sorted()
    }

    @Test("--app's findings are those of the same capture with the other apps removed", arguments: [DumpLayout.android8, .android10])
    func focusEqualsRemoval(_ layout: DumpLayout) throws {
        let dir = try TemporaryDirectory()
        for app in [SharedPhone.App.tracker, .lock] {
            let (shared, _) = try Self.attributed(layout, in: dir)
            let (alone, _) = try Self.attributed(layout, apps: [app], in: dir)
            let focused = Self.findings(shared, app: app.rawValue)
            #expect(focused == Self.findings(alone, app: app.rawValue), "\(layout) \(app)")
            #expect(focused == Self.findings(alone, app: nil), "\(layout) \(app): alone, without --app")
            if app == .tracker { #expect(focused.contains { $0.hasPrefix("BTL014") } && focused.contains { $0.hasPrefix("BTL001") }) }
        }
    }

    @Test("--app without a bug report says what it fell back to")
    func fallback() throws {
        var collector = TrackingCollector()
        var model = try OpenedCapture.open(path: try ScenarioFixtures.path("android-scan-churn")).accept(&collector)
        let focus = AppFocus.focus(&model, on: "com.example.app")
        #expect(!focus.attributed)
        #expect(focus.fallback?.contains("no bug report") == true)
    }
}
