import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
@testable import BTReport
import TestSupport

/// The text timeline writes a finished link's lines when the link is judged and sets them aside in a temporary
/// file (`TimelineLinkLines`) until it prints them: the text must be the one of writing every link at the end.
@Suite("Timeline lines of links judged as they close, set aside and read back")
struct TimelineLinkLinesTests {
    /// The capture's text timeline, its links written at the end (`window` nil) or as they are judged, each as
    /// soon as the next finishes (`window` 1), their lines set aside in `spillDirectory` (nil: memory).
    /// `keeping`: what the model keeps of a judged link — `.summary` (what `btlens timeline` asks: the report
    /// prints a let-go link from its record alone) or the slim link.
    static func text(_ path: String, window: Int?, spillDirectory: String? = nil, connection: Int? = nil,
                     keeping: LinkRetirement.Keeping = .summary, letGoBatch: Int = 1,
                     lines made: ((TimelineLinkLines) -> Void)? = nil, model kept: ((CaptureModel) -> Void)? = nil) throws -> String {
        var out: [String] = []
        for input in try CaptureInputs.resolve(path) {
            let capture = try input.open()
            let lines = window.map { _ in TimelineLinkLines(connectionFilter: connection, spillDirectory: spillDirectory) }
            if let lines { made?(lines) }
            var options = TrackerOptions()
            options.retirement = lines.map { lines in
                LinkRetirement(window: window ?? 1, keeping: keeping, interest: Auditor().linkJudgement().interest,
                               letGoBatch: letGoBatch) { c, kept in if kept { lines.keep(c) } }
            }
            var collector = TrackingCollector(options: options)
            let model = try capture.accept(&collector)
            kept?(model)
            out.append(TimelineReport.text(file: input.path, model: model, connectionFilter: connection, full: true, judged: lines))
        }
        return out.joined(separator: "\n")
    }

    static func expectSame(_ path: String, _ name: String) throws {
        let directory = try TemporaryDirectory()
        let atEnd = try text(path, window: nil)
        var spilled: TimelineLinkLines?
        #expect(try text(path, window: 1, spillDirectory: directory.path) { spilled = $0 } == atEnd, "\(name): set aside in a file")
        #expect(try text(path, window: 1) == atEnd, "\(name): set aside in memory")
        #expect(try text(path, window: 1, keeping: .slim) == atEnd, "\(name): slim links kept in the model")
        #expect(spilled?.records.isFile == true && spilled?.records.failure == nil)
        // The file's name is removed as soon as it is made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("samples: the same text with every finished link's lines set aside", arguments: LinkRetirementTests.samples)
    func sample(name: String) throws {
        try Self.expectSame("samples/" + name, name)
    }

    @Test("real captures: the same text with every finished link's lines set aside", arguments: RealCaptures.names)
    func real(name: String) throws {
        try Self.expectSame(RealCaptures.directory.appendingPathComponent(name).path, name)
    }

    @Test("thousands of short links: the same text, the lines in the file, one connection's alone with a filter")
    func manyLinks() throws {
        let directory = try TemporaryDirectory()
        let path = try LinkRetirementTests.manyLinksFile(in: directory)
        let spillDirectory = directory.file("spill")
        try FileManager.default.createDirectory(atPath: spillDirectory, withIntermediateDirectories: true)
        let atEnd = try Self.text(path, window: nil)
        var spilled: TimelineLinkLines?
        #expect(try Self.text(path, window: 1, spillDirectory: spillDirectory) { spilled = $0 } == atEnd)
        let lines = try #require(spilled)
        #expect(lines.records.isFile && lines.records.spilledBytes > Int64(atEnd.utf8.count / 2))
        #expect(_isPOD(TimelineLinkLines.Header.self) && _isPOD(TimelineLinkLines.LineHeader.self) && _isPOD(LinkPhase.self))
        // With a connection filter only that link's lines are set aside.
        let one = try Self.text(path, window: nil, connection: 7)
        var filtered: TimelineLinkLines?
        #expect(try Self.text(path, window: 1, spillDirectory: spillDirectory, connection: 7) { filtered = $0 } == one)
        #expect((filtered?.records.spilledBytes ?? 0) > 0 && (filtered?.records.spilledBytes ?? 0) < lines.records.spilledBytes / 100)
        // A directory it cannot write in: the lines stay in memory and the text is the same.
        var fallback: TimelineLinkLines?
        #expect(try Self.text(path, window: 1, spillDirectory: directory.file("missing")) { fallback = $0 } == atEnd)
        #expect(fallback?.records.isFile == false && fallback?.records.spillFailure?.contains("missing") == true)
    }

    @Test("links to new peers let go whole: printed from their records alone, the same text, the overview included")
    func letGo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new-peers.btsnoop")
        try LinkRetirementTests.newPeers.write(to: path)
        let atEnd = try Self.text(path, window: nil)
        var model: CaptureModel?
        let early = try Self.text(path, window: 16, spillDirectory: directory.path, letGoBatch: 256, model: { model = $0 })
        #expect(early == atEnd)
        // The report opens with its overview (five links by name) and prints every link.
        #expect(atEnd.contains("Overview: \(LinkRetirementTests.newPeerLinks) connections (#1 "))
        #expect(atEnd.components(separatedBy: "\nConnection #").count == LinkRetirementTests.newPeerLinks + 1)
        // Most links were let go: the model kept neither them nor (mostly) their summaries.
        let kept = try #require(model)
        #expect(kept.linkCount == LinkRetirementTests.newPeerLinks)
        #expect(kept.connections.count < LinkRetirementTests.newPeerLinks / 2, "\(kept.connections.count) links kept")
        // Only the remembered peers' latest links (two generations of 2,048) and a few more keep a summary.
        #expect(kept.letGoLinks.count >= LinkRetirementTests.newPeerLinks - 2 * 2048 - 64 - 16 - 16,
                "\(kept.letGoLinks.count) let go whole")
        // One connection's timeline, let go and printed from its record.
        let one = try Self.text(path, window: nil, connection: 100)
        #expect(one.contains("Connection #100 "))
        #expect(try Self.text(path, window: 16, connection: 100, letGoBatch: 256) == one)
    }
}
