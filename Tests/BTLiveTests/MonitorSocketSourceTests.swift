import Foundation
import Testing
import BTCapture
import BTDecode
import BTTrack
import BTReport
@testable import BTLive
import BTScenario
import TestSupport

/// The monitor socket's record source and the live pipeline over it, driven through a socketpair with the
/// frames the kernel would send: datagrams (SOCK_SEQPACKET keeps boundaries and reports the peer's close).
@Suite("Monitor socket source and the live pipeline over it")
struct MonitorSocketSourceTests {
    static let seqpacket = Int32(SOCK_SEQPACKET.rawValue)

    func send(_ frames: ArraySlice<[UInt8]>, to fd: Int32) {
        for f in frames { _ = f.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, 0) } }
    }

    @Test("the kernel's replay announces the controller; frames read while waiting come out first")
    func awaitController() throws {
        let (readFD, writeFD) = try #require(SocketPair.make(Self.seqpacket))
        defer { close(writeFD) }
        let stop = LiveStop()
        let source = MonitorSocketSource(reader: MonitorFrameReader(fd: readFD, ownsDescriptor: true), stop: stop)
        let replay = [MonitorHeader.frame(opcode: MonitorOpcode.controlOpen, index: 0xFFFF, payload: [1, 0, 0, 0, 2, 0]),
                      MonitorFrames.newIndex(0),
                      MonitorHeader.frame(opcode: MonitorOpcode.openIndex, index: 0, payload: [])]
        send(replay[...], to: writeFD)
        try source.awaitController(index: nil, within: .seconds(2))
        #expect(source.controllers == [0])
        var kinds: [RecordKind] = []
        var controllers: [UInt16] = []
        // The source keeps waiting for more; end it once the replay is out.
        source.onIdle = { stop.request() }
        while let r = source.next() {
            kinds.append(r.kind)
            controllers.append(r.controller)
            #expect(r.number == kinds.count)
        }
        #expect(kinds == [.managementOpened, .controllerAdded, .controllerOpened])
        #expect(controllers == [0xFFFF, 0, 0])
    }

    @Test("no NEW_INDEX within the wait, or not the --index one: noController, naming what is present")
    func noController() throws {
        let (readFD, writeFD) = try #require(SocketPair.make(Self.seqpacket))
        defer { close(writeFD) }
        let source = MonitorSocketSource(reader: MonitorFrameReader(fd: readFD, ownsDescriptor: true), stop: LiveStop())
        let started = Date()
        #expect(throws: LiveError(.noController, "", hint: "")) { try source.awaitController(index: nil, within: .milliseconds(200)) }
        #expect(Date().timeIntervalSince(started) < 5)
        send([MonitorFrames.newIndex(0)][...], to: writeFD)
        do {
            try source.awaitController(index: 1, within: .milliseconds(200))
            Issue.record("hci1 is absent")
        } catch {
            #expect(error.code == .noController)
            #expect(error.description.contains("hci1 not found (present: hci0)"))
            #expect(error.description.contains("--index"))
        }
        // hci0 is there: asking for it succeeds at once.
        try source.awaitController(index: 0, within: .milliseconds(200))
    }

    @Test("DEL_INDEX mid-capture: the capture goes on and the removal is noted; --index keeps one controller")
    func controllerRemoved() throws {
        let (readFD, writeFD) = try #require(SocketPair.make(Self.seqpacket))
        let stop = LiveStop()
        let source = MonitorSocketSource(reader: MonitorFrameReader(fd: readFD, ownsDescriptor: true), stop: stop)
        let frames = [MonitorFrames.newIndex(0), MonitorFrames.newIndex(1, name: "hci1")] + MonitorFrames.reset(0)
            + MonitorFrames.reset(1) + [MonitorFrames.deleteIndex(0)] + MonitorFrames.reset(1)
            + [MonitorFrames.newIndex(0)] + MonitorFrames.reset(0)
        send(frames[...], to: writeFD)
        close(writeFD)  // the seqpacket peer's close ends the source after the frames
        try source.awaitController(index: nil)
        let output = CollectingOutput()
        let session = LiveSession(options: LiveOptions(label: "Bluetooth"), output: output)
        source.onIdle = { session.idle() }
        var visitor = LiveVisitor(session: session, stop: stop)
        try visitor.visit(source)
        let summary = session.finish(reason: "end of input")
        #expect(summary.records == frames.count)
        #expect(output.notes.contains { $0.contains("controller hci0 was removed; still listening") })
        #expect(output.notes.filter { $0.contains("controller hci0 present") }.count == 2)
        #expect(output.notes.contains { $0.contains("controller hci1 present (hci1, USB, 9C:B6:D0:11:22:33)") })
        #expect(source.controllers == [0, 1])

        // The same frames with --index 1: only hci1's records.
        let (r2, w2) = try #require(SocketPair.make(Self.seqpacket))
        let source2 = MonitorSocketSource(reader: MonitorFrameReader(fd: r2, ownsDescriptor: true), stop: stop)
        send(frames[...], to: w2)
        close(w2)
        let output2 = CollectingOutput()
        let session2 = LiveSession(options: LiveOptions(label: "Bluetooth", index: 1), output: output2)
        var visitor2 = LiveVisitor(session: session2, stop: LiveStop())
        try visitor2.visit(source2)
        #expect(session2.finish(reason: "end of input").records == 5)
        #expect(output2.recordLines.allSatisfy { $0.contains(" 1  ") })
    }

    @Test("a scenario's frames in bursts: every record, reassembled L2CAP, connection events; --write keeps them",
          arguments: ["fragmented-acl", "peripheral-role"])
    func scenarioInBursts(name: String) throws {
        let path = try writeScenario(name, format: .btsnoopMonitor)
        let frames = try MonitorFrames.frames(ofMonitorCapture: path)
        let (readFD, writeFD) = try #require(SocketPair.make(Self.seqpacket))
        defer { close(writeFD) }
        let stop = LiveStop()
        let source = MonitorSocketSource(reader: MonitorFrameReader(fd: readFD, ownsDescriptor: true), stop: stop)
        // Bursts of varying size, each written when the pipeline has caught up with the previous one.
        var bursts: [ArraySlice<[UInt8]>] = []
        var i = 0
        var size = 1
        while i < frames.count {
            bursts.append(frames[i..<min(frames.count, i + size)])
            i += size
            size = size % 23 + 4
        }
        let first = try #require(bursts.first)
        send(first, to: writeFD)
        try source.awaitController(index: nil)
        let steps = Steps(bursts.dropFirst().map { burst in { self.send(burst, to: writeFD) } }, whenDone: { stop.request() })
        let dir = try TemporaryDirectory()
        let written = dir.file("live.btsnoop")
        let output = CollectingOutput()
        let session = LiveSession(options: LiveOptions(label: "Bluetooth"), output: output, writer: try LiveCaptureWriter(path: written),
                                  issues: source.issues)
        source.onIdle = {
            session.idle()
            steps.next()
        }
        var visitor = LiveVisitor(session: session, stop: stop)
        try visitor.visit(source)
        let summary = session.finish(reason: "stopped")

        // Every frame became a record, decoded as `btlens decode` decodes the file (times aside).
        #expect(summary.records == frames.count)
        let expected = try Self.summaries(path)
        let shown = output.recordLines.map { String($0.dropFirst(25)) }  // number and time columns
        #expect(shown == expected)
        #expect(source.issues.count == 0)

        // Links as the tracker sees them in the file.
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: path).accept(&collector)
        #expect(output.connectionEvents.filter { $0.contains(" up:") || $0.contains("already up") }.count == model.connections.count)
        #expect(output.connectionEvents.filter { $0.contains(" down:") }.count == model.connections.filter { $0.disconnectReason != nil }.count)
        #expect(summary.connections == model.connections.count)

        // The written file holds the same records (the socket stamps frames with the clock, not the file's times).
        let reread = try LoadedCapture.load(written)
        #expect(reread.info.format == .btsnoop(datalink: BTSnoopDatalink.monitor))
        let input = try LoadedCapture.load(path)
        #expect(reread.records.map { RecordContent($0, time: false) } == input.records.map { RecordContent($0, time: false) })
        #expect(reread.records.map(\.sourceType) == input.records.map(\.sourceType))
        #expect(reread.issueCount == 0)
    }

    /// The summary column of every record of a capture, as the live view prints it: direction, controller,
    /// summary.
    static func summaries(_ path: String) throws -> [String] {
        var visitor = SummaryVisitor()
        return try OpenedCapture.open(path: path).accept(&visitor)
    }
}

struct SummaryVisitor: RecordSourceVisitor {
    mutating func visit<S: RecordSource>(_ source: S) throws -> [String] {
        var decoder = PacketDecoder(issues: source.issues)
        var out: [String] = []
        while let r = source.next() {
            let line = LiveLines.record(decoder.decode(r), first: r.timestamp, format: .text)
            out.append(String(line.dropFirst(25)))
        }
        return out
    }
}
