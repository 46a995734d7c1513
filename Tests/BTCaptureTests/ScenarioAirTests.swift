import Foundation
import BTCapture
import BTDecode
import BTScenario
import BTWire
import Testing
import TestSupport

/// The air formats, read back by btlens's own link-layer decoder: what an air sniffer following the scenario's
/// links would have captured must tell the same story as the HCI capture (the same ATT PDUs, one CONNECT_IND
/// per connection), decode without a problem, keep the link layer's timing rules, and show exactly the
/// impairments that were planted.
@Suite struct ScenarioAirTests {
    static let scenarios = ScenarioRegistry.names
    static let impaired = AirImpairments(crcErrorRate: 0.04, retransmissionRate: 0.04)

    /// Writes `name` through an `AirSink` and returns the file and what the sink planted.
    static func write(_ name: String, _ format: ScenarioFormat, options: AirOptions = AirOptions(),
                      in dir: TemporaryDirectory) throws -> (path: String, tally: AirTally) {
        let scenario = try #require(ScenarioRegistry.named(name))
        var o = options
        if case .nordic = o.container, format == .air272 {} else { o.container = try #require(format.airContainer) }
        let path = dir.file("\(name).\(format.rawValue).\(o.seed).pcap")
        let sink = try AirSink(path: path, options: o)
        try scenario.run(into: sink)
        return (path, sink.tally)
    }

    static func attCounts(_ s: CaptureStatistics) -> [Int: Int] {
        Dictionary(uniqueKeysWithValues: s.att.enumerated().filter { $0.element > 0 }.map { ($0.offset, $0.element) })
    }

    /// The link-layer counts as one comparable value.
    static func linkLayer(_ s: CaptureStatistics) -> [String: [Int]] {
        let l = s.linkLayer
        return ["packets": [l.packets], "advertising": l.advertisingPDUs, "connect": [l.connectRequests],
                "crc": [l.crcErrors, l.crcUnchecked], "data": [l.dataPDUs, l.emptyPDUs, l.retransmissions, l.encryptedPDUs],
                "control": l.control, "att": s.att, "addresses": [l.dataAccessAddresses.count]]
    }

    /// LE (Enhanced) Connection Complete events with status Connection Failed to be Established (0x3E), from the
    /// HCI capture's bytes: event code, length, subevent, status.
    static func failedToEstablish(_ path: String) throws -> Int {
        let completes: Set<UInt8> = [LESubevent.connectionComplete.rawValue, LESubevent.enhancedConnectionComplete.rawValue,
                                     LESubevent.enhancedConnectionCompleteV2.rawValue]
        return try LoadedCapture.load(path).records.filter { r in
            r.kind == .event && r.payload.count >= 4 && r.payload[0] == HCIEventCode.leMeta.rawValue
                && completes.contains(r.payload[2]) && r.payload[3] == HCIStatus.connectionFailedToBeEstablished.rawValue
        }.count
    }

    @Test("every scenario as an nRF and a PHDR capture: no issue, the HCI capture's ATT PDUs, a CONNECT_IND per connection",
          arguments: scenarios, [ScenarioFormat.air272, .air256])
    func sameStoryAsHCI(name: String, format: ScenarioFormat) throws {
        let dir = try TemporaryDirectory()
        let hci = try hciStatistics(try writeScenario(name))
        let (path, tally) = try Self.write(name, format, in: dir)
        let air = try DecodedAirCapture.load(path)
        #expect(air.info.format == format.captureFormat)
        #expect(air.issues == 0)
        #expect(air.statistics.malformed == 0)
        #expect(Self.attCounts(air.statistics) == Self.attCounts(hci))
        let ll = air.statistics.linkLayer
        // An attempt that failed to be established (0x3E) is a CONNECT_IND too, and its central resent its first PDU.
        let failures = try Self.failedToEstablish(try writeScenario(name))
        #expect(tally.failedAttempts == failures)
        #expect(ll.connectRequests == hci.connections + failures)
        #expect(ll.connectRequests == tally.connectRequests)
        #expect(ll.crcErrors == 0 && ll.crcUnchecked == 0)
        // Resends: a failed attempt's central, and the central's empty PDU while the peripheral sleeps (latency).
        #expect(ll.retransmissions == tally.retransmissions)
        #expect(ll.packets == tally.packets)
        #expect(ll.advertisingPDUs.reduce(0, +) == tally.advertisingPDUs)
        #expect(ll.dataPDUs == tally.dataPDUs + tally.emptyPDUs)
        #expect(ll.encryptedPDUs == 0)  // the sniffer had the key
        #expect(ll.dataAccessAddresses.count == hci.connections + failures)
        #expect(air.statistics.connections == hci.connections)  // the failed attempts are not links followed
        // Every legacy advertising report is one PDU, plus the peripheral's ADV_IND before each CONNECT_IND.
        #expect(ll.advertisingPDUs.reduce(0, +) >= hci.advertisingReports)
        #expect(air.packets.allSatisfy { $0.crc == .good })
        #expect(zip(air.packets, air.packets.dropFirst()).allSatisfy { $0.microseconds <= $1.microseconds })
    }

    @Test("peripheral latency: an idle peripheral skips up to `latency` events, where only the central sends")
    func peripheralLatency() throws {
        let dir = try TemporaryDirectory()
        // heart-rate-session: interval 45 ms latency 0, then 150 ms latency 4 with a notification a second.
        let (path, _) = try Self.write("heart-rate-session", .air272, in: dir)
        let packets = try DecodedAirCapture.load(path).packets.filter { !$0.isAdvertising }
        #expect(packets.allSatisfy { $0.accessAddress == packets[0].accessAddress })
        // Per connection event (nRF counter, in order): did the peripheral answer, and when did it start.
        var events: [(start: Int64, answered: Bool)] = []
        var counter: UInt16?
        for p in packets {
            if p.eventCounter != counter {
                counter = p.eventCounter
                events.append((p.microseconds, false))
            }
            if p.direction == .peripheralToCentral { events[events.count - 1].answered = true }
        }
        var longestSkip = 0, run = 0, skipped = 0
        var firstSkip: Int64?
        for e in events {
            if e.answered { run = 0 } else {
                run += 1
                skipped += 1
                longestSkip = max(longestSkip, run)
                if firstSkip == nil { firstSkip = e.start }
            }
        }
        #expect(skipped > 100 && longestSkip == 4)
        // Only once latency 4 is in force (the update's instant, after the first 2.2 s).
        #expect((firstSkip ?? 0) - packets[0].microseconds > 900_000)
    }

    @Test("251 and PPI: no flags, so CRCs are recomputed and encrypted PDUs stay ciphertext", arguments: scenarios)
    func bareContainers(name: String) throws {
        let dir = try TemporaryDirectory()
        let hci = try hciStatistics(try writeScenario(name))
        for format in [ScenarioFormat.air251, .airPPI] {
            let (path, tally) = try Self.write(name, format, in: dir)
            let air = try DecodedAirCapture.load(path)
            #expect(air.issues == 0)
            let ll = air.statistics.linkLayer
            #expect(ll.crcErrors == 0 && ll.crcUnchecked == 0)
            #expect(ll.connectRequests == hci.connections + tally.failedAttempts)
            #expect(ll.encryptedPDUs == tally.encryptedPDUs)
            if tally.encryptedPDUs == 0 {
                #expect(Self.attCounts(air.statistics) == Self.attCounts(hci))
            } else {
                #expect(air.statistics.att.reduce(0, +) < hci.att.reduce(0, +))
            }
        }
    }

    @Test("planted CRC errors and retransmissions are counted exactly, and the ATT PDUs survive them",
          arguments: ["heart-rate-session", "wasteful-central", "peripheral-role", "fragmented-acl", "connection-churn"])
    func impairments(name: String) throws {
        let dir = try TemporaryDirectory()
        let hci = try hciStatistics(try writeScenario(name))
        var counts: [[String: [Int]]] = []
        for format in ScenarioFormat.airFormats {
            let (path, tally) = try Self.write(name, format, options: AirOptions(impairments: Self.impaired), in: dir)
            #expect(tally.crcErrors > 0 && tally.retransmissions > 0)
            let air = try DecodedAirCapture.load(path)
            #expect(air.issues == 0)
            let ll = air.statistics.linkLayer
            #expect(ll.crcErrors == tally.crcErrors)
            #expect(ll.retransmissions == tally.retransmissions)
            #expect(air.packets.filter(\.isRetransmission).count == tally.retransmissions)
            if format == .air272 || format == .air256 {
                #expect(Self.attCounts(air.statistics) == Self.attCounts(hci))
                counts.append(Self.linkLayer(air.statistics))
            }
        }
        // nRF and PHDR decode to the same link-layer counts.
        #expect(counts.count == 2 && counts[0] == counts[1])
    }

    @Test("extended advertising: ADV_EXT_IND on a primary channel, AUX_ADV_IND and AUX_CHAIN_IND on secondary ones")
    func extendedAdvertising() throws {
        let dir = try TemporaryDirectory()
        var seen: [[String]] = []
        for format in [ScenarioFormat.air272, .air256] {
            let (path, _) = try Self.write("beacons", format, in: dir)
            let air = try DecodedAirCapture.load(path)
            let extended = air.packets.filter { $0.isAdvertising && $0.pdu.first.map { $0 & 0x0F } == 0x07 }
            #expect(extended.contains { $0.auxiliaryType == 0 } && extended.contains { $0.auxiliaryType == 1 })
            for p in extended {
                let secondary = (p.channel ?? 37) < 37
                #expect(secondary == (p.auxiliaryType != nil))
            }
            seen.append(extended.map { "\($0.channel ?? 99)/\($0.auxiliaryType.map(String.init) ?? "-")" })
        }
        #expect(seen.count == 2 && seen[0] == seen[1] && !seen[0].isEmpty)
    }

    @Test("the nRF header versions 0–3 decode to the same counts; all time packets by the sniffer's clock")
    func nordicVersions() throws {
        let dir = try TemporaryDirectory()
        var counts: [[String: [Int]]] = []
        for version: UInt8 in 0...3 {
            let options = AirOptions(container: .nordic(version: version, board: 0), impairments: Self.impaired)
            let (path, _) = try Self.write("fragmented-acl", .air272, options: options, in: dir)
            let air = try DecodedAirCapture.load(path)
            #expect(air.issues == 0)
            #expect(try TemporaryDirectory.contents(of: path)[20..<24] == [0x10, 0x01, 0, 0])  // linktype 272
            counts.append(Self.linkLayer(air.statistics))
            // v0–v2 deltas rebuilt, v3 firmware time: each packet where the generator put it (its pcap time).
            let off = air.packets.filter { $0.snifferNanoseconds / 1000 != $0.microseconds }
            #expect(off.isEmpty, "v\(version): \(off.count) packets off their time \(off.prefix(5).map { ($0.snifferNanoseconds / 1000 - $0.microseconds, $0.pdu.count, $0.phy) })")
        }
        #expect(Set(counts.map { "\($0.sorted { $0.key < $1.key })" }).count == 1)
    }

    @Test("same seed, same bytes; another seed, other access addresses")
    func determinism() throws {
        let dir = try TemporaryDirectory()
        let options = AirOptions(impairments: AirImpairments(crcErrorRate: 0.05, retransmissionRate: 0.05, missConnect: true))
        let a = try Self.write("heart-rate-session", .air272, options: options, in: dir)
        let other = try TemporaryDirectory()
        let b = try Self.write("heart-rate-session", .air272, options: options, in: other)
        #expect(try TemporaryDirectory.contents(of: a.path) == TemporaryDirectory.contents(of: b.path))
        #expect(a.tally == b.tally)
        var reseeded = options
        reseeded.seed ^= 1
        let c = try Self.write("heart-rate-session", .air272, options: reseeded, in: dir)
        let aa = Set(try DecodedAirCapture.load(a.path).packets.filter { !$0.isAdvertising }.map(\.accessAddress))
        let ca = Set(try DecodedAirCapture.load(c.path).packets.filter { !$0.isAdvertising }.map(\.accessAddress))
        #expect(aa.count == 1 && ca.count == 1 && aa != ca)
        #expect(aa.allSatisfy(AirSink.isValidAccessAddress))
    }

    @Test("a missed CONNECT_IND: the link is still followed, with one connect request fewer")
    func missedConnect() throws {
        let dir = try TemporaryDirectory()
        let hci = try hciStatistics(try writeScenario("wasteful-central"))
        let (path, tally) = try Self.write("wasteful-central", .air272,
                                           options: AirOptions(impairments: AirImpairments(missConnect: true)), in: dir)
        #expect(tally.connectRequestsDropped == 1)
        let air = try DecodedAirCapture.load(path)
        #expect(air.issues == 0)
        #expect(air.statistics.linkLayer.connectRequests == hci.connections - 1)
        #expect(air.statistics.linkLayer.dataAccessAddresses.count == hci.connections)
        #expect(Self.attCounts(air.statistics) == Self.attCounts(hci))
    }

    @Test("without the key the sniffer writes ciphertext: encrypted PDUs counted, their ATT not decoded")
    func encryptedWithoutKey() throws {
        let dir = try TemporaryDirectory()
        let hci = try hciStatistics(try writeScenario("peripheral-role"))
        for format in [ScenarioFormat.air272, .air256] {
            let (path, tally) = try Self.write("peripheral-role", format, options: AirOptions(decrypt: false), in: dir)
            let air = try DecodedAirCapture.load(path)
            #expect(air.issues == 0)
            #expect(tally.encryptedPDUs > 0)
            #expect(air.statistics.linkLayer.encryptedPDUs == tally.encryptedPDUs)
            #expect(air.statistics.att.reduce(0, +) < hci.att.reduce(0, +))
            // LL_ENC_REQ, LL_ENC_RSP and LL_START_ENC_REQ in plaintext; the LL_START_ENC_RSPs are encrypted.
            let control = air.statistics.linkLayer.control
            #expect(control[0x03] == 1 && control[0x04] == 1 && control[0x05] == 1 && control[0x06] == 0)
        }
    }

    /// Central packets that open each connection event, by event counter (nRF), of the one link in `packets`.
    static func eventStarts(_ packets: [DecodedAirPacket]) -> [(counter: UInt16, time: Int64, channel: UInt8)] {
        var starts: [(UInt16, Int64, UInt8)] = []
        var last: UInt16?
        for p in packets where !p.isAdvertising && p.direction == .centralToPeripheral {
            guard let c = p.eventCounter, c != last else { continue }
            starts.append((c, p.microseconds, p.channel ?? 0xFF))
            last = c
        }
        return starts
    }

    @Test("connection events every interval on CSA #1 channels; updates and PHY changes take effect at their instant")
    func timingAndInstants() throws {
        let dir = try TemporaryDirectory()
        // heart-rate-session updates its parameters; fragmented-acl changes PHY.
        for name in ["heart-rate-session", "fragmented-acl"] {
            let (path, _) = try Self.write(name, .air272, in: dir)
            let air = try DecodedAirCapture.load(path)
            let connects = air.packets.filter { $0.isAdvertising && $0.pdu.first.map { $0 & 0x0F } == 0x05 }
            #expect(!connects.isEmpty)
            var checkedUpdates = 0, checkedPHY = 0
            for connect in connects {
                let llData = Array(connect.pdu[14...])
                let aa = UInt32(llData[0]) | UInt32(llData[1]) << 8 | UInt32(llData[2]) << 16 | UInt32(llData[3]) << 24
                var interval = Int64(UInt16(llData[10]) | UInt16(llData[11]) << 8) * 1250
                let hop = Int(llData[21] & 0x1F)
                let link = air.packets.filter { $0.accessAddress == aa }
                let starts = Self.eventStarts(link)
                #expect(starts.count > 5)
                // Updates: (instant, new interval); PHY updates: instant.
                var updates: [UInt16: Int64] = [:]
                var phyInstants: [UInt16] = []
                for p in link where p.pdu.count >= 3 && p.pdu[0] & 0x03 == 0x03 && !p.isRetransmission {
                    let body = Array(p.pdu[3...])
                    if p.pdu[2] == 0x00 {
                        updates[UInt16(body[9]) | UInt16(body[10]) << 8] = Int64(UInt16(body[3]) | UInt16(body[4]) << 8) * 1250
                    } else if p.pdu[2] == 0x18 {
                        phyInstants.append(UInt16(body[2]) | UInt16(body[3]) << 8)
                    }
                }
                for (a, b) in zip(starts, starts.dropFirst()) {
                    // Channel selection #1 with every channel used: channel(k) = (k + 1) × hop mod 37.
                    #expect(Int(a.channel) == (Int(a.counter) + 1) * hop % 37)
                    let events = Int64(b.counter &- a.counter)
                    if let newInterval = updates[b.counter] {
                        // The instant's event opens at the old anchor plus the 1.25 ms transmit window delay.
                        #expect(b.time - a.time == interval * events + 1250)
                        interval = newInterval
                        checkedUpdates += 1
                    } else {
                        #expect(b.time - a.time == interval * events, "\(name) events \(a.counter)→\(b.counter)")
                    }
                }
                for instant in phyInstants {
                    let before = link.filter { ($0.eventCounter ?? 0) &- instant > 0x8000 }
                    let after = link.filter { ($0.eventCounter ?? 0) &- instant < 0x8000 }
                    #expect(!before.isEmpty && before.allSatisfy { $0.phy == .le1M })
                    #expect(!after.isEmpty && after.allSatisfy { $0.phy == .le2M })
                    checkedPHY += 1
                }
            }
            if name == "heart-rate-session" { #expect(checkedUpdates >= 1) }
            if name == "fragmented-acl" { #expect(checkedPHY >= 1) }
        }
    }

    @Test("each event: the central first, the peripheral T_IFS after the central's packet ends; SN and NESN alternate")
    func exchanges() throws {
        let dir = try TemporaryDirectory()
        let (path, _) = try Self.write("wasteful-central", .air256, in: dir)
        let air = try DecodedAirCapture.load(path)
        var previous: DecodedAirPacket?
        var pairs = 0
        for p in air.packets where !p.isAdvertising {
            defer { previous = p }
            guard let q = previous, !q.isAdvertising, q.accessAddress == p.accessAddress,
                  q.direction == .centralToPeripheral, p.direction == .peripheralToCentral else { continue }
            // 1M: 8 µs per byte, preamble, access address and CRC included.
            #expect(p.microseconds - q.microseconds == 8 * Int64(1 + 4 + q.pdu.count + 3) + 150)
            // The peripheral acknowledges the central's PDU (NESN = its SN + 1).
            #expect((p.pdu[0] >> 2 & 1) != (q.pdu[0] >> 3 & 1))
            pairs += 1
        }
        #expect(pairs > 1000)
    }

    @Test("the air benchmark: a capture of the requested size with advertising, links and ATT traffic")
    func bench() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("bench.pcap")
        let stats = try BenchmarkGenerator.writeAir(to: path, targetBytes: 1 << 20, options: AirOptions())
        #expect(stats.bytes >= 1 << 20 && stats.bytes < (1 << 20) + (1 << 18))
        #expect(try TemporaryDirectory.contents(of: path).count == Int(stats.bytes))
        let air = try DecodedAirCapture.load(path)
        #expect(air.issues == 0)
        let ll = air.statistics.linkLayer
        #expect(ll.connectRequests > 5 && ll.dataPDUs > 1000 && ll.advertisingPDUs.reduce(0, +) > 1000)
        #expect(air.statistics.att.reduce(0, +) > 500)
    }

    @Test("the fuzz seeds in Tests/Fuzz/Seeds are what the generator writes (see the README there)")
    func fuzzSeeds() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Seeds").path
        let dir = try TemporaryDirectory()
        let impairments = AirImpairments(crcErrorRate: 0.1, retransmissionRate: 0.1)
        var files: [(String, ScenarioFormat, AirOptions)] = [ScenarioFormat.air251, .air256, .airPPI].map {
            ("connection-churn.\($0.rawValue).pcap", $0, AirOptions(impairments: impairments))
        }
        for version: UInt8 in 0...3 {
            files.append(("connection-churn.air-272-v\(version).pcap", .air272,
                          AirOptions(container: .nordic(version: version, board: 0), impairments: impairments)))
        }
        for (name, format, options) in files {
            let (path, _) = try Self.write("connection-churn", format, options: options, in: dir)
            #expect(try TemporaryDirectory.contents(of: path) == TemporaryDirectory.contents(of: seeds + "/" + name), "\(name)")
        }
        // pcapng: the v3 seed as two sniffers with their own clocks, and an HCI sample as one interface.
        let samples = URL(fileURLWithPath: seeds).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples").path
        let converted = [("connection-churn.air-272-v3.two-interfaces.pcapng", seeds + "/connection-churn.air-272-v3.pcap", 2),
                         ("heart-rate-session.pcapng", samples + "/heart-rate-session.pcap", 1)]
        for (name, source, interfaces) in converted {
            let bytes = try PcapngConversion.convert(try TemporaryDirectory.contents(of: source), interfaces: interfaces)
            #expect(bytes == (try TemporaryDirectory.contents(of: seeds + "/" + name)), "\(name)")
        }
    }
}
