import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
@testable import BTReport
import TestSupport

/// The HTML report sets aside what it draws and prints of a finished link when the link is judged
/// (`AuditHTMLLinks`), so the audit lets its links go: the page must be the one of keeping every link whole.
@Suite("HTML report of links judged as they close, set aside and read back")
struct AuditHTMLLinksTests {
    /// The audit page of `path`: every link kept whole (`window` nil), or links judged once `window` later ones
    /// finished, let go but for their summary, what the page reads of them set aside in `spillDirectory`.
    /// `sortRunLength`: the page's sorts (the timeline's findings, the GATT peers' links) in runs of this many, set
    /// aside with the scan sessions in `spillDirectory`.
    static func page(_ path: String, window: Int?, spillDirectory: String? = nil, letGoBatch: Int = 1, sortRunLength: Int? = nil,
                     judged made: ((AuditHTMLLinks, LinkRetirement, CaptureModel) -> Void)? = nil) throws -> String {
        var captures: [AuditedCapture] = []
        var pages: [String: AuditHTML.Capture] = [:]
        for input in try CaptureInputs.resolve(path) {
            let capture = try input.open()
            let auditor = Auditor()
            let judgement = window.map { _ in auditor.linkJudgement(pricing: true) }
            let links = window.map { _ in AuditHTMLLinks(spillDirectory: spillDirectory) }
            var options = TrackerOptions.withoutAdvertisers
            options.connectionsWhileScanningListed = 0
            options.scanDevicesListed = 0
            if sortRunLength != nil { options.scanSessionSpillDirectory = spillDirectory }
            if let judgement, let links, let window {
                options.retirement = LinkRetirement(window: window, keeping: .summary, interest: judgement.interest,
                                                    letGoBatch: letGoBatch) { c, kept in
                    judgement.judge(c, kept: kept)
                    links.keep(c, kept: kept)
                }
            }
            var collector = TrackingCollector(options: options)
            let model = try capture.accept(&collector)
            if let links, let retirement = options.retirement { made?(links, retirement, model) }
            let findings = auditor.audit(model, file: input.path, judged: judgement)
            captures.append(AuditedCapture(file: input.path, findings: findings, records: model.records, connections: model.linkCount))
            pages[input.path] = AuditHTML.Capture(model: model, judged: links)
        }
        var out = ""
        AuditHTML.write(AuditRun(captures: captures, failOn: .warning, version: "test"), captures: pages, sortRunLength: sortRunLength) { out += $0 }
        return out
    }

    static func expectSame(_ path: String, _ name: String) throws {
        let directory = try TemporaryDirectory()
        let whole = try page(path, window: nil)
        #expect(try page(path, window: 1, spillDirectory: directory.path) == whole, "\(name): set aside in files")
        #expect(try page(path, window: 1) == whole, "\(name): set aside in memory")
        // The files' names are removed as soon as they are made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("samples: the same page with every finished link judged and let go", arguments: LinkRetirementTests.samples)
    func sample(name: String) throws {
        try Self.expectSame("samples/" + name, name)
    }

    @Test("thousands of short links: the same page, at most the window's worth of links whole, the rest judged")
    func bounded() throws {
        let directory = try TemporaryDirectory()
        let path = try LinkRetirementTests.manyLinksFile(in: directory)
        let spillDirectory = directory.file("spill")
        try FileManager.default.createDirectory(atPath: spillDirectory, withIntermediateDirectories: true)
        let whole = try Self.page(path, window: nil)
        var seen: (links: AuditHTMLLinks, retirement: LinkRetirement, model: CaptureModel)?
        let early = try Self.page(path, window: 16, spillDirectory: spillDirectory, letGoBatch: 64) { seen = ($0, $1, $2) }
        #expect(early == whole)
        // The timeline's findings and the GATT peers' links sorted in runs of 7 set aside: the same page.
        let sorted = try Self.page(path, window: 16, spillDirectory: spillDirectory, letGoBatch: 64, sortRunLength: 7)
        #expect(sorted == whole)
        #expect(whole.contains("\"lane\":") && whole.contains("<template id=\"gatt-0-"), "the page has findings on lanes and GATT trees")
        let (links, retirement, model) = try #require(seen)
        // The tracker held at most the window's worth of finished links whole and judged the others (kept slim, one
        // peer's links all being read by the reconnection rules, or let go): a page that kept every link whole held
        // them all.
        #expect(retirement.mostWhole <= 16)
        #expect(retirement.judged > LinkRetirementTests.links - 100)
        #expect(model.connections.filter { !$0.isJudged }.count <= 20)
        // Every judged link's timeline phases and priced row are in the files; its text only while the panels'
        // budget may reach it: a few hundred links' at most, not every link's.
        #expect(links.records.isFile && links.records.count == retirement.judged)
        #expect(links.rows.records.count == retirement.judged)
        #expect(links.lines.records.count > 0 && links.lines.records.count < LinkRetirementTests.links / 4)
        #expect(links.failure == nil)
        #expect(_isPOD(AuditHTMLLinks.Header.self) && _isPOD(AuditHTMLLinks.PhaseHeader.self))
    }
}
