import Foundation
import Testing
import TestSupport

/// The HTML report opened in a real headless browser (Debian's chromium, which `make test` installs): every lane,
/// radio bar and finding is drawn in the rendered DOM, every connection has its zoomed view, and the page logs no
/// error.
@Suite("HTML report in headless Chromium")
struct HTMLReportBrowserTests {
    static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Chromium's rendered DOM of `url` and what it logged.
    static func render(_ url: String) throws -> (dom: String, log: String) {
        let browser = try #require(chromium, "chromium is not installed: run `make test-deps` (make test installs it)")
        let dir = try TemporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: browser)
        // Root (CI) needs --no-sandbox; a profile of our own keeps runs apart.
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(dir.file("profile"))",
                             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000", "--dump-dom", url]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let dom = out.fileHandleForReading.readDataToEndOfFile()
        let log = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "chromium exited \(process.terminationStatus)")
        return (String(decoding: dom, as: UTF8.self), String(decoding: log, as: UTF8.self))
    }

    static func count(_ needle: String, in s: String) -> Int { s.components(separatedBy: needle).count - 1 }

    @Test("lanes, radio bars, findings and zoomed connections are all drawn; no script or console error")
    func rendered() throws {
        let dir = try TemporaryDirectory()
        let html = dir.file("report.html"), json = dir.file("report.json")
        let samples = [try writeScenario("wasteful-central"), try writeScenario("connection-churn"), try writeScenario("peripheral-role")]
        #expect(try CLI.run(["audit", "--fail-on", "never", "--format", "html", "-o", html] + samples).status == 0)
        #expect(try CLI.run(["audit", "--fail-on", "never", "--format", "json", "-o", json] + samples).status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let findings = (report["findings"] as? [[String: Any]]) ?? []
        let onConnections = findings.filter { $0["connection"] is [String: Any] }.count
        var connections = 0, lanes = 0
        for c in (report["captures"] as? [[String: Any]]) ?? [] {
            let n = (c["connections"] as? Int) ?? 0
            connections += n
            lanes += n + 1  // scanning, and one per connection
        }
        // peripheral-role advertises, connection-churn has failed attempts: a lane each.
        lanes += 2

        let (dom, log) = try Self.render("file://\(html)")
        #expect(dom.contains("<h1>btlens audit</h1>"), "no report in the DOM")
        #expect(Self.count("class=\"lane\"", in: dom) == lanes, "lanes")
        #expect(Self.count("class=\"radio-bar\"", in: dom) == lanes, "a radio bar per lane")
        // Each finding on the timeline, those on a connection once more in its zoomed view.
        #expect(Self.count("class=\"finding\"", in: dom) == findings.count + onConnections, "findings drawn")
        #expect(Self.count("class=\"zoom\"", in: dom) == connections, "a zoomed view per connection")
        #expect(Self.count("class=\"activity\"", in: dom) >= lanes, "activity bars")
        #expect(Self.count("mC</text>", in: dom) == lanes)
        for line in log.split(separator: "\n") {
            #expect(!line.contains("Uncaught") && !line.contains(":CONSOLE("), "\(line)")
        }
        // Zoomed to connection 1: its section is the target, shown by CSS.
        let zoomed = try Self.render("file://\(html)#zoom-c1")
        #expect(zoomed.dom.contains("id=\"zoom-c1\""))
    }
}
