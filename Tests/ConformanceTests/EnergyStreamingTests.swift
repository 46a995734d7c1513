import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
@testable import BTEnergy
import BTRules
import BTReport
import BTScenario
import TestSupport

/// `btlens energy` prices a link into a compact row (`EnergyReport.LinkTable`), sets the judged links' rows aside
/// in a temporary file (`EnergyLinkRows`) and prints its report as it is made
/// (`EnergyText.write`, `EnergyJSON.write` through `JSONStreamWriter`): the bytes must be those of building the
/// whole report at once from links priced at the capture's end.
@Suite("Energy report: compact rows, printed as it is made")
struct EnergyStreamingTests {
    static func streamed(_ indent: Int?, _ body: (JSONStreamWriter) -> Void) -> String {
        var out = ""
        body(JSONStreamWriter(indent: indent) { out += $0 })
        return out
    }

    @Test("the stream writer writes byte for byte what serialising the whole value writes")
    func writerMatchesSerialisation() {
        let leaf: JSONValue = .object([("a", .int(1)), ("b", .string("x\"y\n")), ("c", .null), ("d", .array([])),
                                       ("e", .object([])), ("f", .number("1.50")), ("g", .bool(true))])
        let members: [(String, JSONValue)] = [("head", leaf), ("empty", .object([])), ("list", .array([leaf, .int(2)]))]
        for indent in [2, nil] as [Int?] {
            // An object whose members and arrays are given one by one, at the top and nested one level down.
            let whole = JSONValue.object(members + [("items", .array([leaf, .array([]), leaf]))] + members)
            let object = Self.streamed(indent) { w in
                w.object { m in
                    for (key, value) in members { m.member(key, value) }
                    m.array("items", [leaf, .array([]), leaf]) { $0 }
                    for (key, value) in members { m.member(key, value) }
                }
            }
            #expect(object == whole.serialized(indent: indent))
            #expect(Self.streamed(indent) { $0.object { _ in } } == JSONValue.object([]).serialized(indent: indent))
            #expect(Self.streamed(indent) { w in w.array([Int](), { .int($0) }) } == JSONValue.array([]).serialized(indent: indent))
            // An array whose elements the caller writes, each at the level below (`btlens energy` on several files).
            let nested = Self.streamed(indent) { w in
                var array = w.elements()
                array.next()
                w.object(level: array.level + 1) { m in m.array("items", [1, 2]) { .int($0) } }
                array.next()
                w.value(whole, level: array.level + 1)
                array.close()
            }
            let expected = JSONValue.array([.object([("items", .array([.int(1), .int(2)]))]), whole])
            #expect(nested == expected.serialized(indent: indent))
        }
    }

    @Test("a link's row holds its summary in 160 bytes (the link itself is let go); a phase's is 104; both plain bytes")
    func rowSizes() {
        // What `energy` writes per judged link to its spill, and holds per link still open at the capture's end.
        #expect(MemoryLayout<EnergyReport.LinkTable.Row>.stride <= 160)
        #expect(MemoryLayout<EnergyReport.LinkTable.PhaseRow>.stride <= 104)
        #expect(MemoryLayout<EnergyReport.LinkTable.PhaseRow>.stride < MemoryLayout<EnergyReport.Phase>.stride)
        // Set aside as their bytes and read back: nothing in them may be a reference.
        #expect(_isPOD(EnergyLinkRows.Header.self) && _isPOD(EnergyReport.LinkTable.PhaseRow.self))
    }

    /// The capture's energy report, its links priced at the capture's end or (`window`) as they are judged and
    /// then let go but for their summaries, each as soon as the next finishes.
    /// `spillDirectory`: the judged links' rows set aside in a file there (nil: in memory).
    static func report(_ path: String, window: Int?, spillDirectory: String? = nil,
                       rows made: ((EnergyLinkRows) -> Void)? = nil) throws -> EnergyReport {
        let capture = try CaptureInputs.resolve(path)[0].open()
        let energy = EnergyModel()
        var options = TrackerOptions.withoutAdvertisers
        options.connectionsWhileScanningListed = 0
        let rows = window.map { _ in EnergyLinkRows(energy: energy, spillDirectory: spillDirectory) }
        if let rows { made?(rows) }
        options.retirement = rows.map { $0.retirement(window: window ?? 0, letGoBatch: 1) }
        var collector = TrackingCollector(options: options)
        return EnergyReport(model: try capture.accept(&collector), energy: energy, rows: rows)
    }

    static var samples: [String] { LinkRetirementTests.samples }

    @Test("real captures: the same JSON from rows judged as links close and links let go but for their summaries",
          arguments: RealCaptures.names)
    func real(name: String) throws {
        let path = RealCaptures.directory.appendingPathComponent(name).path
        let atEnd = try Self.report(path, window: nil), early = try Self.report(path, window: 1)
        #expect(EnergyJSON.object(file: name, report: early).serialized() == EnergyJSON.object(file: name, report: atEnd).serialized(), "\(name)")
        #expect(zip(atEnd.links, early.links).allSatisfy { $0.qualityReports.count == $1.qualityReports.count })
    }

    @Test("thousands of short links: the same report with judged links' rows set aside in a file and read back")
    func manyLinks() throws {
        let directory = try TemporaryDirectory()
        let path = try LinkRetirementTests.manyLinksFile(in: directory)
        var rows: EnergyLinkRows?
        let atEnd = try Self.report(path, window: nil)
        let early = try Self.report(path, window: 16, spillDirectory: directory.path) { rows = $0 }
        #expect(early.links.count == LinkRetirementTests.links)
        let json = EnergyJSON.object(file: "many", report: atEnd).serialized()
        #expect(EnergyJSON.object(file: "many", report: early).serialized() == json)
        #expect(EnergyText.render(file: "many", report: early, side: .both) == EnergyText.render(file: "many", report: atEnd, side: .both))
        // The rows went to a file (its name already removed: nothing is left in the directory), and memory kept
        // only each judged link's place in it.
        let spilled = try #require(rows)
        #expect(spilled.records.isFile && spilled.records.spillFailure == nil && spilled.records.failure == nil)
        #expect(spilled.records.spilledBytes >= Int64(LinkRetirementTests.links - 16) * Int64(MemoryLayout<EnergyLinkRows.Header>.stride))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix(".btlens-rows") })
        #expect(early.links.judged.count >= LinkRetirementTests.links - 16 && early.links.others.count <= 16)
        // A directory it cannot write in: the rows stay in memory and the report is the same.
        var fallback: EnergyLinkRows?
        let inMemory = try Self.report(path, window: 16, spillDirectory: directory.path + "/missing") { fallback = $0 }
        #expect(fallback?.records.isFile == false && fallback?.records.spillFailure?.contains("missing") == true)
        #expect(EnergyJSON.object(file: "many", report: inMemory).serialized() == json)
    }

    @Test("samples: the same text and JSON from rows judged as links close, printed as they are made", arguments: samples)
    func sample(name: String) throws {
        let path = "samples/" + name
        let atEnd = try Self.report(path, window: nil), early = try Self.report(path, window: 1)
        #expect(atEnd.links.count == early.links.count)
        let json = EnergyJSON.object(file: name, report: atEnd).serialized()
        #expect(Self.streamed(2) { EnergyJSON.write(file: name, report: early, to: $0) } == json, "\(name): JSON")
        var lines: [String] = []
        EnergyText.write(file: name, report: early, side: .both, full: true) { lines.append($0) }
        #expect(lines.joined(separator: "\n") == EnergyText.render(file: name, report: atEnd, side: .both, full: true), "\(name): text")
        for (a, b) in zip(atEnd.links, early.links) {
            #expect(a.connection.id == b.connection.id && a.phases.count == b.phases.count && a.phone == b.phone)
            #expect(a.peripheral == b.peripheral && a.radio == b.radio && a.heard == b.heard)
            #expect(a.qualityReports.count == b.qualityReports.count)
            // Phases tile the link, each starting where the previous one ended.
            #expect(b.phases.first?.start == b.start && b.phases.last?.end == b.end)
            for (p, q) in zip(b.phases, b.phases.dropFirst()) { #expect(p.end == q.start) }
        }
    }
}
