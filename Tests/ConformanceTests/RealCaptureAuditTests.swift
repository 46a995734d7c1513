import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
import BTReport
import TestSupport

/// The audit over every real capture: no crash, and exactly the reviewed findings below, rule by rule. Each was
/// checked against the capture's bytes (btlens decode / tshark); the reason is next to it.
@Suite("Real captures: audit")
struct RealCaptureAuditTests {
    /// Findings per capture by rule id. Captures not listed must have none.
    static let expected: [String: [String: Int]] = [
        // Extended scanning (0x2042) with filter_dup 0 (Android: vendor commands 0xfd5x), 13 sessions each
        // delivering more than 100 reports of devices already reported: one 13 s session 977 redundant reports
        // (74 per second, a warning); the twelve others 2.5–2.7 per second for 55–404 s (info: a trickle, but
        // each still over the 100-report floor). Until issue 17 sessions under 1 report per device per second
        // were not judged; the rule now counts what reached the host.
        "android_obex_scan_nanosec_h4phdr.pcap": ["BTL002": 13],
        // Scan Enable(1) with filter_dup 0 at interval = window (duty 100 %) stays on for 135 s after the LE
        // Enhanced Connection Complete (record 554 area); Read By Group Type 0x0001-0xffff; characteristics of
        // 0x1826 and 0xfee7 discovered, the app only writes/subscribes in 0xfff0, so 2 of 3 services unused.
        // Since issue 17 the 139 s duplicates-off session with APCF filters offloaded (0xfd57) is reported as
        // info: 330 reports of devices already reported passed the filters (2.4 per second).
        "horizon74_treadmill_btsnoop_hci.log": ["BTL001": 1, "BTL002": 1, "BTL003": 1, "BTL004": 1],
        // gatttool-style full discovery of ten services; four services' characteristics never used.
        "mi_band4_gatt_h4phdr.pcap": ["BTL003": 1, "BTL004": 1],
        // Read By Group Type 0x0001-0xffff on connection 0x0002 found GAP, GATT and 0xae00, and the app uses
        // 0xae00: sweeping the range was the cheapest way to find its one service, so since issue 17 no BTL003.
        // A 1.8 s duplicates-off scan with APCF filters delivered 118 reports of devices already reported
        // (66 per second): BTL002, which needed 5 s before issue 17.
        "oneplus6_pets_ae00_uart_btsnoop_hci.log": ["BTL002": 1],
        // Classic headset, but LE scanning with filter_dup 0 reports the same device 2–8 times a second for
        // 29 s, 263 s (error: over 60 s) and 37 s.
        "oppo_earbuds_classic_hfp_avrcp_btsnoop.log": ["BTL002": 3],
        // Four connections to 7C:BB:8A:CB:0C:8D in 40 s (handles 0x0004–0x0007), three with full discovery;
        // scanning restarted after the disconnects at 21.26 s and 38.31 s before reconnecting; the last link
        // idles 50 s to the end of the capture. Connection #4 reads Battery Level, so it used every service it
        // discovered: BTL003 on #1 and #2 only since issue 17 (they left Battery unused).
        "pokemongo_plus_pairing_btsnoop.log": ["BTL003": 2, "BTL004": 3, "BTL006": 1, "BTL007": 2, "BTL008": 2,
                                               "BTL009": 1],
        // Three BR/EDR Create Connection attempts end in Page Timeout (0x04); two LE links to D8:0B:CB:62:5C:2B
        // with full discovery each, a rescan in between, 15 ms intervals idle for 24 s and 94 s, the second
        // still up at the end.
        "xiaomi_wx_vband_smartpen_btsnoop_hci.log": ["BTL003": 2, "BTL004": 2, "BTL006": 1, "BTL007": 1,
                                                     "BTL008": 1, "BTL009": 1, "BTL011": 2],
        // Air capture (issue 19), judged as the central's (an iPhone): Read By Group Type 0x0001-0xffff found six
        // services (tshark frames 998, 1002), the phone never touched Device Information or Nordic DFU (BTL003)
        // and discovered Device Information's characteristics (BTL004); after LL_CONNECTION_UPDATE_IND to 15 ms
        // (latency 4) at instant 147 the link carried no ATT for 5.9 s (BTL011). The sniffer decrypted the link
        // (legacy pairing), so nothing was hidden.
        "nrfsniffer_ble_mouse_hid_pairing.pcapng": ["BTL003": 1, "BTL004": 1, "BTL011": 1],
        // Air capture of SweynTooth's attack tool: 52 CONNECT_INDs to 00:A0:50:00:00:03, each link discovering
        // the whole database again (BTL003 on each discovery of all services, BTL008 on every reconnection),
        // characteristics of unused services on 8 (BTL004), 36 connections within two minutes (BTL009). The
        // tool behaves as a wasteful central; the findings describe it. The other air captures have no findings:
        // their links carried ciphertext without the key (the rules that judge an absence of traffic skip them)
        // or used what they discovered.
        "sweyntooth_psoc6_llid_crash_misnamed.pcapng": ["BTL003": 56, "BTL004": 8, "BTL008": 51, "BTL009": 1],
        // Background scan (duty 10 %) on through both connections to the lock; full discovery twice. Since
        // issue 17: the 5.9 s session with filter_dup 0 delivered 12 reports from one device (10 redundant, no
        // flood: no BTL002), and both links use the lock's one service (58af3dca-…), so no BTL003.
        "yeelock_smartlock_btsnoop_hci.log": ["BTL001": 2, "BTL004": 2, "BTL008": 1],
    ]

    @Test("the reviewed findings, and nothing else", arguments: RealCaptures.names)
    func findings(name: String) throws {
        let capture = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(name).path)
        var collector = TrackingCollector()
        let model = try capture.accept(&collector)
        let findings = Auditor().audit(model, file: name)
        var got: [String: Int] = [:]
        for f in findings { got[f.id, default: 0] += 1 }
        #expect(got == (Self.expected[name] ?? [:]), "\(findings.map { "\($0.id) \($0.message)" })")
        for f in findings {
            #expect(!f.records.isEmpty)
            #expect(f.records.allSatisfy { $0.number >= 1 && $0.number <= model.records })
        }
    }

    @Test("audit JSON follows audit.schema.json and SARIF the SARIF 2.1.0 schema", arguments: RealCaptures.names)
    func reportsFollowSchemas(name: String) throws {
        let capture = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(name).path)
        var collector = TrackingCollector()
        let model = try capture.accept(&collector)
        let run = AuditRun(captures: [AuditedCapture(file: name, findings: Auditor().audit(model, file: name), records: model.records,
                                                     connections: model.connections.count)],
                           failOn: .warning, version: "test")
        try SchemaValidation.validate(AuditJSON.render(run), schema: "Sources/BTReport/Schemas/audit.schema.json")
        // ../shared/schemas sits beside ../shared/captures/real.
        let sarifSchema = RealCaptures.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schemas/sarif-schema-2.1.0.json").path
        try SchemaValidation.validate(AuditSARIF.render(run), schema: sarifSchema)
    }

    @Test("every finding of a capture has a fingerprint of its own", arguments: RealCaptures.names)
    func fingerprints(name: String) throws {
        let capture = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(name).path)
        var collector = TrackingCollector()
        let model = try capture.accept(&collector)
        // Every rule's own output, before the auditor's de-duplication could hide two that share a fingerprint.
        let findings = RuleRegistry.all.flatMap { rule in
            rule.init().evaluate(model, context: RuleContext(description: rule.description, overrides: [:]))
        }
        let repeated = Dictionary(grouping: findings.map(\.fingerprint), by: { $0 }).filter { $0.value.count > 1 }.keys
        #expect(repeated.isEmpty, "\(repeated.sorted())")
        #expect(Auditor().audit(model, file: name).count == findings.count)
    }
}
