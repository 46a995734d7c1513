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
    /// `hci` (classic pcap, linktype 201) and `air` (classic pcap) as one pcapng, two interfaces, packets in time
    /// order; the air capture moved to start just before the HCI packet at `fraction` of the HCI log.
    static func merged(hci: [UInt8], air: [UInt8], at fraction: Double) -> [UInt8] {
        struct Packet {
            var time: UInt64
            var interface: UInt32
            var bytes: ArraySlice<UInt8>
        }
        func u32(_ b: [UInt8], _ o: Int) -> UInt32 {
            UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24
        }
        /// Little-endian classic pcap (what the scenario tools write): its linktype and packets (microseconds).
        func packets(_ b: [UInt8], interface: UInt32) -> (linktype: UInt32, [Packet]) {
            let nanoseconds = u32(b, 0) == 0xA1B2_3C4D
            var out: [Packet] = []
            var o = 24
            while o + 16 <= b.count {
                let length = Int(u32(b, o + 8))
                let fraction = UInt64(u32(b, o + 4))
                out.append(Packet(time: UInt64(u32(b, o)) * 1_000_000 + (nanoseconds ? fraction / 1000 : fraction),
                                  interface: interface, bytes: b[o + 16 ..< min(b.count, o + 16 + length)]))
                o += 16 + length
            }
            return (u32(b, 20), out)
        }
        let (hciType, hciPackets) = packets(hci, interface: 0)
        var (airType, airPackets) = packets(air, interface: 1)
        let start = hciPackets[Int(Double(hciPackets.count - 1) * fraction)].time - 1
        let shift = Int64(bitPattern: start &- airPackets[0].time)
        for i in airPackets.indices { airPackets[i].time = UInt64(Int64(bitPattern: airPackets[i].time) + shift) }
        let all = (hciPackets + airPackets).sorted { ($0.time, $0.interface) < ($1.time, $1.interface) }

        var out = ByteWriter(capacity: hci.count + air.count * 2)
        var body = ByteWriter()
        func block(_ type: UInt32) {
            while body.count % 4 != 0 { body.u8(0) }
            out.u32(type)
            out.u32(UInt32(12 + body.count))
            out.bytes += body.bytes
            out.u32(UInt32(12 + body.count))
            body.reset()
        }
        body.u32(0x1A2B_3C4D)  // section header: byte order, version 1.0, length unknown
        body.u16(1)
        body.u16(0)
        body.u64(.max)
        block(0x0A0D_0D0A)
        for linktype in [hciType, airType] {  // interface descriptions: microsecond timestamps by default
            body.u16(UInt16(linktype))
            body.u16(0)
            body.u32(0)
            block(1)
        }
        for p in all {  // enhanced packet blocks
            body.u32(p.interface)
            body.u32(UInt32(truncatingIfNeeded: p.time >> 32))
            body.u32(UInt32(truncatingIfNeeded: p.time))
            body.u32(UInt32(p.bytes.count))
            body.u32(UInt32(p.bytes.count))
            body.bytes += p.bytes
            block(6)
        }
        return out.bytes
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
        try Data(Self.merged(hci: try TemporaryDirectory.contents(of: hci), air: try TemporaryDirectory.contents(of: air),
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
