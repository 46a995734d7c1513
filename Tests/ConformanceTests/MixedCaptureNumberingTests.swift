import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
@testable import BTReport
import BTScenario
import TestSupport

/// A pcapng holding an HCI log and an air sniffer's capture (Wireshark's mergecap of the two): the model numbers HCI
/// and air links together by when they started, once the capture is read. Links judged as they close are named by
/// their number when judged (findings' messages, energy rows, the timeline's records), so judging must not run
/// ahead of a renumbering (`ConnectionTracker.airLinksJoin`).
@Suite("HCI and air links in one capture: numbers as links are judged")
struct MixedCaptureNumberingTests {
    /// `hci` and `air` (classic pcaps) as one pcapng, the air capture moved to start just before the HCI packet at
    /// `fraction` of the HCI log.
    static func merged(hci: [UInt8], air: [UInt8], at fraction: Double) throws -> [UInt8] {
        let hciTimes = try PcapngConversion.packetTimes(hci), airTimes = try PcapngConversion.packetTimes(air)
        let start = hciTimes[Int(Double(hciTimes.count - 1) * fraction)] - 1000
        return try PcapngConversion.merge([hci, air], shiftedBy: [0, Int64(bitPattern: start &- airTimes[0])])
    }

    /// The capture's text timeline and audit JSON, links judged at the end (`window` nil) or as they close.
    static func reports(_ path: String, window: Int?) throws -> (timeline: String, audit: String) {
        let timeline = try TimelineLinkLinesTests.text(path, window: window, letGoBatch: 64)
        let audit = try LinkRetirementTests.audit(path, window: window)
        return (timeline, audit.report)
    }

    static func capture(airAt fraction: Double, in directory: TemporaryDirectory) throws -> String {
        let hci = directory.file("many-links.pcap"), air = directory.file("heart-rate.air.pcap")
        try LinkRetirementTests.manyLinks.write(to: hci, format: .pcapH4WithDirection)
        try #require(ScenarioRegistry.named("heart-rate-session")).write(to: air, format: .air272)
        let path = directory.file("mixed-\(fraction).pcapng")
        try Data(try Self.merged(hci: try TemporaryDirectory.contents(of: hci), air: try TemporaryDirectory.contents(of: air),
                             at: fraction)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("the sniffer's first record before any link was judged: no link is judged early, the reports are those of judging at the end")
    func airFirst() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.capture(airAt: 0.001, in: directory)
        let atEnd = try Self.reports(path, window: nil)
        let early = try Self.reports(path, window: 16)
        #expect(early.timeline == atEnd.timeline)
        #expect(early.audit == atEnd.audit)
        // Tracked on one thread too (the link tracker hears of the sniffer directly, not through the link feed).
        for policy in [LinkThreadPolicy.never, .always] {
            #expect(try LinkRetirementTests.audit(path, window: 16, linkThread: policy).report == atEnd.audit, "\(policy)")
        }
        // Both kinds of link are there, numbered by when they started: the air link among the first.
        let headings = atEnd.timeline.split(separator: "\n").filter { $0.hasPrefix("Connection #") }
        #expect(headings.count == LinkRetirementTests.links + 1)
        let air = try #require(headings.firstIndex { $0.contains("  air  ") })
        #expect(air < 16)
    }

    @Test("the sniffer's first record after links were judged: they keep their numbers, the air link is numbered after every HCI link")
    func airAfterJudging() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.capture(airAt: 0.5, in: directory)
        let atEnd = try Self.reports(path, window: nil).timeline
        let early = try Self.reports(path, window: 16).timeline
        let headings = early.split(separator: "\n").filter { $0.hasPrefix("Connection #") }
        #expect(headings.count == LinkRetirementTests.links + 1)
        #expect(headings.enumerated().allSatisfy { $0.element.hasPrefix("Connection #\($0.offset + 1) ") }, "numbered in order")
        #expect(headings.last?.contains("  air  ") == true)
        // Each link's part of the report is the one judging at the end gives it, but for the numbers (and the blank
        // line that separates it from the next).
        func parts(_ text: String) throws -> [String] {
            let number = try Regex("#[0-9]+")
            return text.components(separatedBy: "\nConnection #").dropFirst().map { part in
                let text = String(part.drop { $0.isNumber }.replacing(number, with: "#N"))
                return text.hasSuffix("\n") ? String(text.dropLast()) : text
            }.sorted()
        }
        #expect(try parts(early) == parts(atEnd))
        #expect(early != atEnd, "judging at the end numbers the air link among the HCI links")
    }
}
