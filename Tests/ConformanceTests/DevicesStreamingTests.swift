import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTReport
import TestSupport

/// `btlens devices --json` writes its object as it is made (`DevicesJSON.write`): an advertiser, a scan and each
/// connection a scan saw come up at a time. The bytes must be those of serialising the whole object.
@Suite("Devices JSON written as it is made")
struct DevicesStreamingTests {
    static func expectSame(_ path: String, _ name: String) throws {
        for input in try CaptureInputs.resolve(path) {
            let capture = try input.open()
            var collector = TrackingCollector(options: TrackerOptions())
            let model = try capture.accept(&collector)
            let report = DevicesReport(file: name, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
            for indent in [2, nil] as [Int?] {
                var streamed = ""
                DevicesJSON.write(report, to: JSONStreamWriter(indent: indent) { streamed += $0 })
                #expect(streamed == DevicesJSON.object(report).serialized(indent: indent), "\(name), indent \(String(describing: indent))")
            }
        }
    }

    @Test("samples", arguments: LinkRetirementTests.samples)
    func sample(name: String) throws { try Self.expectSame("samples/" + name, name) }

    @Test("real captures", arguments: RealCaptures.names)
    func real(name: String) throws {
        try Self.expectSame(RealCaptures.directory.appendingPathComponent(name).path, name)
    }

    @Test("a scan that saw thousands of connections come up (and one that saw none), each written as it comes")
    func manyConnections() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new-peers.btsnoop")
        try LinkRetirementTests.newPeers.write(to: path)
        try Self.expectSame(path, "new-peers")
        // An array of objects, each written member by member, empty or not, at the top or nested.
        for indent in [2, nil] as [Int?] {
            for items in [[], [1], [1, 2, 3]] {
                var out = ""
                let writer = JSONStreamWriter(indent: indent) { out += $0 }
                writer.object { m in
                    m.member("a", .int(0))
                    m.objects("items", items) { i, o in
                        o.member("i", .int(i))
                        o.array("list", 0..<i) { .int($0) }
                    }
                }
                let whole = JSONValue.object([("a", .int(0)), ("items", .array(items.map { i in
                    .object([("i", .int(i)), ("list", .array((0..<i).map { .int($0) }))])
                }))])
                #expect(out == whole.serialized(indent: indent))
            }
        }
    }
}
