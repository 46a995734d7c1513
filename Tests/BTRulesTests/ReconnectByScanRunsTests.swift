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

    /// A 4 MB capture of many scans tracked twice: with everything in memory, and with a scratch directory where
    /// the model sets its scans and links aside and the rules set their runs aside.
    static func models(in directory: TemporaryDirectory) throws -> (held: CaptureModel, spilled: CaptureModel, scratch: String) {
        let (capture, scratch) = try directory.benchCapture(.scans, bytes: 4 << 20)
        func model(_ directory: String?) throws -> CaptureModel {
            var options = TrackerOptions()
            options.scanSessionSpillDirectory = directory
            var collector = TrackingCollector(options: options)
            return try OpenedCapture.open(path: capture).accept(&collector)
        }
        return (try model(nil), try model(scratch), scratch)
    }

    @Test("runs of five in a directory give the findings of one sort in memory")
    func runsSetAside() throws {
        let directory = try TemporaryDirectory()
        let (held, spilled, scratch) = try Self.models(in: directory)
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
        let (held, spilled, _) = try Self.models(in: directory)
        let inMemory = Self.churnFindings(held, runLength: ConnectionChurnRule.runLength)
        #expect(inMemory.count > 3, "the capture should churn on some peers")
        #expect(Self.churnFindings(spilled, runLength: 5) == inMemory)
        #expect(Self.churnFindings(spilled, runLength: 1) == inMemory)
    }
}

/// `reconnect-by-scan`'s search back for a scan that was on at the disconnect and stopped for the reconnection:
/// with the scans' ends in order it stops at the first that stopped too early, and finds what a search through
/// every scan before finds; with ends out of order (a clock step) it searches them all. Set aside (a long capture's
/// tens of thousands of scans), the spans give the same answers.
@Suite("reconnect-by-scan: the scan stopped for a reconnection")
struct ReconnectByScanSpansTests {
    static func reference(ends: [Int64], before lo: Int, after disconnect: Int64, by latest: Int64) -> Int? {
        ends[..<lo].lastIndex { stop in
            stop != ReconnectByScanRule.Spans.stillOn && stop > disconnect
                && Timestamp(nanoseconds: stop) - Timestamp(nanoseconds: disconnect) >= ReconnectByScanRule.minimumScanAfterDisconnect
                && stop <= latest
        }
    }

    @Test("the same scan as a search through every scan before, ends in order or not, in memory or set aside",
          arguments: [true, false], [true, false])
    func sameAsFullSearch(inOrder: Bool, setAside: Bool) throws {
        // Scans of 2–6 s every 7 s; some still on (no end); out of order, some ends a minute early.
        var starts: [Int64] = [], ends: [Int64] = []
        for n in 0..<300 {
            let start = Int64(n) * 7_000_000_000
            starts.append(start)
            if n % 50 == 49 {
                ends.append(ReconnectByScanRule.Spans.stillOn)
            } else {
                let back: Int64 = !inOrder && n % 13 == 0 ? 60_000_000_000 : 0
                ends.append(start + Int64(2 + n % 5) * 1_000_000_000 - back)
            }
        }
        let directory = try TemporaryDirectory()
        let spans = setAside
            ? ReconnectByScanRule.Spans(starts: starts, ends: ends, directory: directory.path, held: 10)
            : ReconnectByScanRule.Spans(starts: starts, ends: ends)
        #expect(spans.endsInOrder == inOrder)
        #expect(setAside ? spans.setAsideCount >= starts.count / 2 : spans.setAsideCount == 0)
        #expect(spans.count == starts.count && (0..<starts.count).allSatisfy { spans.start($0) == starts[$0] && spans.end($0) == ends[$0] })
        var found = 0
        for q in 0..<2_000 {
            let disconnect = Int64(q) * 1_050_000_000 + Int64(q % 7) * 130_000_000
            let latest = disconnect + Int64(q % 11) * 900_000_000
            let lo = spans.firstStarted(after: disconnect)
            #expect(lo == starts.partitioningIndex { $0 > disconnect })
            let got = spans.lastStopped(before: lo, after: Timestamp(nanoseconds: disconnect), by: latest)
            #expect(got == Self.reference(ends: ends, before: lo, after: disconnect, by: latest), "disconnect \(disconnect)")
            if got != nil { found += 1 }
        }
        #expect(found > 100 && found < 1_900, "both answers are exercised: \(found)")
    }
}
