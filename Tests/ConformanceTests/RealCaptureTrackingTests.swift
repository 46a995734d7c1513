import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTReport
import TestSupport

/// The tracking layer on the real captures: connections agree with tshark's disconnection counts, every ATT
/// request is paired or reported, and the GATT trees of captures with discovery match their bytes.
@Suite("Real captures: tracking")
struct RealCaptureTrackingTests {
    static func model(_ name: String) throws -> CaptureModel {
        let capture = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(name).path)
        var collector = TrackingCollector()
        return try capture.accept(&collector)
    }

    @Test("disconnect reasons per connection agree with tshark's disconnections", arguments: RealCaptures.names)
    func disconnectReasons(name: String) throws {
        let expected = try RealCaptures.expected(name)
        let model = try Self.model(name)
        var got: [String: Int] = [:]
        for c in model.connections {
            if let r = c.disconnectReason { got[Hex.u8(r.rawValue), default: 0] += 1 }
        }
        var want = ((expected["disconnections"] as? [String: Any]) ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
        if model.isAirCapture {
            // On the air the reasons are LL_TERMINATE_IND's, which `stats` counts from the bytes.
            let (_, statistics, _) = try RealCaptures.stats(name)
            want = Dictionary(uniqueKeysWithValues: CaptureStatistics.nonZero(statistics.disconnections).map { (Hex.u8(UInt8($0.code)), $0.count) })
        }
        #expect(got == want)
    }

    @Test("timeline, gatt and devices JSON of every real capture follow their schemas", arguments: RealCaptures.names)
    func reportsFollowSchemas(name: String) throws {
        let capture = try OpenedCapture.open(path: RealCaptures.directory.appendingPathComponent(name).path)
        var collector = TrackingCollector()
        let model = try capture.accept(&collector)
        let devices = DevicesReport(file: name, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
        try SchemaValidation.validate(DevicesJSON.object(devices).serialized(), schema: "Sources/BTReport/Schemas/devices.schema.json")
        let timeline = TimelineReport.json(file: name, model: model).serialized()
        try SchemaValidation.validate(timeline, schema: "Sources/BTReport/Schemas/timeline.schema.json")
        try SchemaValidation.validate(GATTReport.json(file: name, model: model).serialized(),
                                      schema: "Sources/BTReport/Schemas/gatt.schema.json")
        #expect(timeline.contains("\"failed_connections\""))
    }

    @Test("every ATT request is paired with its response or reported unanswered", arguments: RealCaptures.names)
    func requestsAccountedFor(name: String) throws {
        let model = try Self.model(name)
        for c in model.connections {
            let requests = c.attCounts.filter { ATTOpcode(rawValue: $0.key).isRequest }.values.reduce(0, +)
            let t = c.transactions
            #expect(requests == t.completed + t.errors + t.timeouts + t.unansweredAtEnd,
                    "connection #\(c.id) handle \(Hex.u16(c.handle)): \(requests) requests, \(t)")
        }
    }

    /// Checked against tshark's decode of the Read By Group Type / Read By Type responses (frames 453–499).
    @Test("yeelock: three services, five characteristics, indications on 0x000c", .enabled(if: RealCaptures.available))
    func yeelockGATT() throws {
        let model = try Self.model("yeelock_smartlock_btsnoop_hci.log")
        #expect(model.connections.count == 2)
        let c = model.connections[0]
        #expect(c.gatt.services.map { "\(Hex.u16($0.startHandle))-\(Hex.u16($0.endHandle)) \($0.uuid)" } == [
            "0x0001-0x0005 1800", "0x0006-0x0009 1801",
            "0x000a-0x0012 58af3dca-6fc0-4fa3-9464-74662f043a39",
        ])
        #expect(c.gatt.characteristics.map(\.valueHandle) == [0x0003, 0x0005, 0x0008, 0x000C, 0x0010])
        #expect(c.gatt.characteristic(valueHandle: 0x0008)?.properties == [.read, .indicate])
        #expect(c.gatt.isCCCD(0x000D))
        #expect(c.discoveries.first?.kind == .allPrimaryServices)
        #expect(model.connections.map { $0.disconnectReason?.rawValue } == [0x13, 0x13])
        #expect(model.connections[1].usage[0x000C]?.indications == 12)
        // Record 686 asks the accept list for a link, 688 cancels it, 690 completes it with status 0x02.
        let attempt = try #require(model.failedConnections.first)
        #expect(model.failedConnections.count == 1)
        #expect(attempt.at.number == 690)
        #expect(attempt.cancelledByHost && attempt.toAcceptList && attempt.peerAddress == nil)
        #expect(attempt.requested?.number == 686)
        // Each link from its LE Create Connection: record 432 to the lock, 577 to the accept list.
        #expect(model.connections.map { $0.connectRequested?.number } == [432, 577])
    }

    /// Three BR/EDR Create Connection commands to 00:23:02:C1:30:ED each end in Page Timeout after 5.13 s:
    /// the default page timeout, 0x2000 slots of 0.625 ms (Core Vol 4 Part E §7.3.16), plus the command's way.
    @Test("xiaomi: BR/EDR page timeouts last the page timeout from their Create Connection", .enabled(if: RealCaptures.available))
    func pageTimeouts() throws {
        let model = try Self.model("xiaomi_wx_vband_smartpen_btsnoop_hci.log")
        let failed = model.failedConnections
        #expect(failed.map(\.at.number) == [184, 200, 209])
        #expect(failed.allSatisfy { $0.status == .pageTimeout && $0.transport == .brEdr && !$0.cancelledByHost })
        #expect(failed.allSatisfy { $0.peerAddress == BDAddr("00:23:02:C1:30:ED") })
        for f in failed {
            let ms = try #require(f.attemptDuration).seconds * 1000
            #expect(ms > 5120 && ms < 5140, "record \(f.at.number): \(ms) ms")
        }
        // Both LE links from their LE Extended Create Connection. Handle 0x0edc is the controller's debug log,
        // not a link that began before the capture.
        #expect(model.connections.map(\.handle) == [0x0002, 0x0003])
        #expect(model.connections.allSatisfy { $0.connectRequested != nil && !$0.implicitStart })
        #expect(model.controllerDebugLogPackets == 92)
    }

    /// Checked against tshark: services 0x0001 1801, 0x0002-0x0008 1800, 0x0009-0x0019 fff0,
    /// 0x001a-0x0050 1826 (Fitness Machine), 0x0051-0x005c fee7.
    /// Checked against tshark: at MTU 128, Read 0x0027 (frame 259) returns 127 bytes, Read Blobs at offsets
    /// 127 and 254 (frames 266, 273) return 127 and 124 more; frames 488–508 repeat the chain, and reads at
    /// 34.3 s and 35.4 s return 52 and 20 bytes.
    @Test("pokemongo: a 378-byte value read as one Read and two Read Blobs, twice", .enabled(if: RealCaptures.available))
    func pokemongoLongReads() throws {
        let model = try Self.model("pokemongo_plus_pairing_btsnoop.log")
        let runs = model.connections.flatMap { c in c.runs.filter { $0.handle == 0x0027 && $0.kind == .read && $0.blobReads > 0 } }
        #expect(runs.map(\.count) == [1, 3])
        #expect(runs.map(\.blobReads) == [2, 2])
        #expect(runs.map(\.bytes) == [378, 378 + 52 + 20])
        #expect(!model.connections.contains { $0.runs.contains { $0.kind == .readBlob } })
    }

    /// Checked against tshark (`btl2cap.cmd_code == 0x02`): ten Connection Requests, all answered 0x0000;
    /// AVCTP, AVCTP Browsing and one SDP asked by the speaker.
    @Test("chsmartbulb: SDP, AVDTP, AVCTP and RFCOMM channels with who asked", .enabled(if: RealCaptures.available))
    func realCapture() throws {
        let model = try Self.model("chsmartbulb_led_speaker_spp_btsnoop_hci.log")
        let c = try #require(model.connections.first)
        let opened = c.events.compactMap { e -> String? in
            guard case .l2capChannel(let psm, _, let n, _, _) = e.kind, n == 1 else { return nil }
            return (L2CAPPSM(rawValue: psm).name ?? "?") + (e.byHost ? "" : " (peer)")
        }
        #expect(opened == ["SDP", "AVDTP", "AVDTP", "AVCTP (peer)", "AVCTP Browsing (peer)", "SDP", "SDP", "RFCOMM",
                           "SDP (peer)", "SDP"])
    }

    @Test("horizon74 treadmill: Fitness Machine service with Treadmill Data notifications", .enabled(if: RealCaptures.available))
    func treadmillGATT() throws {
        let model = try Self.model("horizon74_treadmill_btsnoop_hci.log")
        let c = try #require(model.connections.first)
        #expect(c.gatt.services.map(\.startHandle) == [0x0001, 0x0002, 0x0009, 0x001A, 0x0051])
        #expect(c.gatt.services.map(\.uuid.description) == ["1801", "1800", "fff0", "1826", "fee7"])
        let fitness = try #require(c.gatt.services.first { $0.uuid == BluetoothUUID(uuid16: 0x1826) })
        #expect(c.gatt.characteristics(of: fitness).count == 15)
        #expect(c.gatt.characteristic(valueHandle: 0x0023)?.uuid == BluetoothUUID(uuid16: 0x2ACD))  // Treadmill Data
        #expect(c.isOpen)  // no disconnect in the trace
        #expect(c.usage.values.map(\.notifications).reduce(0, +) == 1047)
        // The module's own fff1–fff5 characteristics carry no member-UUID names (0xFFF3 is FiRa's service UUID).
        let vendor = try #require(c.gatt.services.first { $0.uuid == BluetoothUUID(uuid16: 0xFFF0) })
        #expect(c.gatt.characteristics(of: vendor).map(\.name) == ["fff1", "fff2", "fff3", "fff4", "fff5"])
    }

    /// Checked against tshark: ten services from 0x0001 (1800) to 0x0073 (3802), Heart Rate at 0x0024-0x0029.
    @Test("Mi Band 4: ten services including Heart Rate", .enabled(if: RealCaptures.available))
    func miBandGATT() throws {
        let model = try Self.model("mi_band4_gatt_h4phdr.pcap")
        let c = try #require(model.connections.first)
        #expect(c.gatt.services.count == 10)
        #expect(c.gatt.services.first { $0.uuid == BluetoothUUID(uuid16: 0x180D) }.map { [$0.startHandle, $0.endHandle] } == [0x0024, 0x0029])
        #expect(c.gatt.services.last?.uuid == BluetoothUUID(uuid16: 0x3802))
        #expect(c.peerAddress == BDAddr("EB:DD:13:97:9C:0D"))
    }

    @Test("a capture that starts mid-connection (Nissan Leaf OBD) gets an implicit, open connection", .enabled(if: RealCaptures.available))
    func midConnection() throws {
        let model = try Self.model("nissan_leaf_obd_spp_rfcomm_btsnoop_hci.log")
        #expect(model.connections.count == 1)
        #expect(model.connections.first?.implicitStart == true)
        #expect(model.connections.first?.isOpen == true)
        // Its BR/EDR signalling (SDP, then RFCOMM) shows the transport; every ACL packet (tshark: 5423 sent,
        // 19526 received) is the link's.
        let c = try #require(model.connections.first)
        #expect(c.transport == .brEdr)
        #expect(c.aclPacketsSent == 5423 && c.aclPacketsReceived == 19526)
        #expect(c.events.compactMap { e -> UInt16? in if case .l2capChannel(let psm, _, 1, _, _) = e.kind { psm } else { nil } } == [0x0001, 0x0003])
    }

    @Test("timeline and gatt render every real capture", arguments: RealCaptures.names)
    func renders(name: String) throws {
        let model = try Self.model(name)
        let text = TimelineReport.text(file: name, model: model)
        #expect(text.hasPrefix(name))
        let json = TimelineReport.json(file: name, model: model).serialized()
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect((object?["connections"] as? [Any])?.count == model.connections.count)
        #expect(!GATTReport.text(file: name, model: model).isEmpty)
    }
}
