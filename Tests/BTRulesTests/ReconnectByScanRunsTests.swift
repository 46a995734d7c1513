import Foundation
import Testing
import BTCapture
import BTTrack
import BTScenario
import TestSupport
@testable import BTRules

/// `reconnect-by-scan` sorts every link by peer, and its reconnections by start, in runs set aside in the model's
/// scratch directory on a long capture: the findings must be the ones one sort in memory gives, in the same order.
@Suite("reconnect-by-scan: links sorted in runs set aside")
struct ReconnectByScanRunsTests {
    static func findings(_ model: CaptureModel, runLength: Int) -> [String] {
        let rule = ReconnectByScanRule()
        var found: [String] = []
        rule.evaluate(model, context: RuleContext(description: ReconnectByScanRule.description), runLength: runLength) {
            found.append("\($0.connection?.id ?? 0) \($0.start) \($0.message)")
        }
        return found
    }

    @Test("runs of five in a directory give the findings of one sort in memory")
    func runsSetAside() throws {
        let directory = try TemporaryDirectory()
        let (capture, scratch) = try directory.benchCapture(.scans, bytes: 4 << 20)
        func model(_ directory: String?) throws -> CaptureModel {
            var options = TrackerOptions()
            options.scanSessionSpillDirectory = directory
            var collector = TrackingCollector(options: options)
            return try OpenedCapture.open(path: capture).accept(&collector)
        }
        let held = try model(nil), spilled = try model(scratch)
        #expect(held.scratchDirectory == nil && spilled.scratchDirectory == scratch)
        let inMemory = Self.findings(held, runLength: 5)
        #expect(inMemory.count > 10, "the capture should reconnect by scan many times")
        #expect(Self.findings(held, runLength: ReconnectByScanRule.runLength) == inMemory)
        #expect(Self.findings(spilled, runLength: 5) == inMemory)
        #expect(Self.findings(spilled, runLength: 1) == inMemory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "nothing left behind")

        // The same scans again on a second controller with no link: each controller's scans are then a copy, set
        // aside as the model's are, and the findings stay those of the first.
        var twoControllers = spilled
        for var scan in Array(spilled.appScans) {
            scan.controller = 1
            twoControllers.appScans.append(scan)
        }
        #expect(Self.findings(twoControllers, runLength: 5) == inMemory)
    }

    /// `connection-churn` sorts the app's links by peer the same way: the episodes must be those of one sort.
    static func churnFindings(_ model: CaptureModel, runLength: Int) -> [String] {
        var found: [String] = []
        ConnectionChurnRule().evaluate(model, context: RuleContext(description: ConnectionChurnRule.description),
                                       runLength: runLength) {
            found.append("\($0.connection?.id ?? 0) \($0.start) \($0.discriminator) \($0.message) \($0.cost?.phone.chargeMC ?? 0)")
        }
        return found.sorted()
    }

    @Test("connection-churn: runs of five in a directory give the episodes of one sort in memory")
    func churnRunsSetAside() throws {
        let directory = try TemporaryDirectory()
        let (capture, scratch) = try directory.benchCapture(.scans, bytes: 4 << 20)
        func model(_ directory: String?) throws -> CaptureModel {
            var options = TrackerOptions()
            options.scanSessionSpillDirectory = directory
            var collector = TrackingCollector(options: options)
            return try OpenedCapture.open(path: capture).accept(&collector)
        }
        let held = try model(nil), spilled = try model(scratch)
        let inMemory = Self.churnFindings(held, runLength: ConnectionChurnRule.runLength)
        #expect(inMemory.count > 3, "the capture should churn on some peers")
        #expect(Self.churnFindings(spilled, runLength: 5) == inMemory)
        #expect(Self.churnFindings(spilled, runLength: 1) == inMemory)
    }
}
