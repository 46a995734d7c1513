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
    static func text(_ path: String, window: Int?, spillDirectory: String? = nil, connection: Int? = nil,
                     lines made: ((TimelineLinkLines) -> Void)? = nil) throws -> String {
        var out: [String] = []
        for input in try CaptureInputs.resolve(path) {
            let capture = try input.open()
            let lines = window.map { _ in TimelineLinkLines(connectionFilter: connection, spillDirectory: spillDirectory) }
            if let lines { made?(lines) }
            var options = TrackerOptions()
            options.retirement = lines.map { lines in
                LinkRetirement(window: window ?? 1, letGoBatch: 1) { c, kept in if kept { lines.keep(c) } }
            }
            var collector = TrackingCollector(options: options)
            let model = try capture.accept(&collector)
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
}
