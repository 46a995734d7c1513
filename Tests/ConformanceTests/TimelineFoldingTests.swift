import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
import BTScenario
@testable import BTReport
import TestSupport

/// Long timelines fold what repeats (`TimelineFolding`): within a connection, the lines whose description is the
/// same once times and counts are taken out read as their first occurrence and one "N × every ~P over D: …"
/// line (an exchange's lines share it); lines that differ stay; links alike read as the first and one entry.
/// `--full` (`full: true`) keeps every line.
@Suite("Timeline folding of repeated lines and alike links")
struct TimelineFoldingTests {
    @Test("a line's key has its times and counts taken out, its values and settings kept")
    func keys() {
        let k = TimelineFolding.key
        #expect(k("peer: 3 writes handle 0x001b at 3.2 Hz over 631 ms") == "peer: writes handle 0x001b")
        #expect(k("peer: 1 write handle 0x001b") == "peer: writes handle 0x001b")
        #expect(k("phone's server: 1 notification handle 0x001e, last 02 10 00")
                == "phone's server: notifications handle 0x001e, last 02 10 00")
        #expect(k("phone's server: 4 notifications handle 0x001e at 1500 Hz over 2 ms, last 02 10 00")
                == "phone's server: notifications handle 0x001e, last 02 10 00")
        #expect(k("1 write without response handle 0x0025") == k("76 writes without response handle 0x0025 at 30.5 Hz over 2.4 s"))
        #expect(k("1 read by type handle 0x0001") == "reads by type handle 0x0001")
        #expect(k("idle 1m 47s (no ATT traffic)") == "idle (no ATT traffic)")
        #expect(k("idle 35.5 s (no ATT traffic)") == k("idle 5h 2m (no ATT traffic)"))
        #expect(k("discovery: characteristics 0x000a-0x000a: 0 found in 1 request, 61 ms")
                == "discovery: characteristics 0x000a-0x000a: 0 found")
        #expect(k("Read By Group Type Request unanswered before the next request (504 ms)")
                == "Read By Group Type Request unanswered before the next request")
        // A value, a setting and a handle are the description.
        #expect(k("parameters now interval 30 ms latency 0 timeout 4000 ms") == "parameters now interval 30 ms latency 0 timeout 4000 ms")
        #expect(k("1 notification handle 0x0018, last 01") != k("1 notification handle 0x0018, last 02"))
        #expect(k("1 notification handle 0x0018") != k("1 notification handle 0x0019"))
        #expect(k("data length tx 251 rx 251 octets") == "data length tx 251 rx 251 octets")
        #expect(k("EATT: 2 of 5 bearers opened (host asked), MTU 64") == "EATT: 2 of 5 bearers opened (host asked), MTU 64")
    }

    /// Two to three hours of the same exchange every minute or two on one link (the phone's server notifies, the peer writes
    /// back, then the link idles), one minute where the peer reads instead; before it, four short connections
    /// to four sensors that each read the battery level once.
    static let scenario = Scenario(name: "fold-test", summary: "an exchange every minute for 90 minutes", seed: 0x464F_4C44) { s in
        s.setUpController()
        let parameters = ConnectionParameters.interval(minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50),
                                                       timeoutMicroseconds: Micros.seconds(4))
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(100))
        for (i, last) in [0x01, 0x02, 0x03, 0x04].enumerated() {
            let peer = PeerAddress(BDAddr(rawValue: 0xC0_FF_EE_00_00_00 | UInt64(last)), type: LEParameter.randomAddress)
            let link = s.connect(to: peer, handle: UInt16(0x0041 + i), parameters: parameters, scanInterval: scanInterval,
                                 scanWindow: scanInterval)
            let att = ATTChannel(script: s, connection: link, server: GATTServer(database: SampleProfiles.heartRateSensor,
                                                                                  rxMTU: UInt16(ATTPDU.defaultMTU)), clientSide: .local)
            if let level = att.server.database.characteristic(GATTUUID.batteryLevel) { _ = att.read(level.valueHandle) }
            s.wait(ms: 300)
            s.disconnect(link)
            s.wait(seconds: 20)
        }
        let link = s.connect(to: SampleDevices.laptopCentral, handle: 0x0040, parameters: parameters, scanInterval: scanInterval,
                             scanWindow: scanInterval)
        let server = GATTServer(database: SampleProfiles.phoneDemo, rxMTU: UInt16(ATTPDU.defaultMTU))
        let att = ATTChannel(script: s, connection: link, server: server, clientSide: .remote)
        guard let status = server.database.characteristic(uuid: SampleProfiles.demoStatus),
              let control = server.database.characteristic(uuid: SampleProfiles.demoControl),
              let name = server.database.characteristic(GATTUUID.deviceName) else { return }
        for minute in 0..<exchanges {
            if minute == 45 {
                _ = att.read(name.valueHandle)
            } else {
                att.notify(handle: status.valueHandle, value: [0x01, 0x10])
                s.wait(ms: 200)
                for step in 0..<(1 + minute % 3) {
                    att.write(control.valueHandle, value: [0x10, 0x20, UInt8(step)])
                    s.wait(ms: 100)
                }
            }
            // A minute or two, not a clock's: the exchanges are no regular series the tracker would sum up itself.
            s.pause(Micros.ms(20_000)...Micros.ms(140_000))
        }
        s.disconnect(link)
    }
    static let exchanges = 90

    static func text(full: Bool, window: Int? = nil) throws -> String {
        let dir = try TemporaryDirectory()
        let path = dir.file("fold.btsnoop")
        try scenario.write(to: path)
        let lines = window.map { _ in TimelineLinkLines() }
        var options = TrackerOptions()
        options.retirement = lines.map { lines in
            LinkRetirement(window: window ?? 1, keeping: .summary, interest: Auditor().linkJudgement().interest) { c, kept in
                if kept { lines.keep(c) }
            }
        }
        var collector = TrackingCollector(options: options)
        let model = try OpenedCapture.open(path: path).accept(&collector)
        return TimelineReport.text(file: "fold.btsnoop", model: model, full: full, judged: lines)
    }

    @Test("a generated link's exchange every minute or two for almost two hours reads as one line; the line that differs stays; --full lists each")
    func generatedLink() throws {
        let short = try Self.text(full: false)
        let full = try Self.text(full: true)
        let lines = short.split(separator: "\n")
        let fullLines = full.split(separator: "\n")
        // Every exchange in --full: a notification and writes (one to three) each minute but one.
        #expect(fullLines.filter { $0.contains("phone's server: 1 notification handle") }.count == Self.exchanges - 1, "\(full)")
        #expect(fullLines.count > 3 * Self.exchanges)
        // Folded: the first exchange as it was, then one line with its count and period for the notification and
        // the peer's writes; the idle gaps one line; the read at minute 45 where it was.
        let folds = lines.filter { $0.contains(" × every ~") }
        #expect(folds.count == 2, "\(short)")
        let exchange = try #require(folds.first { $0.contains("phone's server: notifications handle 0x000e, last 01 10; peer: writes handle 0x0011") })
        #expect(exchange.contains("  89 × every ~1m 15s over 1h 50m: "), "\(exchange)")
        #expect(folds.contains { $0.contains(" × every ~") && $0.hasSuffix(": idle (no ATT traffic)") }, "\(short)")
        #expect(lines.filter { $0.contains("peer: 1 read ") }.count == 1, "\(short)")
        let connection = try #require(lines.firstIndex { $0.hasPrefix("Connection #5") })
        let first = try #require(lines[connection...].firstIndex { $0.contains("phone's server: 1 notification handle") })
        #expect(lines[first + 1].contains("peer: 1 write handle"), "the first exchange is kept as it was")
        #expect(lines.count < 40, "\(short)")
        // The four short connections alike (other peers): the first, then one entry.
        #expect(lines.contains("Connections like #1  ×3 more: #2, #3, #4"), "\(short)")
        #expect(short.contains("the same events as #1 with 3 peers (C0:FF:EE:00:00:02, C0:FF:EE:00:00:03, C0:FF:EE:00:00:04)"))
        #expect(!lines.contains { $0.hasPrefix("Connection #2 ") } && fullLines.contains { $0.hasPrefix("Connection #2 ") })
    }

    @Test("links judged and set aside as they close fold as those printed from the model")
    func judgedLinksFoldTheSame() throws {
        #expect(try Self.text(full: false, window: 1) == Self.text(full: false))
    }

    @Test("a timeline with nothing repeated is as it was")
    func nothingRepeated() throws {
        let path = try writeScenario("heart-rate-session")
        var collector = TrackingCollector()
        let model = try OpenedCapture.open(path: path).accept(&collector)
        #expect(TimelineReport.text(file: "x", model: model) == TimelineReport.text(file: "x", model: model, full: true))
    }
}
