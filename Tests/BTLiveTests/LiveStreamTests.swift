import Foundation
import Testing
import BTCapture
import BTTrack
import BTRules
@testable import BTLive
import BTScenario
import TestSupport

/// `live -`: a btsnoop (or PacketLogger) stream on a pipe, through `OpenedCapture` with a polling ByteSource.
@Suite("Streams on standard input")
struct LiveStreamTests {
    @Test("a stream arriving in bursts: every record, audit's findings at the end, and --write re-reads to the input",
          arguments: [ScenarioFormat.btsnoopH4, .btsnoopMonitor, .packetLoggerLE])
    func bursts(format: ScenarioFormat) throws {
        let full = try writeScenario("wasteful-central", format: format)
        let bytes = try Bytes.read(full)
        let (readFD, writeFD) = try #require(SocketPair.pipe())
        defer { close(readFD) }
        var closed = false
        // The first bytes are enough to recognise the format; the rest follows in uneven bursts.
        Bytes.write(bytes.prefix(300), fd: writeFD)
        let stop = LiveStop()
        let issues = IssueLog()
        let stream = try LiveStreamInput(fd: readFD, stop: stop, issues: issues)
        let capture = try #require(stream.capture)
        #expect(capture.info.format == format.captureFormat)
        let dir = try TemporaryDirectory()
        let written = dir.file("written.btsnoop")
        let output = CollectingOutput()
        let session = LiveSession(options: LiveOptions(label: "<stdin>", format: .text), output: output,
                                  writer: try LiveCaptureWriter(path: written), issues: issues)
        let cuts = Array(stride(from: 300, to: bytes.count, by: 1537)) + [bytes.count]
        let steps = Steps(zip(cuts, cuts.dropFirst()).map { from, to in { Bytes.write(bytes[from..<to], fd: writeFD) } },
                          whenDone: {
                              if !closed { close(writeFD); closed = true }  // end of input
                          })
        stream.waiter.onIdle = {
            session.idle()
            steps.next()
        }
        var visitor = LiveVisitor(session: session, stop: stop)
        try capture.accept(&visitor)
        let summary = session.finish(reason: "end of input")
        #expect(closed)

        let input = try LoadedCapture.load(full)
        #expect(summary.records == input.records.count)
        #expect(issues.count == 0)
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: full).accept(&collector)
        #expect(summary.findings.map(\.fingerprint) == Auditor().audit(model, file: "<stdin>").map(\.fingerprint))
        #expect(output.liveFindings.count > 0)
        #expect(output.lines.contains { $0.hasPrefix("--- btlens live: end of input: \(input.records.count) records, 2 connections") })

        // The written file: btsnoop datalink 2001, the same records at the same times (µs). PacketLogger notes
        // have no monitor form and are left out.
        let reread = try LoadedCapture.load(written)
        #expect(reread.info.format == .btsnoop(datalink: BTSnoopDatalink.monitor))
        #expect(reread.issueCount == 0)
        let kept = format == .btsnoopMonitor ? input.records : input.records.filter { $0.kind.isHCIPacket }
        #expect(reread.records.map { RecordContent($0) } == kept.map { RecordContent($0) })
        if format == .btsnoopMonitor { #expect(reread.records.map(\.sourceType) == input.records.map(\.sourceType)) }
        #expect(summary.written == kept.count)
    }

    @Test("JSON Lines: every line one object with a type; the last one the summary with all findings")
    func jsonLines() throws {
        let full = try writeScenario("connection-churn")
        let bytes = try Bytes.read(full)
        let (readFD, writeFD) = try #require(SocketPair.pipe())
        defer { close(readFD) }
        Bytes.write(bytes[...], fd: writeFD)
        close(writeFD)
        let stop = LiveStop()
        let stream = try LiveStreamInput(fd: readFD, stop: stop, issues: IssueLog())
        let output = CollectingOutput()
        let session = LiveSession(options: LiveOptions(label: "<stdin>", format: .json), output: output)
        var visitor = LiveVisitor(session: session, stop: stop)
        try stream.capture?.accept(&visitor)
        let summary = session.finish(reason: "end of input")
        var types: [String: Int] = [:]
        var last: [String: Any] = [:]
        for line in output.lines where !line.isEmpty {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            let type = try #require(object["type"] as? String)
            types[type, default: 0] += 1
            last = object
        }
        #expect(types["record"] == summary.records)
        #expect(types["summary"] == 1)
        #expect((types["connection"] ?? 0) >= summary.connections)
        #expect(last["type"] as? String == "summary")
        #expect((last["findings"] as? [Any])?.count == summary.findings.count)
        #expect(summary.failedConnections > 0)
        let failed = output.lines.filter { $0.contains("\"event\":\"failed\"") }
        #expect(failed.count == summary.failedConnections)
        #expect(failed.allSatisfy {
            $0.contains("\"accept_list\":") && $0.contains("\"cancelled\":") && $0.contains("\"requested\":")
        })
        let up = output.lines.filter { $0.contains("\"event\":\"up\"") }
        #expect(!up.isEmpty && up.allSatisfy { $0.contains("\"connect_requested\":") })
        #expect(last["cancelled_connections"] is Int)
    }

    @Test("pcap on standard input is refused; an empty stream is an error; a stop before any byte is not")
    func refusals() throws {
        let pcap = try Bytes.read(try writeScenario("heart-rate-session", format: .pcapH4WithDirection))
        let (r1, w1) = try #require(SocketPair.pipe())
        defer { close(r1) }
        Bytes.write(pcap[...], fd: w1)
        close(w1)
        #expect(throws: CaptureError(.unsupportedLinktype, "")) { try LiveStreamInput(fd: r1, stop: LiveStop(), issues: IssueLog()) }

        let (r2, w2) = try #require(SocketPair.pipe())
        defer { close(r2) }
        close(w2)
        #expect(throws: CaptureError(.empty, "")) { try LiveStreamInput(fd: r2, stop: LiveStop(), issues: IssueLog()) }

        let (r3, w3) = try #require(SocketPair.pipe())
        defer { close(r3); close(w3) }
        let stop = LiveStop()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { stop.request() }
        let stream = try LiveStreamInput(fd: r3, stop: stop, issues: IssueLog())
        #expect(stream.capture == nil)
    }
}
