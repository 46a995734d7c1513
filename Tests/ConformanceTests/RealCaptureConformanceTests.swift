import Foundation
import Testing
import BTCapture
import BTDecode
import BTReport

/// Compares `btlens stats --json` with what Wireshark's tshark 4.0 decodes in the real captures of
/// ../shared/captures/real (expected/NAME.json). The captures are not the project's to ship, so they are
/// read from ../shared beside the repository; without it this suite says so on stderr and checks nothing else.
enum RealCaptures {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/captures/real")

    static var available: Bool { FileManager.default.fileExists(atPath: directory.appendingPathComponent("MANIFEST.tsv").path) }

    /// Capture file names that have an expected/NAME.json.
    static let names: [String] = {
        guard available else {
            FileHandle.standardError.write(Data("""
                NOTE: \(directory.path) is absent: the real-capture conformance comparison with tshark was NOT run.\n
                """.utf8))
            return []
        }
        let expected = directory.appendingPathComponent("expected")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: expected.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    static func expected(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("expected/\(name).json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func stats(_ name: String) throws -> (CaptureInfo, CaptureStatistics, [String: Any]) {
        let capture = try OpenedCapture.open(path: directory.appendingPathComponent(name).path)
        var collector = StatisticsCollector()
        let statistics = try capture.accept(&collector)
        let json = StatisticsJSON.object(file: name, info: capture.info, statistics: statistics).serialized()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return (capture.info, statistics, object)
    }
}

/// Where btlens and tshark disagree on purpose, and why (checked against the bytes).
enum KnownDifferences {
    /// ATT PDUs tshark finds in a Qualcomm controller's debug log (ACL header 0x2EDC, handle 0x0edc), by
    /// opcode: its first two bytes are a counter that tshark reads as an L2CAP length and CID, so the packet
    /// whose counter is 4 is "ATT". btlens does not decode the log as L2CAP.
    static let attInControllerDebugLog: [String: [String: Int]] = [
        // Record 132: `0a 00 f0 …` after a counter of 0x0004, "Read Request handle 0xf000".
        "xiaomi_wx_vband_smartpen_btsnoop_hci.log": ["0x0a": 1],
        // The same on handle 0x0edc: one debug-log packet each whose counter reads as "Read Request".
        "infocar_obd_ble_midconn_nanosec_h4phdr.pcap": ["0x0a": 1],
        "oppo_earbuds_samsung_bt_hci.cfa": ["0x0a": 1],
    ]

    /// LE air-sniffer captures (linktypes 256, 272, PPI): their ATT opcodes are compared with tshark's ranges
    /// (expected-ll/) by `AirCaptureConformanceTests`, which knows retransmissions and encryption.
    static func isAirCapture(_ info: CaptureInfo) -> Bool {
        guard let l = info.format.linktype, info.format.isPcapFamily else { return false }
        return Linktype.isLinkLayerSniffer(l)
    }
}

/// Maps with zero-count or missing entries compare equal (tshark omits empty maps' keys).
private func counts(_ value: Any?) -> [String: Int] {
    ((value as? [String: Any]) ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }.filter { $0.value != 0 }
}

@Suite("Real captures against tshark 4.0")
struct RealCaptureConformanceTests {
    @Test("the real-capture set is present and complete", .enabled(if: RealCaptures.available))
    func manifestCovered() throws {
        #expect(RealCaptures.names.count == 40)
    }

    @Test("stats --json equals tshark's counts", arguments: RealCaptures.names)
    func statsMatch(name: String) throws {
        let expected = try RealCaptures.expected(name)
        let (info, statistics, got) = try RealCaptures.stats(name)

        #expect(got["records"] as? Int == expected["records"] as? Int, "records")
        for key in ["first_timestamp", "last_timestamp"] {
            let e = (expected[key] as? NSNumber)?.doubleValue
            let g = (got[key] as? NSNumber)?.doubleValue
            #expect((e == nil) == (g == nil), "\(key) presence")
            if let e, let g { #expect(abs(e - g) < 1e-6, "\(key): tshark \(e), btlens \(g)") }
        }
        let eh = expected["hci"] as? [String: Any] ?? [:]
        let gh = got["hci"] as? [String: Any] ?? [:]
        for key in ["commands", "events", "le_subevents"] {
            #expect(counts(gh[key]) == counts(eh[key]), "hci.\(key)")
        }
        #expect(counts(got["acl_packets"]) == counts(expected["acl_packets"]), "acl_packets")
        #expect(got["advertising_reports"] as? Int == expected["advertising_reports"] as? Int, "advertising_reports")
        if KnownDifferences.isAirCapture(info) {
            // tshark's HCI counts have no connections on the air; `connections` and `disconnections` then count
            // the links followed and LL_TERMINATE_IND (checked against the tracker and tshark's control counts by
            // `AirCaptureTrackingTests`).
            #expect(expected["connections"] as? Int == 0 && counts(expected["disconnections"]).isEmpty)
        } else {
            #expect(got["connections"] as? Int == expected["connections"] as? Int, "connections")
            #expect(counts(got["disconnections"]) == counts(expected["disconnections"]), "disconnections")
        }

        if KnownDifferences.isAirCapture(info) {
            #expect(statistics.recordsByKind[Int(RecordKind.linkLayer.rawValue)] == statistics.records)
        } else {
            var want = counts(expected["att"])
            for (opcode, n) in KnownDifferences.attInControllerDebugLog[name] ?? [:] { want[opcode, default: 0] -= n }
            #expect(counts(got["att"]) == want.filter { $0.value != 0 }, "att")
        }
    }

    /// Android's snoop log records a Qualcomm controller's debug log as ACL data on handle 0x0edc; tshark counts
    /// these as ACL packets (so does btlens) and dissects them as L2CAP (btlens does not).
    @Test("Qualcomm controller debug-log packets are ACL, but no L2CAP and no link", .enabled(if: RealCaptures.available))
    func controllerDebugLog() throws {
        let (_, xiaomi, _) = try RealCaptures.stats("xiaomi_wx_vband_smartpen_btsnoop_hci.log")
        #expect(xiaomi.controllerDebugLog == 92)
        let (_, oppo, json) = try RealCaptures.stats("oppo_earbuds_classic_hfp_avrcp_btsnoop.log")
        #expect(oppo.controllerDebugLog == 2074)  // the manifest's "2074 frames outside any known connection"
        #expect(json["controller_debug_log_packets"] as? Int == 2074)
    }

    /// BTstack's PacketLogger files carry BTstack's own daemon events (codes 0x60–0x8F, e.g. `6e 00`) as
    /// type-01 records. They are real records of unknown event codes; btlens and tshark both count them.
    @Test("BTstack daemon events count as events", .enabled(if: RealCaptures.available))
    func btstackDaemonEvents() throws {
        let (_, statistics, _) = try RealCaptures.stats("btstack_hfp_sco.pklg")
        #expect(statistics.events[0x6E] == 4416)
        #expect(statistics.events[0x6F] == 8717)
    }

    @Test("a header-only btsnoop file has no records and null timestamps", .enabled(if: RealCaptures.available))
    func headerOnly() throws {
        let (info, statistics, got) = try RealCaptures.stats("oppo_earbuds_header_only_empty.cfa")
        #expect(info.format == .btsnoop(datalink: BTSnoopDatalink.h4))
        #expect(statistics.records == 0)
        #expect(got["first_timestamp"] is NSNull)
    }

    @Test("content decides the format, not the file name", .enabled(if: RealCaptures.available))
    func misnamed() throws {
        let (info, _, _) = try RealCaptures.stats("esp32_bredr_lmp_sniffer_misnamed.pcapng")
        #expect(info.format == .pcap(linktype: Linktype.bluetoothHCIH4WithPHDR))
        let (psoc, _, _) = try RealCaptures.stats("sweyntooth_psoc6_llid_crash_misnamed.pcapng")
        #expect(psoc.format == .pcap(linktype: Linktype.nordicBLE))
        let (a2dp, _, _) = try RealCaptures.stats("a2dp_lg_hbs750_headset_btsnoop.cap")
        #expect(a2dp.format == .btsnoop(datalink: BTSnoopDatalink.h4))
    }

    @Test("nanosecond pcapng keeps nine digits", .enabled(if: RealCaptures.available))
    func nanosecondTimestamps() throws {
        let (info, _, got) = try RealCaptures.stats("crackle_le_secure_connections_llrf.pcapng")
        #expect(info.timestampDigits == 9)
        #expect("\(got["first_timestamp"] ?? "")".hasPrefix("905224.953861"))
    }
}
