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

/// `btlens audit` sets findings aside in an unlinked temporary file as they are made (`FindingSpill`) and reads
/// them back one at a time for the report (`StoredFindings`): every report must be byte for byte the one made
/// from the findings held in memory, and nothing may be left in the temporary directory.
@Suite("Findings set aside in a spill file")
struct FindingSpillTests {
    /// Every report format but HTML, for `findings` (and `accepted`) of one capture.
    static func reports(file: String, findings: Findings, accepted: Findings, model: CaptureModel) -> [String] {
        var audited = AuditedCapture(file: file, findings: findings, connections: model.linkCount, accepted: accepted)
        audited.notes = AuditNotes.notes(model)
        audited.captureSeconds = 12.5
        audited.radioChargeMC = 1000
        let runs = [AuditRun(captures: [audited], failOn: .warning, version: "test"),
                    AuditRun(captures: [audited, audited], failOn: .info, version: "test")]
        return runs.flatMap { run in
            [AuditTextReport.render(run, colored: false, verbose: true), AuditTextReport.render(run, colored: true),
             AuditJSON.render(run), AuditSARIF.render(run), AuditJUnit.render(run), AuditMarkdown.render(run),
             AuditJSON.baseline(run.baselineFindings)]
        }
    }

    /// The capture at `path` audited as `btlens audit` does, links judged as they close (`window`): its
    /// reports from findings held in memory, then from findings set aside in a spill in `directory`.
    /// `accepting`: which findings a baseline accepts.
    /// `keyRunLength`: the finished findings' keys sorted in memory at once, the rest in runs set aside and merged.
    /// `shared`: the spilled audit's rules evaluated on two threads whatever the capture's size.
    static func bothWays(_ path: String, window: Int = 1, directory: String?, keyRunLength: Int = FindingSpill.defaultKeyRunLength,
                         shared: Bool = false,
                         accepting: @escaping @Sendable (Finding) -> Bool = { _ in false }) throws -> (held: [String], spilled: [String], spilledCount: Int) {
        var auditor = Auditor()
        auditor.sharedEvaluationRecords = Int.max
        func track(_ judgement: LinkJudgement) throws -> CaptureModel {
            var options = TrackerOptions.withoutAdvertisers
            options.retirement = judgement.retirement(window: window)
            options.connectionsWhileScanningListed = 0
            options.scanDevicesListed = 0
            var collector = TrackingCollector(options: options)
            return try OpenedCapture.open(path: path).accept(&collector)
        }
        let heldJudgement = auditor.linkJudgement(pricing: true)
        let heldModel = try track(heldJudgement)
        let all = auditor.audit(heldModel, file: path, judged: heldJudgement)
        let held = reports(file: path, findings: Findings(all.filter { !accepting($0) }),
                           accepted: Findings(all.filter(accepting)), model: heldModel)

        let spill = try FindingSpill(directory: directory)
        spill.keyRunLength = keyRunLength
        let spilledJudgement = auditor.linkJudgement(pricing: true, spill: spill)
        let spilledModel = try track(spilledJudgement)
        if shared { auditor.sharedEvaluationRecords = 0 }
        let (reported, accepted) = try auditor.audit(spilledModel, file: path, judged: spilledJudgement, spill: spill) { f in
            accepting(f) ? .accepted : .reported
        }
        #expect(reported.isSpilled == (directory != nil))
        let spilled = reports(file: path, findings: Findings(reported), accepted: Findings(accepted), model: spilledModel)
        #expect(reported.failure == nil && accepted.failure == nil, "\(String(describing: reported.failure)) \(String(describing: accepted.failure))")
        return (held, spilled, reported.count + accepted.count)
    }

    static func expectSame(_ path: String, accepting: @escaping @Sendable (Finding) -> Bool = { _ in false }) throws {
        let directory = try TemporaryDirectory()
        // Keys sorted in memory at once, and in runs of two merged; the rules on one thread and on two.
        for (runLength, shared) in [(FindingSpill.defaultKeyRunLength, false), (2, false), (FindingSpill.defaultKeyRunLength, true)] {
            let (held, spilled, _) = try bothWays(path, directory: directory.path, keyRunLength: runLength, shared: shared,
                                                  accepting: accepting)
            #expect(held.count == spilled.count)
            for (i, (a, b)) in zip(held, spilled).enumerated() {
                #expect(a == b, "\(path): report \(i) differs when the findings are read back from the spill (runs of \(runLength), rules on \(shared ? "two threads" : "one"))")
            }
        }
        // The spill's names are removed as soon as the files are made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("samples: every report the same through the spill", arguments: LinkRetirementTests.samples)
    func sample(name: String) throws {
        try Self.expectSame("samples/" + name)
    }

    @Test("real captures: every report the same through the spill", arguments: RealCaptures.names)
    func real(name: String) throws {
        try Self.expectSame(RealCaptures.directory.appendingPathComponent(name).path)
    }

    @Test("a baseline's accepted findings are set aside apart from the reported ones, each list in report order")
    func accepted() throws {
        // Every other rule's findings accepted: both lists non-empty on the wasteful sample.
        try Self.expectSame("samples/wasteful-central.btsnoop") { Int($0.id.dropFirst(3)).map { $0 % 2 == 0 } ?? false }
    }

    @Test("a scans-shaped capture with hundreds of findings: the same reports through the spill, nothing left behind")
    func manyFindings() throws {
        let directory = try TemporaryDirectory()
        let (capture, spillDirectory) = try directory.benchCapture(.scans, bytes: 16 << 20)
        for (runLength, shared) in [(FindingSpill.defaultKeyRunLength, false), (37, false), (FindingSpill.defaultKeyRunLength, true)] {
            let (held, spilled, count) = try Self.bothWays(capture, window: 8, directory: spillDirectory, keyRunLength: runLength,
                                                           shared: shared)
            #expect(count > 100, "the capture should make many findings")
            #expect(count > 3 * runLength || runLength == FindingSpill.defaultKeyRunLength)
            for (i, (a, b)) in zip(held, spilled).enumerated() {
                #expect(a == b, "report \(i) differs when the findings are read back from the spill (keys in runs of \(runLength), rules on \(shared ? "two threads" : "one"))")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: spillDirectory).isEmpty)
    }

    @Test("no descriptor of a spill stays open once its findings are let go")
    func filesClosed() throws {
        let directory = try TemporaryDirectory()
        func openSpills() -> Int {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return fds.filter { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd))?
                    .contains((directory.path as NSString).lastPathComponent + "/.btlens-findings-") ?? false
            }.count
        }
        do {
            _ = try Self.bothWays("samples/wasteful-central.btsnoop", directory: directory.path)
        }
        #expect(openSpills() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("a spill where no file can be made is a typed error")
    func noDirectory() {
        #expect(throws: FindingStoreError.self) { _ = try FindingSpill(directory: "/nonexistent/btlens-spill-test") }
    }
}
