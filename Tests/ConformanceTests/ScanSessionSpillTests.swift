import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules
import BTReport
import BTScenario
import TestSupport

/// Batch commands set finished scan and advertising sessions, and the app's scans, aside in unlinked temporary
/// files (`ScanSessions`, `AdvertisingSessions`, `AppScanList`; `TrackerOptions.scanSessionSpillDirectory`): every report must be byte for byte the one made from sessions
/// held in memory, most sessions must be on disk rather than in memory, and nothing may be left behind.
@Suite("Scan sessions set aside in a spill file")
struct ScanSessionSpillTests {
    /// The reports that read scan sessions — the audit (JSON and text), energy (JSON and text), devices and the
    /// timeline (JSON and text) — of the capture at `path`, its sessions set aside in `directory` (nil: in memory).
    static func reports(_ path: String, directory: String?, kept: Int = ScanSessions.recentKept) throws -> (reports: [String], model: CaptureModel) {
        var options = TrackerOptions()
        options.scanSessionSpillDirectory = directory
        options.scanSessionsKept = kept
        var collector = TrackingCollector(options: options)
        let capture = try OpenedCapture.open(path: path)
        let model = try capture.accept(&collector)
        let auditor = Auditor()
        var audited = AuditedCapture(file: path, findings: auditor.audit(model, file: path), connections: model.linkCount)
        audited.notes = AuditNotes.notes(model)
        let run = AuditRun(captures: [audited], failOn: .warning, version: "test")
        let energy = EnergyReport(model: model)
        var energyJSON = ""
        EnergyJSON.write(file: path, report: energy, to: JSONStreamWriter { energyJSON += $0 })
        var energyText: [String] = []
        EnergyText.write(file: path, report: energy, side: .phone, full: false) { energyText.append($0) }
        let devices = DevicesReport(file: path, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
        var devicesJSON = ""
        DevicesJSON.write(devices, to: JSONStreamWriter { devicesJSON += $0 })
        return ([AuditJSON.render(run), AuditTextReport.render(run, colored: false, verbose: true), energyJSON,
                 energyText.joined(separator: "\n"), devicesJSON, DevicesText.render(devices),
                 TimelineReport.json(file: path, model: model).serialized(indent: 2),
                 TimelineReport.text(file: path, model: model, full: true)], model)
    }

    @Test("a capture of many scans: the same reports with its sessions on disk, nothing left behind")
    func manyScans() throws {
        let directory = try TemporaryDirectory()
        let (capture, spillDirectory) = try directory.benchCapture(.scans, bytes: 8 << 20)
        let held = try Self.reports(capture, directory: nil)
        // Four kept in memory: a gigabyte of this shape holds 7,900 scans, more than enough for the default.
        let spilled = try Self.reports(capture, directory: spillDirectory, kept: 4)
        #expect(held.model.scans.setAsideCount == 0)
        #expect(held.model.scans.count > 40, "the capture should hold many scans")
        #expect(spilled.model.scans.count == held.model.scans.count)
        // All but the latest few (and any still open) are read from the file.
        #expect(spilled.model.scans.setAsideCount >= held.model.scans.count - 2 * 4 - 1)
        #expect(spilled.model.scans.failure == nil)
        // The app's scans too, built from them at the end.
        #expect(held.model.appScans.count > 40 && held.model.appScans.setAsideCount == 0)
        #expect(spilled.model.appScans.setAsideCount >= held.model.appScans.count - 2 * 4)
        #expect(spilled.model.appScans.failure == nil)
        // And the phone's advertising, turned on and off.
        #expect(held.model.ownAdvertising.count > 10 && held.model.ownAdvertising.setAsideCount == 0)
        #expect(spilled.model.ownAdvertising.setAsideCount >= held.model.ownAdvertising.count - 2 * 4 - 2)
        #expect(held.reports.contains { $0.contains("BTL007") }, "the comparison is between reports with scan findings")
        for (i, (a, b)) in zip(held.reports, spilled.reports).enumerated() {
            #expect(a == b, "report \(i) differs when the sessions are read back from the spill")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: spillDirectory).isEmpty)
    }

    /// Every session but the last set aside as soon as another follows.
    static func expectSame(_ path: String) throws {
        let directory = try TemporaryDirectory()
        let held = try Self.reports(path, directory: nil)
        let spilled = try Self.reports(path, directory: directory.path, kept: 1)
        // All but the last and those on when their turn came, until the next session (a set per controller at most
        // here: the real captures advertise up to four sets at once).
        let m = held.model, atOnce = 4
        #expect(spilled.model.scans.setAsideCount >= m.scans.count - 1 - atOnce)
        #expect(spilled.model.appScans.setAsideCount >= m.appScans.count - 1)
        #expect(spilled.model.ownAdvertising.setAsideCount >= m.ownAdvertising.count - 1 - atOnce)
        #expect(held.reports == spilled.reports)
    }

    @Test("samples: the same reports with every scan session but the last set aside", arguments: LinkThreadTests.samples)
    func sample(name: String) throws { try Self.expectSame("samples/" + name) }

    @Test("real captures: the same reports with every scan session but the last set aside", arguments: RealCaptures.names)
    func real(name: String) throws { try Self.expectSame(RealCaptures.directory.appendingPathComponent(name).path) }
}
