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
        // Issue 25: the extended scans (filter_dup 0) ran for an hour before the first APCF filter command
        // (frame 10134): whose scan they were cannot be told, so BTL002 does not judge them (the audit notes the
        // unattributed scanning); after it only the OS's filtered clients scan. The OBEX link is BR/EDR (left out).
        // Scan Enable(1) with filter_dup 0 at interval = window (duty 100 %) stays on for 135 s after the LE
        // Enhanced Connection Complete; the app's all-pass filter (index 1, frame 159) came with its Heart Rate
        // filter (index 8, frame 179) 57 ms later, and that client stayed installed after the connection (BTL001).
        // Read By Group Type 0x0001-0xffff; characteristics of 0x1826 and 0xfee7 discovered, the app only
        // writes/subscribes in 0xfff0, so 2 of 3 services unused. The app's 139 s duplicates-off scan passed 330
        // reports of devices already reported (2.4 per second): info.
        "horizon74_treadmill_btsnoop_hci.log": ["BTL001": 1, "BTL002": 1, "BTL003": 1, "BTL004": 1],
        // gatttool-style full discovery of ten services; four services' characteristics never used.
        "mi_band4_gatt_h4phdr.pcap": ["BTL003": 1, "BTL004": 1],
        // Read By Group Type 0x0001-0xffff on connection 0x0002 found GAP, GATT and 0xae00, and the app uses
        // 0xae00: sweeping the range was the cheapest way to find its one service, so since issue 17 no BTL003.
        // The app's 1.8 s unfiltered scan (all-pass filter) delivered 118 reports of devices already reported
        // (66 per second): BTL002.
        "oneplus6_pets_ae00_uart_btsnoop_hci.log": ["BTL002": 1],
        // Four connections to 7C:BB:8A:CB:0C:8D in 40 s (handles 0x0004–0x0007), three with full discovery.
        // Issue 25: the app's all-pass filter (index 1) was added and removed around each reconnection: BTL007
        // twice with the reports of the peer it delivered; its 100 % scan of 20 s while 0x0007 was up (frames
        // 790–821) is BTL001; 0x0006 ended with 0x3E (a failed attempt, BTL009's second finding) and is not
        // counted among the connections of the churn finding; 0x0007 has notifications on, so it waits rather
        // than lingers (no BTL006). Connection #4 reads Battery Level: BTL003 on #1 and #2 only.
        // The Service Changed CCCD the stack walks is not the app's unused descriptor: BTL004 on the links whose
        // Battery service went unused only.
        "pokemongo_plus_pairing_btsnoop.log": ["BTL001": 1, "BTL003": 2, "BTL004": 2, "BTL007": 2, "BTL008": 2,
                                               "BTL009": 2],
        // Two LE links to D8:0B:CB:62:5C:2B with full discovery each and a rescan in between. Issue 25: the three
        // Page Timeouts are BR/EDR paging (the OS's classic profiles), not app connections, so no BTL009; both
        // links idle with notifications on (subscribed at 95 s), waiting rather than lingering: no BTL006. But they
        // wait at 15 ms, latency 0 (24 s and 94 s without ATT): the subscription justifies the link, not the fast
        // interval (BTL011 on both).
        "xiaomi_wx_vband_smartpen_btsnoop_hci.log": ["BTL003": 2, "BTL004": 2, "BTL007": 1, "BTL008": 1, "BTL011": 2],
        // Air capture of SweynTooth's attack tool: 52 CONNECT_INDs to 00:A0:50:00:00:03, each link discovering
        // the whole database again (BTL003 on each discovery of all services, BTL008 on every reconnection),
        // characteristics of unused services on 8 (BTL004), 36 connections within two minutes (BTL009), and 15
        // links lost (the peripheral crashed) with a request pending (BTL010, issue 25).
        // Every churn episode is reported, not only the densest: two clusters of reconnections (BTL009 ×2).
        "sweyntooth_psoc6_llid_crash_misnamed.pcapng": ["BTL003": 56, "BTL004": 8, "BTL008": 51, "BTL009": 2, "BTL010": 15],
        // The central writes 0x0011 (refused: Write Not Permitted, frame 106, answering a request it overtook)
        // and sends Read By Group Type requests that are never answered; the link then goes silent (BTL010).
        "sweyntooth_stm_att_deadlock_nordic.pcap": ["BTL010": 1, "BTL012": 1],
        // Exchange MTU Request unanswered when the attacked peripheral went silent (BTL010).
        "sweyntooth_da14680_truncated_l2cap_nordic.pcap": ["BTL010": 1],
        // Issue 25: the app's all-pass filter (index 1) was removed (frame 430) before LE Create Connection (432);
        // the scan that ran on served the OS's filters (indexes 4, 10–14): no BTL001. Full discovery twice.
        // The only descriptors discovered and not used are the GATT service's Service Changed CCCD, which the
        // stack walks itself: no BTL004.
        "yeelock_smartlock_btsnoop_hci.log": ["BTL008": 1],
        // Air: Read By Type 0x2803 over 0x0001-0xffff without service discovery finds 19 characteristics, none used
        // before the central terminates (frames 200-231): BTL004.
        "bsniffhub_connection_update_llphdr.pcap": ["BTL004": 1],
        // Air: all five services discovered, Battery (180f) never used (BTL003, BTL004). One link: the connection
        // update to 1020 ms comes after a gap longer than the old 720 ms supervision timeout but within the new.
        "nrfsniffer_heart_rate_strap.pcapng": ["BTL003": 1, "BTL004": 1],
        // Air: a short link discovering the whole database; the vendor service is never used (BTL003, BTL004).
        "whad_ble_gatt_discovery_pcapng_misnamed.pcap": ["BTL003": 1, "BTL004": 1],
        // Twelve links to the Sphero robot: the continuous 10 % scan left on through them (BTL001 ×7), full discovery
        // on every link (BTL003, BTL004, BTL008), reconnection by scanning (BTL007 ×8, three with a scan started
        // just before the app's own disconnect), two churn episodes (BTL009), two requests pending when the link
        // was lost before ATT's timeout (BTL010, info), and fast links idling between keep-alives (BTL011 ×4).
        "sphero_mini_fw_update_btsnoop_hci.log": ["BTL001": 7, "BTL003": 15, "BTL004": 12, "BTL007": 8, "BTL008": 11,
                                                  "BTL009": 2, "BTL010": 2, "BTL011": 4],
        // The app's unfiltered scan (all-pass index 1) kept on after the disconnect re-finds the robot (BTL007); the
        // same scanner's 5.4 s across a parameter change floods 195 reports from at most 15 devices (BTL002) while
        // connected to nothing new (BTL001); the second link rediscovers the same database (BTL008); descriptors of
        // the unused 0xFFF6 characteristic discovered on each link (BTL004, info: Android discovers everything).
        "xiaomi14t_ix7_tracker_mixed_btsnoop_hci.log": ["BTL001": 1, "BTL002": 1, "BTL004": 2, "BTL007": 1, "BTL008": 1],
        // The mouse (air) is an HID-over-GATT link, the OS's: left out of the app's rules (issue 25).
        // oppo: its LE scans are the OS's filtered clients (no all-pass filter): no BTL002.
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
