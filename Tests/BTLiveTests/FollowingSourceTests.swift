import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
@testable import BTLive
import BTScenario
import TestSupport

/// `live --follow`: a file growing in steps while it is read. Growth, truncation and rotation happen in
/// `onIdle`, which the follower calls each time it has caught up — the moment a real writer's next write
/// would be noticed — so the tests need no threads and no sleeping.
@Suite("Following a growing file")
struct FollowingSourceTests {
    /// Reads `path` with a follower until it has caught up after the last step; returns the records.
    func follow(_ path: String, fromEnd: Bool = false, steps: [() -> Void], changes: ChangeLog? = nil) throws -> (records: [CopiedRecord], offsets: [Int64], issues: Int) {
        let stop = LiveStop()
        let source = try FollowingSource(path: path, fromEnd: fromEnd, stop: stop)
        source.pollInterval = 2
        let run = Steps(steps, whenDone: { stop.request() })
        source.onIdle = { run.next() }
        source.onChange = { changes?.changes.append($0) }
        var records: [CopiedRecord] = []
        var offsets: [Int64] = []
        while !stop.isRequested, let r = source.next() {
            records.append(CopiedRecord(r))
            offsets.append(r.offset)
        }
        return (records, offsets, source.issues.count)
    }

    /// Appends `bytes[from...]` in pieces of `size` bytes: the cuts fall inside record headers and payloads.
    func appendSteps(_ bytes: [UInt8], from: Int, size: Int, to path: String) -> [() -> Void] {
        stride(from: from, to: bytes.count, by: size).map { start in
            { Bytes.append(bytes[start..<min(bytes.count, start + size)], to: path) }
        }
    }

    @Test("a file appended in steps (cut mid-record) reads exactly as the finished file",
          arguments: [ScenarioFormat.btsnoopH4, .btsnoopMonitor, .btsnoopH1, .packetLoggerLE, .packetLoggerBE])
    func growing(format: ScenarioFormat) throws {
        let full = try writeScenario("heart-rate-session", format: format)
        let bytes = try Bytes.read(full)
        let dir = try TemporaryDirectory()
        let path = dir.file("growing")
        Bytes.write(bytes.prefix(40), to: path)
        let result = try follow(path, steps: appendSteps(bytes, from: 40, size: 173, to: path))
        let expected = try LoadedCapture.load(full)
        #expect(result.records == expected.records)
        #expect(result.offsets.map(Int.init) == Array(try Bytes.recordBoundaries(full).dropLast()))
        #expect(result.issues == 0)
    }

    @Test("--from-end skips what is already there and reads what is written next, at true offsets",
          arguments: [ScenarioFormat.btsnoopH4, .packetLoggerLE, .packetLoggerBE])
    func fromEnd(format: ScenarioFormat) throws {
        let full = try writeScenario("wasteful-central", format: format)
        let bytes = try Bytes.read(full)
        let boundaries = try Bytes.recordBoundaries(full)
        let half = boundaries.count / 2
        let dir = try TemporaryDirectory()
        let path = dir.file("tail")
        Bytes.write(bytes.prefix(boundaries[half]), to: path)
        let result = try follow(path, fromEnd: true, steps: appendSteps(bytes, from: boundaries[half], size: 999, to: path))
        let expected = try LoadedCapture.load(full).records
        #expect(result.records.map { RecordContent($0) } == expected[half...].map { RecordContent($0) })
        #expect(result.records.first?.number == 1)
        #expect(result.offsets.map(Int.init) == Array(boundaries[half..<(boundaries.count - 1)]))
        #expect(result.issues == 0)
    }

    @Test("a truncated file is read again from its new start, noted, and numbering continues")
    func truncation() throws {
        let first = try Bytes.read(try writeScenario("heart-rate-session"))
        let second = try Bytes.read(try writeScenario("connection-churn"))
        #expect(second.count < first.count)  // shorter than what was read: the truncation shows
        let dir = try TemporaryDirectory()
        let path = dir.file("restarted.log")
        Bytes.write(first[...], to: path)
        let log = ChangeLog()
        let result = try follow(path, steps: [{ Bytes.write(second[...], to: path) }], changes: log)
        #expect(log.changes == [.truncated(size: Int64(second.count))])
        let a = try LoadedCapture.load(try writeScenario("heart-rate-session")).records
        let b = try LoadedCapture.load(try writeScenario("connection-churn")).records
        #expect(result.records.map { RecordContent($0) } == (a + b).map { RecordContent($0) })
        #expect(result.records.map(\.number) == Array(1...(a.count + b.count)))
        #expect(result.issues == 0)
    }

    @Test("a rotated file (the path names a new file) is reopened from its start and noted")
    func rotation() throws {
        let first = try Bytes.read(try writeScenario("connection-churn"))
        let second = try Bytes.read(try writeScenario("heart-rate-session", format: .packetLoggerLE))
        let dir = try TemporaryDirectory()
        let path = dir.file("btsnoop_hci.log")
        Bytes.write(first[...], to: path)
        let log = ChangeLog()
        let result = try follow(path, steps: [
                {
                    // Android keeps the previous log as .last and starts a new file (here: another format).
                    _ = rename(path, path + ".last")
                    Bytes.write(second.prefix(100), to: path)
                },
                { Bytes.append(second[100...], to: path) },
            ], changes: log)
        #expect(log.changes == [.rotated])
        let a = try LoadedCapture.load(try writeScenario("connection-churn")).records
        let b = try LoadedCapture.load(try writeScenario("heart-rate-session", format: .packetLoggerLE)).records
        #expect(result.records.map { RecordContent($0) } == (a + b).map { RecordContent($0) })
        #expect(result.issues == 0)
    }

    @Test("an empty file is waited for until its writer starts")
    func emptyAtFirst() throws {
        let full = try writeScenario("heart-rate-session")
        let bytes = try Bytes.read(full)
        let dir = try TemporaryDirectory()
        let path = dir.file("empty")
        Bytes.write([], to: path)
        // The writer starts only once the follower has opened the empty file and is waiting for its format:
        // the first idle call, which comes while the follower is still being created. Then it writes the file
        // in pieces (cut mid-record), one per idle call, from the reading thread: no other thread, no timing.
        let stop = LiveStop()
        var sizeAtFirstIdle: Int?
        var idleCalls = 0
        let pieces = appendSteps(bytes, from: 0, size: 173, to: path)
        let run = Steps(pieces, whenDone: { stop.request() })
        let source = try FollowingSource(path: path, fromEnd: false, stop: stop, onIdle: {
            idleCalls += 1
            if sizeAtFirstIdle == nil { sizeAtFirstIdle = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1 }
            run.next()
        })
        source.pollInterval = 2
        var records: [CopiedRecord] = []
        while !stop.isRequested, let r = source.next() { records.append(CopiedRecord(r)) }
        #expect(sizeAtFirstIdle == 0, "the follower first waited on an empty file")
        // The stop came only after every piece was written and the follower caught up: all of it was read.
        #expect(run.index == pieces.count)
        #expect(lseek(source.fd, 0, SEEK_CUR) == off_t(bytes.count))
        #expect(idleCalls == pieces.count + 1)  // one per piece, and the one that found it all read
        #expect(records == (try LoadedCapture.load(full)).records)
        #expect(source.issues.count == 0)
    }

    @Test("missing files, directories and pcap are refused with a CaptureError")
    func refused() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: CaptureError(.cannotOpen, "")) { try FollowingSource(path: dir.file("missing"), fromEnd: false, stop: LiveStop()) }
        #expect(throws: CaptureError(.cannotOpen, "")) { try FollowingSource(path: dir.path, fromEnd: false, stop: LiveStop()) }
        let pcap = try writeScenario("heart-rate-session", format: .pcapH4WithDirection)
        #expect(throws: CaptureError(.unsupportedLinktype, "")) { try FollowingSource(path: pcap, fromEnd: false, stop: LiveStop()) }
    }

    @Test("the live pipeline over a followed file: findings show while it grows; the final ones are audit's")
    func pipelineFindsEarly() throws {
        let full = try writeScenario("wasteful-central")
        let bytes = try Bytes.read(full)
        let boundaries = try Bytes.recordBoundaries(full)
        let dir = try TemporaryDirectory()
        let path = dir.file("wasteful.log")
        Bytes.write(bytes.prefix(boundaries[20]), to: path)
        // About 60 records per step, so audits run between steps as they would while a phone writes its log.
        let cuts = stride(from: 20, to: boundaries.count, by: 60).map { boundaries[$0] } + [bytes.count]
        let stop = LiveStop()
        let source = try FollowingSource(path: path, fromEnd: false, stop: stop)
        source.pollInterval = 2
        let output = CollectingOutput()
        let session = LiveSession(options: LiveOptions(label: path), output: output, issues: source.issues)
        let steps = Steps(zip(cuts, cuts.dropFirst()).map { from, to in { Bytes.append(bytes[from..<to], to: path) } },
                          whenDone: { stop.request() })
        source.onIdle = {
            session.idle()
            steps.next()
        }
        source.onChange = { session.note($0.note) }
        var visitor = LiveVisitor(session: session, stop: stop)
        try visitor.visit(source)
        let summary = session.finish(reason: "stopped")

        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: full).accept(&collector)
        let audited = Auditor().audit(model, file: path)
        #expect(summary.findings.map(\.fingerprint) == audited.map(\.fingerprint))
        #expect(summary.records == model.records)

        // Findings appeared while the file grew, before the last record was read, each at most once, and each
        // one is also a finding of the finished capture.
        let live = output.liveFindings
        #expect(live.count >= 5)
        let lastRecord = try #require(output.lines.lastIndex { $0.hasPrefix(String(LiveSignalTests.recordLine(model.records).dropFirst())) })
        let firstFinding = try #require(output.lines.firstIndex { $0.contains("  !! ") })
        #expect(firstFinding < lastRecord)
        let finalRules = Set(audited.map(\.id))
        for line in live {
            let id = line.components(separatedBy: " ").first { $0.hasPrefix("BTL") } ?? "?"
            #expect(finalRules.contains(id), "\(line)")
        }
        #expect(Set(live).count == live.count)
        #expect(summary.findingsShownLive == live.count)
        // Connection events in order: #1 up, #1 down, #2 up, #2 down.
        let events = output.connectionEvents.map { $0.components(separatedBy: "== ").last ?? "" }
        #expect(events.map { String($0.prefix(16)) } == ["connection #1 up", "connection #1 do", "connection #2 up", "connection #2 do"])
    }
}

final class ChangeLog: @unchecked Sendable {
    var changes: [FollowingSource.Change] = []
}
