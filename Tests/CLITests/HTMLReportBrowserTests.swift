import Foundation
import Testing
import TestSupport

/// The HTML report driven in a real browser: Debian's chromium through chromium-driver and Selenium (`make
/// test-deps` installs them), by `html_report_browser.py`. For every bundled HCI sample, the air sample and two
/// real captures (when ../shared is there), the page must draw every lane, phase, cost bar and finding that
/// `timeline --json` and `audit --format json` of the same capture name (a generated capture of 93 connections
/// too, drawn in packed lanes), zoom by wheel, keys and slider, highlight
/// a clicked finding's span and show its row, expand a group, open a connection's timeline, and log no error.
/// Screenshots stay in .build/test-output/html/ for a person to look at.
@Suite("HTML report in headless Chromium")
struct HTMLReportBrowserTests {
    static let output = CLI.packageRoot.appendingPathComponent(".build/test-output/html")
    static let script = CLI.packageRoot.appendingPathComponent("Tests/CLITests/html_report_browser.py").path
    static let realCaptures = ["xiaomi_wx_vband_smartpen_btsnoop_hci.log", "horizon74_treadmill_btsnoop_hci.log"]

    /// The report, the audit JSON and the timeline JSON of `capture`, written under `output` as `name.*`.
    static func reports(_ capture: String, name: String) throws -> [String: String] {
        let base = output.appendingPathComponent(name).path
        let html = base + ".html", audit = base + ".audit.json", timeline = base + ".timeline.json"
        let r = try CLI.run(["audit", "--fail-on", "never", "--format", "html", "-o", html, capture])
        #expect(r.status == 0, "audit --format html \(capture): \(r.stderr)")
        #expect(try CLI.run(["audit", "--fail-on", "never", "--format", "json", "-o", audit, capture]).status == 0)
        let t = try CLI.run(["timeline", "--json", capture])
        #expect(t.status == 0)
        try t.stdout.write(toFile: timeline, atomically: true, encoding: .utf8)
        return ["name": name, "html": html, "audit": audit, "timeline": timeline]
    }

    @Test("samples and real captures: every lane, phase, bar and finding drawn; zoom, selection, groups, connections; no console error")
    func samplesAndRealCaptures() throws {
        try FileManager.default.createDirectory(at: Self.output, withIntermediateDirectories: true)
        let samples = CLI.packageRoot.appendingPathComponent("samples")
        let names = try FileManager.default.contentsOfDirectory(atPath: samples.path)
            .filter { $0.hasSuffix(".btsnoop") || $0 == "heart-rate-session.air.pcap" }.sorted()
        #expect(names.count >= 9 && names.contains("heart-rate-session.air.pcap"))
        var cases = try names.map { try Self.reports(samples.appendingPathComponent($0).path, name: $0) }
        let real = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")
        let present = Self.realCaptures.filter { FileManager.default.fileExists(atPath: real.appendingPathComponent($0).path) }
        if present.count < Self.realCaptures.count {
            FileHandle.standardError.write(Data("NOTE: \(real.path) lacks \(Set(Self.realCaptures).subtracting(present).sorted()): the HTML report of those real captures was NOT opened in the browser.\n".utf8))
        }
        cases += try present.map { try Self.reports(real.appendingPathComponent($0).path, name: "real-" + $0) }
        // Many connections (93 in 3 MB of generated traffic): packed lanes, and the page's size kept in bounds.
        let bench = Self.output.appendingPathComponent("bench-3M.btsnoop").path
        let generated = try CLI.run(["bench", bench, "--size", "3M"], executable: CLI.packageRoot.appendingPathComponent(".build/debug/btlens-scenario").path)
        #expect(generated.status == 0, "btlens-scenario bench: \(generated.stderr)")
        let benchCase = try Self.reports(bench, name: "bench-3M")
        cases.append(benchCase)
        let size = try FileManager.default.attributesOfItem(atPath: benchCase["html"] ?? "")[.size] as? Int ?? 0
        #expect(size > 0 && size < 1_000_000, "the page of a 3 MB capture is \(size) bytes")

        let manifest = Self.output.appendingPathComponent("manifest.json")
        let json = try JSONSerialization.data(withJSONObject: ["out": Self.output.path, "cases": cases], options: [.sortedKeys])
        try json.write(to: manifest)
        let (status, text) = try Self.python(Self.script, manifest)
        #expect(status == 0, "the browser checks failed (run `make test-deps` for chromium, chromium-driver and selenium):\n\(text)")
        // Each case checked and a screenshot of each kept.
        for c in cases {
            let name = c["name"] ?? ""
            #expect(text.contains("\(name): "), "\(name) not checked")
            #expect(FileManager.default.fileExists(atPath: Self.output.appendingPathComponent(name + ".png").path), "no screenshot of \(name)")
        }
    }

    static let a11yScript = CLI.packageRoot.appendingPathComponent("Tests/CLITests/html_report_a11y.py").path
    static let a11yCaptures = ["sphero_mini_fw_update_btsnoop_hci.log", "xiaomi14t_ix7_tracker_mixed_btsnoop_hci.log"]

    /// axe-core (PyPI axe-selenium-python, `make test-deps`) in the light and the dark colour scheme on the report of
    /// every bundled HCI sample, the air sample and two real captures (when ../shared is there), as it loads and with
    /// groups expanded, a finding selected and a connection open: no serious or critical violation, a main
    /// landmark. Then keyboard only, on a sample with groups of findings and the real captures: the timeline's
    /// buttons and the timeline zoom and pan, a connection's timeline opens and closes, the findings table sorts,
    /// expands and selects; each focused control shows it.
    @Test("accessible: axe-core in light and dark schemes finds no serious or critical violation; zoom, pan and the findings table by keyboard alone")
    func accessible() throws {
        let output = Self.output.appendingPathComponent("a11y")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let samples = CLI.packageRoot.appendingPathComponent("samples")
        let names = try FileManager.default.contentsOfDirectory(atPath: samples.path)
            .filter { $0.hasSuffix(".btsnoop") || $0 == "heart-rate-session.air.pcap" }.sorted()
        var inputs = names.map { (samples.appendingPathComponent($0).path, $0) }
        let real = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/captures/real")
        let present = Self.a11yCaptures.filter { FileManager.default.fileExists(atPath: real.appendingPathComponent($0).path) }
        if present.count < Self.a11yCaptures.count {
            FileHandle.standardError.write(Data("NOTE: \(real.path) lacks \(Set(Self.a11yCaptures).subtracting(present).sorted()): axe-core and the keyboard were NOT run on the HTML report of those real captures.\n".utf8))
        }
        inputs += present.map { (real.appendingPathComponent($0).path, "real-" + $0) }
        var cases: [[String: String]] = []
        for (capture, name) in inputs {
            let html = output.appendingPathComponent(name + ".html").path
            let r = try CLI.run(["audit", "--fail-on", "never", "--format", "html", "-o", html, capture])
            #expect(r.status == 0, "audit --format html \(capture): \(r.stderr)")
            cases.append(["name": name, "html": html])
        }
        let keyboard = ["connection-churn.btsnoop", "wasteful-central.btsnoop"] + present.map { "real-" + $0 }
        let manifest = output.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: ["cases": cases, "keyboard": keyboard] as [String: Any], options: [.sortedKeys]).write(to: manifest)
        let (status, text) = try Self.python(Self.a11yScript, manifest)
        #expect(status == 0, "the accessibility checks failed (run `make test-deps` for chromium, chromium-driver, selenium and axe-selenium-python):\n\(text)")
        for c in cases {
            let name = c["name"] ?? ""
            #expect(text.contains("\(name) [light]: ") && text.contains("\(name) [dark]: "), "\(name) not checked in both schemes")
        }
        for name in keyboard { #expect(text.contains("\(name): keyboard only: "), "\(name) not driven by keyboard") }
        // A sample whose findings come in groups: one was expanded by keyboard.
        #expect(text.contains("connection-churn.btsnoop: keyboard only: zoom, pan, connection, findings table (group expanded)"), "\(text)")
    }

    @Test("self-contained: no external URL, one data blob, the size of a real capture's page bounded")
    func selfContained() throws {
        let dir = try TemporaryDirectory()
        let html = dir.file("report.html")
        let inputs = [try writeScenario("wasteful-central"), try writeScenario("connection-churn"), try writeScenario("peripheral-role")]
        #expect(try CLI.run(["audit", "--fail-on", "never", "--format", "html", "-o", html] + inputs).status == 0)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        for external in ["src=\"http", "href=\"http", "url(http", "@import", "<link ", "<img "] {
            #expect(!page.contains(external), "the page refers to something outside it: \(external)")
        }
        #expect(page.components(separatedBy: "id=\"btlens-data\"").count == 2)
        // The blob never closes its element early: no "<" inside it.
        let blob = try #require(page.range(of: "id=\"btlens-data\">").flatMap { start in
            page.range(of: "</script>", range: start.upperBound..<page.endIndex).map { page[start.upperBound..<$0.lowerBound] }
        })
        #expect(!blob.contains("<"))
        #expect(try JSONSerialization.jsonObject(with: Data(blob.utf8)) is [String: Any])
        // One capture section, timeline, findings table, energy panel per input.
        #expect(page.components(separatedBy: "<section class=\"capture\"").count == 4)
        #expect(page.components(separatedBy: "class=\"tl\"").count == 4)
        #expect(page.components(separatedBy: "<section class=\"energy\">").count == 4)
    }

    /// Runs a browser script on its manifest: its exit status and everything it printed.
    static func python(_ script: String, _ manifest: URL) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, manifest.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
