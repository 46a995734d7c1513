import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTRules
import BTReport
import BTScenario
import TestSupport

/// `btlens anonymize`: the copy keeps what an analysis needs (counts, connections, the GATT tree, the findings)
/// and loses who and what (addresses, names, data, values, keys).
@Suite("anonymize")
struct AnonymizeTests {
    static let scenarios = ["wasteful-central", "heart-rate-session", "peripheral-role", "beacons", "eatt-logger",
                            "fragmented-acl", "connection-churn"]

    static func anonymize(_ path: String, to output: String) throws -> AnonymizingCopier.Result {
        let writer = try BTSnoopWriter(path: output, datalink: BTSnoopDatalink.h4)
        var copier = AnonymizingCopier(writer: writer)
        let result = try OpenedCapture.open(path: path).accept(&copier)
        try writer.finish()
        return result
    }

    static func model(_ path: String) throws -> CaptureModel {
        var collector = TrackingCollector()
        return try OpenedCapture.open(path: path).accept(&collector)
    }

    static func stats(_ path: String) throws -> String {
        var statistics = StatisticsCollector()
        let capture = try OpenedCapture.open(path: path)
        return StatisticsJSON.object(file: "x", info: capture.info, statistics: try capture.accept(&statistics)).serialized()
    }

    /// The GATT tree without values and peer addresses.
    static func structure(_ model: CaptureModel) -> [String] {
        GATTReport.text(file: "x", model: model).split(separator: "\n")
            .filter { !$0.contains("last value") && !$0.hasPrefix("Peer") }.map(String.init)
    }

    static func addressBytes(_ a: BDAddr) -> [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: a.rawValue >> (8 * UInt64($0))) }  // as HCI carries it
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == first && Array(haystack[i..<i + needle.count]) == needle { return true }
            i += 1
        }
        return false
    }

    @Test("same counts, connections, GATT structure and findings; no address or name left", arguments: scenarios)
    func safeToShare(scenario: String) throws {
        let dir = try TemporaryDirectory()
        let original = try ScenarioFixtures.path(scenario)
        let copy = dir.file("shared.btsnoop")
        let result = try Self.anonymize(original, to: copy)
        #expect(result.leftOut == 0)
        #expect(try Self.stats(copy) == Self.stats(original))

        let before = try Self.model(original), after = try Self.model(copy)
        #expect(after.connections.map(\.handle) == before.connections.map(\.handle))
        #expect(after.connections.map(\.start) == before.connections.map(\.start))
        #expect(Self.structure(after) == Self.structure(before))
        let findings: (CaptureModel) -> [String] = { model in
            Auditor().audit(model, file: "x").map { "\($0.rule) \($0.severity) \($0.records.map(\.number))" }
        }
        #expect(findings(after) == findings(before))

        // No peer or advertiser address, no advertised name survives; pseudonyms keep a random address's kind.
        let bytes = try TemporaryDirectory.contents(of: copy)
        for (old, new) in zip(before.connections.compactMap(\.peerAddress), after.connections.compactMap(\.peerAddress)) {
            #expect(!Self.contains(bytes, Self.addressBytes(old)), "\(old) left in the copy")
            #expect(Self.addressBytes(old).last! & 0xC0 == Self.addressBytes(new).last! & 0xC0)
        }
        for advertiser in before.advertisers.prefix(50) {
            #expect(!Self.contains(bytes, Self.addressBytes(advertiser.address)), "\(advertiser.address) left in the copy")
            for name in advertiser.names where name.utf8.count >= 4 {
                #expect(!Self.contains(bytes, Array(name.utf8)), "name \(name) left in the copy")
            }
        }
    }

    @Test("pseudonyms are stable: one address, one pseudonym, across the capture")
    func stable() throws {
        let dir = try TemporaryDirectory()
        let copy = dir.file("shared.btsnoop")
        _ = try Self.anonymize(try ScenarioFixtures.path("wasteful-central"), to: copy)
        let model = try Self.model(copy)
        // Both connections of the scenario go to the same peer; so do their pseudonyms.
        let peers = Set(model.connections.compactMap(\.peerAddress).map(\.description))
        let originalPeers = Set(try Self.model(try ScenarioFixtures.path("wasteful-central")).connections.compactMap(\.peerAddress).map(\.description))
        #expect(peers.count == originalPeers.count)
    }

    @Test("keys and values are zeroed in place, lengths kept")
    func fields() {
        let anonymizer = Anonymizer()
        // ACL handle 0x0040, L2CAP CID 6: SMP Pairing Confirm with a 16-byte value.
        var smp: [UInt8] = [0x40, 0x20, 0x15, 0x00, 0x11, 0x00, 0x06, 0x00, 0x03] + (1...16).map { UInt8($0) }
        smp.withUnsafeMutableBytes { anonymizer.anonymize(kind: .acl, payload: $0) }
        #expect(smp.count == 25 && smp[8] == 0x03 && smp[9...].allSatisfy { $0 == 0 })
        // ATT Handle Value Notification on handle 0x000e: opcode and attribute handle kept, value zeroed.
        var att: [UInt8] = [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x1B, 0x0E, 0x00, 0x48, 0x49]
        att.withUnsafeMutableBytes { anonymizer.anonymize(kind: .acl, payload: $0) }
        #expect(att == [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x1B, 0x0E, 0x00, 0x00, 0x00])
        // Subscribing (CCCD write of 0x0001) is kept.
        var cccd: [UInt8] = [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x12, 0x0F, 0x00, 0x01, 0x00]
        let subscribed = cccd
        cccd.withUnsafeMutableBytes { anonymizer.anonymize(kind: .acl, payload: $0) }
        #expect(cccd == subscribed)
        // LE Long Term Key Request Reply: the LTK zeroed.
        var ltk: [UInt8] = [0x1A, 0x20, 0x12, 0x40, 0x00] + [UInt8](repeating: 0xAB, count: 16)
        ltk.withUnsafeMutableBytes { anonymizer.anonymize(kind: .command, payload: $0) }
        #expect(ltk[5...].allSatisfy { $0 == 0 })
        // An advertising report: address replaced keeping the static-random bits, the name replaced, the
        // manufacturer data zeroed after the company identifier (Apple, 0x004c).
        var report: [UInt8] = [0x3E, 0x00, 0x02, 0x01, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xC6]
        let data: [UInt8] = [0x06, 0x09] + Array("Polar".utf8) + [0x05, 0xFF, 0x4C, 0x00, 0x12, 0x34]
        report += [UInt8(data.count)] + data + [0xC0]
        report[1] = UInt8(report.count - 2)
        report.withUnsafeMutableBytes { anonymizer.anonymize(kind: .event, payload: $0) }
        #expect(report[11] & 0xC0 == 0xC0)
        #expect(Array(report[6..<12]) != [0x11, 0x22, 0x33, 0x44, 0x55, 0xC6])
        #expect(String(decoding: report[15..<20], as: UTF8.self) == "name-")
        #expect(Array(report[22..<26]) == [0x4C, 0x00, 0x00, 0x00])
    }
}
