import Foundation
import Testing
import BTCapture
import BTTrack
import TestSupport

/// The host's platform, where a capture shows it: PacketLogger (Apple, or BTstack by its log lines), BlueZ's
/// monitor format, Android's vendor commands.
@Suite("Host platform")
struct PlatformTests {
    static func platform(_ path: String) throws -> PlatformEvidence {
        let capture = try OpenedCapture.open(path: path)
        var collector = TrackingCollector(options: .withoutAdvertisers)
        return try capture.accept(&collector).platform
    }

    @Test("samples: PacketLogger is Apple's, the monitor format BlueZ's, plain btsnoop says nothing")
    func samples() throws {
        #expect(try Self.platform(try ScenarioFixtures.path("heart-rate-session", format: .packetLoggerLE)).platform == .apple)
        #expect(try Self.platform(try ScenarioFixtures.path("peripheral-role", format: .btsnoopMonitor)).platform == .linux)
        #expect(try Self.platform(try writeScenario("heart-rate-session")).platform == nil)
    }

    /// Reviewed from each capture's bytes: Android's LE vendor commands (0xFD53 capabilities, 0xFD57 APCF,
    /// 0xFD59 energy info), BTstack's "file.c.line:" notes, btmon's monitor format.
    static let expected: [String: HostPlatform] = [
        "android_obex_scan_nanosec_h4phdr.pcap": .android, "chsmartbulb_led_speaker_spp_btsnoop_hci.log": .android,
        "horizon74_treadmill_btsnoop_hci.log": .android, "mi_band4_gatt_h4phdr.pcap": .android,
        "oneplus6_pets_ae00_uart_btsnoop_hci.log": .android, "oppo_earbuds_classic_hfp_avrcp_btsnoop.log": .android,
        "pokemongo_plus_pairing_btsnoop.log": .android, "xiaomi_wx_vband_smartpen_btsnoop_hci.log": .android,
        "yeelock_smartlock_btsnoop_hci.log": .android, "btstack_hfp_sco.pklg": .btstack, "btstack_le_sm_pairing.pklg": .btstack,
        // BTstack on a 2010 iPhone: a PacketLogger file without notes, so only "Apple" shows.
        "btstack_iphone_sim_access_2010.pklg": .apple, "lifepo4_bms_btmon_tiny_monitor.btsnoop": .linux,
        // Android phones named in their captures' sources (Galaxy A71, S20 FE, POCO X4 Pro, GT-S7275R, Xiaomi 14T):
        // APCF (0xFD57) or the controller's energy info (0xFD59) show the stack.
        "airbily_smartwatch_h4phdr.pcapng": .android,
        "amuza_sampler_galaxy_s20fe_spp_6h_apcf_Amuza_t1_btsnoop_hci.log": .android,
        "konnwei_bk300_battery_monitor_btsnoop_hci.log.last": .android, "oppo_earbuds_samsung_bt_hci.cfa": .android,
        "rbp_device_android2016_spp_19h_apcf_btsnoop_hci.log": .android, "sphero_mini_fw_update_btsnoop_hci.log": .android,
        "xiaomi14t_ix7_tracker_mixed_btsnoop_hci.log": .android,
        // A real iPhone's PacketLogger: its text notes name the product (iPhone18,2).
        "ios_bafang_ebike_bluetoothd_hci.pklg": .iOS,
    ]

    @Test("real captures", arguments: RealCaptures.names)
    func real(name: String) throws {
        let got = try Self.platform(RealCaptures.directory.appendingPathComponent(name).path)
        #expect(got.platform == Self.expected[name], "\(name): \(String(describing: got.evidence))")
    }
}
