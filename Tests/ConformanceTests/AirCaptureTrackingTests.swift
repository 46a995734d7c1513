import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTReport
import TestSupport

/// Air captures through the tracking layer: connections followed from CONNECT_IND (or their access address),
/// updates at their instants, procedures, disconnect reasons and GATT trees, checked against tshark's decode of
/// the same frames (cited below) and against `stats`. Without ../shared this suite checks nothing (the NOTE of
/// `RealCaptures` says so).
@Suite("Air captures: tracking")
struct AirCaptureTrackingTests {
    static func model(_ name: String) throws -> CaptureModel { try RealCaptureTrackingTests.model(name) }

    static func services(_ c: Connection) -> [String] {
        c.gatt.services.map { "\(Hex.u16($0.startHandle))-\(Hex.u16($0.endHandle)) \($0.uuid)" }
    }

    /// Seconds from the link's CONNECT_IND to the event at `instant`: the first anchor comes 1.25 ms plus the
    /// transmit window offset after the CONNECT_IND ends, then one interval per event [Core Vol 6 Part B §4.5.3].
    static func instantOffset(_ instant: Int, intervalMilliseconds: Double) -> Double {
        (1.25 + Double(instant) * intervalMilliseconds) / 1000
    }

    @Test("stats and tracking agree on every air capture: links followed, LL_TERMINATE_IND reasons, ATT PDUs",
          arguments: AirCaptures.names)
    func statsAgree(name: String) throws {
        let model = try Self.model(name)
        let (_, statistics, _) = try RealCaptures.stats(name)
        let expected = try AirCaptures.expected(name)
        #expect(model.isAirCapture)
        #expect(statistics.connections == model.connections.count)
        #expect(model.connections.allSatisfy { $0.air != nil && $0.role == .central && $0.transport == .le })
        // Each LL_TERMINATE_IND closed a link with its reason; tshark's control count of 0x02 bounds them.
        var reasons: [Int: Int] = [:]
        for c in model.connections { if let r = c.disconnectReason { reasons[Int(r.rawValue), default: 0] += 1 } }
        let stated = Dictionary(uniqueKeysWithValues: CaptureStatistics.nonZero(statistics.disconnections).map { ($0.code, $0.count) })
        #expect(reasons == stated)
        let terminations = stated.values.reduce(0, +)
        if let bounds = (expected["control"] as? [String: Any])?["0x02"] as? [NSNumber] {
            #expect(terminations >= bounds[0].intValue && terminations <= bounds[1].intValue)
        } else {
            #expect(terminations == 0)
        }
        // Every complete ATT PDU `stats` counts belongs to a followed link.
        let tracked = model.connections.reduce(0) { $0 + $1.attOpcodeCounts.total }
        #expect(tracked == statistics.att.reduce(0, +))
        // Links end by LL_TERMINATE_IND, silence past the supervision timeout (inferred), or the capture's end.
        for c in model.connections where !c.isOpen {
            #expect(c.disconnectReason != nil || c.air?.endInferred == true, "connection #\(c.id)")
        }
    }

    /// tshark: CONNECT_IND frame 4403 (AA 0x5065536b, 30 ms, timeout 720 ms); LL_PHY_UPDATE_IND to 2M at
    /// instant 13; Read By Group Type Responses 4455 (0x0001-0x0009 1800, 0x000a-0x000d 1801), 4463 (0x000e-0x0013
    /// 6a4e8022-…), 4471 (0x0014-0x002a 6a4e2800-…); 4460, 4468 and 4478 answer the watch's discovery of the
    /// phone's database (both are clients) and are not the link's database. LE Secure Connections pairing, then
    /// LL_START_ENC_REQ; the sniffer has no key, so the rest is ciphertext, and the link goes silent.
    @Test("garmin watch: parameters, PHY at its instant, pairing, encryption, the watch's services, link lost",
          .enabled(if: RealCaptures.available))
    func garmin() throws {
        let model = try Self.model("nrfsniffer_garmin_watch.pcapng")
        let c = try #require(model.connections.first)
        #expect(model.connections.count == 1)
        #expect(c.air?.accessAddress == 0x5065_536B)
        #expect(c.peerAddress == BDAddr("D1:5C:F0:EE:02:8F") && c.air?.centralAddress == BDAddr("40:63:DE:11:1C:3D"))
        #expect(c.initialParameters == ConnectionParameters(interval: 24, latency: 0, supervisionTimeout: 72))
        let phy = try #require(c.events.first { if case .phyChanged(2, 2) = $0.kind { true } else { false } })
        // Frame 4444 is the first of event 13 (the sniffer's event counter), 0.393 s after the CONNECT_IND.
        #expect(phy.at.number == 4444)
        let offset = (phy.at.timestamp - c.start.timestamp).seconds
        #expect(abs(offset - Self.instantOffset(13, intervalMilliseconds: 30)) < 0.030, "PHY change \(offset) s after CONNECT_IND")
        #expect(c.events.contains { if case .pairing(.pairingRequest, true, _) = $0.kind { true } else { false } })
        #expect(c.encrypted && c.hidesTraffic)
        #expect(Self.services(c) == ["0x0001-0x0009 1800", "0x000a-0x000d 1801",
                                     "0x000e-0x0013 6a4e8022-667b-11e3-949a-0800200c9a66",
                                     "0x0014-0x002a 6a4e2800-667b-11e3-949a-0800200c9a66"])
        #expect(c.air?.endInferred == true && c.disconnectReason == nil)
        #expect(c.mtu == 226)
        let air = try #require(c.airStatistics)
        #expect(air.events > 150 && air.crcErrors > 0 && air.encryptedPDUs > 0)
    }

    /// tshark: services in Read By Group Type Responses 998 and 1002; LL_PHY_UPDATE_IND at instant 16,
    /// LL_LENGTH_REQ/RSP 251/251, LL_CONNECTION_UPDATE_IND (15 ms, latency 4, 1 s) at instant 147; legacy
    /// pairing the sniffer decrypted, so the encrypted part reads as plaintext (HID reports notified).
    @Test("HID mouse: updates at their instants, data length, the mouse's services, notifications after encryption",
          .enabled(if: RealCaptures.available))
    func mouse() throws {
        let model = try Self.model("nrfsniffer_ble_mouse_hid_pairing.pcapng")
        let c = try #require(model.connections.first)
        #expect(model.connections.count == 1)
        #expect(Self.services(c) == ["0x0001-0x0007 1800", "0x0008-0x000b 1801", "0x000c-0x0016 180a",
                                     "0x0017-0x001d 180f", "0x001e-0x0031 1812", "0x0032-0x003a fe59"])
        let change = try #require(c.events.first { if case .parametersChanged = $0.kind { true } else { false } })
        guard case .parametersChanged(let p) = change.kind else { return }
        #expect(p == ConnectionParameters(interval: 12, latency: 4, supervisionTimeout: 100))
        // Frame 1309 is the first of event 147 (the sniffer's event counter); the PHY change at instant 16 is
        // frame 985. The events come 30–32 ms apart as the sniffer times them, so the time is checked loosely.
        #expect(change.at.number == 1309)
        let phy = try #require(c.events.first { if case .phyChanged = $0.kind { true } else { false } })
        #expect(phy.at.number == 985)
        let offset = (change.at.timestamp - c.start.timestamp).seconds
        #expect(abs(offset - Self.instantOffset(147, intervalMilliseconds: 30)) < 0.060, "update \(offset) s after CONNECT_IND")
        #expect(c.maxTxOctets == 251 && c.maxRxOctets == 251)
        #expect(c.phases.count == 3)
        #expect(c.usage[0x0022]?.notifications == 69)
        #expect(!c.hidesTraffic && c.isOpen)
        // Frame 1280's Write Request gets no response the sniffer heard before frame 1287's next one.
        let lines = TimelineReport.eventLines(c).map(\.text)
        #expect(lines.contains { $0.hasPrefix("Write Request CCCD of Report (2a4d) [0x0023] unanswered before the next request") })
        #expect(!lines.contains { $0.contains("when the link ended") })
        let last = try #require(c.air?.phases.last)
        #expect(last.events > 1000 && (last.emptyEventShare ?? 0) > 0.9)
    }

    /// tshark frames 16, 20, 24, 28: 1800/1801/180a then a8b3fff0-…, a8b3ffe0-…, f000ffc0-… (to 0xffff).
    @Test("WHAD: the connection's services and its four parameter phases", .enabled(if: RealCaptures.available))
    func whad() throws {
        let model = try Self.model("whad_ble_pairing_llphdr.pcap")
        let c = try #require(model.connections.first)
        #expect(Array(Self.services(c).suffix(3)) == ["0x001f-0x002f a8b3fff0-4834-4051-89d0-3de95cddd318",
                                                      "0x0030-0x0039 a8b3ffe0-4834-4051-89d0-3de95cddd318",
                                                      "0x003a-0xffff f000ffc0-0451-4000-b000-000000000000"])
        #expect(c.phases.compactMap { $0.parameters?.interval } == [36, 6, 36, 6])
    }

    /// CONNECT_IND at 100 ms, timeout 20 s; both sides run LL_LENGTH_REQ/RSP, three times in all, to 251/251;
    /// LE Secure Connections pairing (Just Works) from the central, then LL_START_ENC_REQ without the key.
    @Test("bsniffhub: both sides' data length procedures are one change; pairing, then encryption without the key",
          .enabled(if: RealCaptures.available))
    func bsniffhub() throws {
        let model = try Self.model("bsniffhub_sc_justworks_llphdr.pcapng")
        let c = try #require(model.connections.first)
        #expect(c.initialParameters == ConnectionParameters(interval: 80, latency: 0, supervisionTimeout: 2000))
        let lengthProcedures = c.events.filter { if case .linkLayerControl(.lengthRsp, _) = $0.kind { true } else { false } }
        let changes = c.events.filter { if case .dataLengthChanged = $0.kind { true } else { false } }
        #expect(lengthProcedures.count == 3 && changes.count == 1 && c.maxTxOctets == 251 && c.maxRxOctets == 251)
        #expect(c.events.contains { if case .pairing(.pairingRequest, true, _) = $0.kind { true } else { false } })
        #expect(c.encrypted && c.hidesTraffic)
    }

    /// Frame 82: AUX_CONNECT_REQ on secondary channel 34 (interval 40 ms, timeout 1 s) after extended advertising.
    @Test("bsniffhub: a link requested by AUX_CONNECT_REQ", .enabled(if: RealCaptures.available))
    func auxiliaryConnectRequest() throws {
        let model = try Self.model("bsniffhub_aux_connect_req_ext_adv_llphdr.pcap")
        let c = try #require(model.connections.first)
        #expect(model.connections.count == 1 && c.start.number == 82)
        #expect(c.air?.auxiliaryRequest == true && c.air?.accessAddress == 0x961D_F41D)
        #expect(c.initialParameters == ConnectionParameters(interval: 32, latency: 0, supervisionTimeout: 100))
        #expect(TimelineReport.eventLines(c).first?.text.hasPrefix("AUX_CONNECT_REQ: central 75:58:72:08:CE:5C") == true)
    }

    /// 52 CONNECT_INDs with the same access address; 8 LL_TERMINATE_IND (0x13) from the attack tool (central).
    @Test("SweynTooth psoc6: every CONNECT_IND starts a link afresh; terminations from the central",
          .enabled(if: RealCaptures.available))
    func psoc6() throws {
        let model = try Self.model("sweyntooth_psoc6_llid_crash_misnamed.pcapng")
        #expect(model.connections.count == 52)
        let terminated = model.connections.filter { $0.disconnectReason == .remoteUserTerminatedConnection }
        #expect(terminated.count == 8 && terminated.allSatisfy(\.disconnectRequestedLocally))
        #expect(model.connections.allSatisfy { $0.air?.accessAddress == 0x9A32_8370 && !$0.implicitStart })
    }

    @Test("the advertiser table from advertising PDUs", .enabled(if: RealCaptures.available))
    func advertisers() throws {
        let model = try Self.model("nrfsniffer_garmin_watch.pcapng")
        #expect(model.advertisers.contains { $0.address == BDAddr("D1:5C:F0:EE:02:8F") })
        #expect(model.scans.isEmpty)
    }
}

/// nRF v2 records carry the µs from the end of the previous packet; btlens rebuilds each start from them
/// (`SnifferClock`). bsniffhub wrote this capture's pcap times from the same sniffer clock (frames 300–301: 80 µs
/// empty PDU, then a delta of 99,673 µs, pcap times 99,753 µs apart), so the rebuilt times must equal the pcap
/// times, to their µs resolution, for every packet after the first.
@Suite("Air captures: sniffer time")
struct AirCaptureSnifferTimeTests {
    @Test("nRF v2 deltas rebuilt equal bsniffhub's own packet times", .enabled(if: RealCaptures.available))
    func rebuiltDeltas() throws {
        let path = RealCaptures.directory.appendingPathComponent("bsniffhub_encrypted_501_missing_nordic.pcap").path
        let capture = try DecodedAirCapture.load(path)
        let first = try #require(capture.packets.first)
        #expect(capture.packets.count > 1000)
        let off = capture.packets.dropFirst().filter { p in
            let rebuilt = (p.snifferNanoseconds - first.snifferNanoseconds) / 1000
            return abs(rebuilt - (p.microseconds - first.microseconds)) > 1
        }
        #expect(off.isEmpty, "\(off.count) packets off, first at \(off.first.map { String($0.microseconds) } ?? "-")")

        // The same file with its pcap times jittered by up to ±200 µs, as a host's USB arrival times are: the
        // rebuilt times do not move, so they come from the deltas, not the pcap times.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 24, n = 0
        while offset + 16 <= bytes.count {
            let u32 = { (o: Int) in Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24 }
            let microseconds = u32(offset + 4), captured = u32(offset + 8)
            if microseconds >= 200, microseconds < 999_800 {
                let jittered = UInt32(microseconds + (n * 37) % 401 - 200)
                withUnsafeBytes(of: jittered.littleEndian) { for i in 0..<4 { bytes[offset + 4 + i] = $0[i] } }
            }
            offset += 16 + captured
            n += 1
        }
        let jitteredPath = FileManager.default.temporaryDirectory.appendingPathComponent("btlens-jitter-\(getpid()).pcap").path
        try Data(bytes).write(to: URL(fileURLWithPath: jitteredPath))
        defer { try? FileManager.default.removeItem(atPath: jitteredPath) }
        let jittered = try DecodedAirCapture.load(jitteredPath)
        #expect(jittered.packets.count == capture.packets.count)
        func gaps(_ c: DecodedAirCapture) -> [Int64] {
            zip(c.packets.dropFirst(), c.packets).map { $0.snifferNanoseconds - $1.snifferNanoseconds }
        }
        let moved = zip(gaps(jittered), gaps(capture)).filter { $0 != $1 }.count
        // Only where the chain breaks is the pcap time used: bsniffhub writes a delta of 0 on the first packet
        // of the connection (frame 6), and the record 501 of the file's name is missing.
        #expect(moved <= 4, "\(moved) packets moved with their pcap time")
    }

    @Test("SweynTooth's v2 deltas are all 0: its packets keep their pcap times", .enabled(if: RealCaptures.available))
    func zeroDeltas() throws {
        let path = RealCaptures.directory.appendingPathComponent("sweyntooth_stm_att_deadlock_nordic.pcap").path
        let capture = try DecodedAirCapture.load(path)
        #expect(capture.packets.count > 100)
        #expect(capture.packets.allSatisfy { $0.snifferNanoseconds / 1000 == $0.microseconds })
    }
}
