import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTReport
import TestSupport

/// `timeline --json` sets each finished link's object aside when the link is judged (`TimelineLinkJSON`) and
/// writes its report as it is made; `gatt` gathers each peer's GATT as links are judged (`GATTPeers`). Both let the
/// links go: the bytes must be those of the whole model's report.
@Suite("timeline --json and gatt: links let go as they are judged, the same report")
struct TimelineGATTStreamingTests {
    /// The capture tracked whole (`retirement` nil), or with each link judged as soon as the next finishes.
    static func model(_ path: String, retirement: LinkRetirement? = nil) throws -> CaptureModel {
        let capture = try CaptureInputs.resolve(path)[0].open()
        var options = TrackerOptions.withoutAdvertisers
        options.scanDevicesListed = ScanSessionJSON.topDeviceCount
        options.retirement = retirement
        var collector = TrackingCollector(options: options)
        return try capture.accept(&collector)
    }

    static func judging(window: Int = 1, _ body: @escaping (Connection) -> Void) -> LinkRetirement {
        LinkRetirement(window: window, keeping: .summary, interest: nil, letGoBatch: 1) { c, kept in if kept { body(c) } }
    }

    static func streamed(_ body: (JSONStreamWriter) -> Void) -> String {
        var out = ""
        body(JSONStreamWriter { out += $0 })
        return out
    }

    /// Compares the streamed, let-go reports of `path` with the whole model's; `spillDirectory` sets the objects
    /// aside in a file there.
    static func compare(_ path: String, name: String, window: Int = 1, spillDirectory: String? = nil,
                        connection: Int? = nil) throws {
        let whole = try model(path)
        let objects = TimelineLinkJSON(connectionFilter: connection, spillDirectory: spillDirectory)
        let early = try model(path, retirement: judging(window: window) { objects.keep($0) })
        let expected = TimelineReport.json(file: name, model: whole, connectionFilter: connection)
        let top = streamed { TimelineReport.writeJSON(file: name, model: early, connectionFilter: connection, judged: objects, to: $0) }
        #expect(top == expected.serialized(), "\(name)")
        // In an array of captures, one level down.
        let nested = streamed { w in
            var array = w.elements()
            array.next()
            TimelineReport.writeJSON(file: name, model: early, connectionFilter: connection, judged: objects, to: w, level: 1)
            array.close()
        }
        #expect(nested == JSONValue.array([expected]).serialized(), "\(name) in an array")
        guard connection == nil else { return }
        let peers = GATTPeers()
        let gatt = try model(path, retirement: judging(window: window) { peers.add($0) })
        for c in gatt.connections where !c.isJudged { peers.add(c) }
        let list = peers.list()
        #expect(GATTReport.json(file: name, peers: list).serialized() == GATTReport.json(file: name, model: whole).serialized(), "\(name)")
        #expect(GATTReport.text(file: name, peers: list) == GATTReport.text(file: name, model: whole), "\(name)")
        #expect(streamed { GATTReport.writeJSON(file: name, peers: list, to: $0) } == GATTReport.json(file: name, model: whole).serialized())
    }

    @Test("real captures: the same timeline JSON and GATT trees with links judged as they close", arguments: RealCaptures.names)
    func real(name: String) throws {
        try Self.compare(RealCaptures.directory.appendingPathComponent(name).path, name: name)
    }

    @Test("samples: the same timeline JSON (also for one connection) and GATT trees", arguments: LinkRetirementTests.samples)
    func sample(name: String) throws {
        try Self.compare("samples/" + name, name: name)
        try Self.compare("samples/" + name, name: name, connection: 1)
    }

    @Test("thousands of short links: the objects go to a file, memory keeps their places, nothing is left behind")
    func manyLinks() throws {
        let directory = try TemporaryDirectory()
        let path = try LinkRetirementTests.manyLinksFile(in: directory)
        try Self.compare(path, name: "many", window: 16, spillDirectory: directory.path)
        let objects = TimelineLinkJSON(spillDirectory: directory.path)
        let early = try Self.model(path, retirement: Self.judging(window: 16) { objects.keep($0) })
        #expect(objects.records.isFile && objects.records.count >= LinkRetirementTests.links - 16)
        // The model holds no more than the window's worth of links whole.
        #expect(early.connections.filter { !$0.isJudged }.count <= 16)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix(".btlens") })
    }
}
