import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTReport
import TestSupport

/// `TrackingCollector` tracks links and scans on a second thread (`LinkThreadPolicy`): the model, and the
/// issues found on the way, must be exactly those of the one-thread path, on every sample and real capture.
@Suite("Tracking on a second thread")
struct LinkThreadTests {
    /// Timeline, GATT and devices JSON plus the issue log, tracked with `policy`.
    static func reports(_ path: String, policy: LinkThreadPolicy) throws -> [String] {
        let issues = IssueLog()
        let capture = try OpenedCapture.open(path: path, issues: issues)
        var options = TrackerOptions()
        options.linkThread = policy
        var collector = TrackingCollector(options: options)
        let model = try capture.accept(&collector)
        let name = URL(fileURLWithPath: path).lastPathComponent
        let devices = DevicesReport(file: name, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
        return [TimelineReport.json(file: name, model: model).serialized(),
                TimelineReport.text(file: name, model: model),
                GATTReport.text(file: name, model: model),
                DevicesJSON.object(devices).serialized(),
                "\(issues.count) issues: " + issues.issues.map(\.description).joined(separator: "\n")]
    }

    static var samples: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "samples")) ?? []).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted()
    }

    @Test("samples: the same reports with and without the link thread", arguments: samples)
    func sample(name: String) throws {
        let path = "samples/" + name
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        #expect(one.count == 5)
        for (a, b) in zip(one, two) { #expect(a == b, "\(name)") }
    }

    @Test("real captures: the same reports with and without the link thread", arguments: RealCaptures.names)
    func real(name: String) throws {
        let path = RealCaptures.directory.appendingPathComponent(name).path
        let one = try Self.reports(path, policy: .never)
        let two = try Self.reports(path, policy: .always)
        #expect(one.count == 5)
        for (a, b) in zip(one, two) { #expect(a == b, "\(name)") }
    }

    @Test("samples exist, so the comparison above is not empty")
    func samplesPresent() {
        #expect(Self.samples.count >= 5)
    }
}
