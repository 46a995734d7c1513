import Foundation
import Testing
import TestSupport

/// A small LE air capture (pcap, linktype 256 as Sniffle writes it, CRCs flagged good): an ADV_IND, a
/// CONNECT_IND, then on the connection an LL_CONNECTION_UPDATE_IND, its empty acknowledgement, an ATT Read
/// Request and its resend.
func airCapture() -> [UInt8] {
    func hex(_ s: String) -> [UInt8] {
        let d = Array(s.filter(\.isHexDigit))
        return stride(from: 0, to: d.count, by: 2).map { UInt8(String(d[$0...$0 + 1]), radix: 16)! }
    }
    /// RF channel, signal −62 dBm, noise −128, no offenses, reference AA, flags (CRC checked and valid, PDU
    /// type), then AA, PDU and a CRC the flags vouch for.
    func record(rf: UInt8, pduType: UInt16, aa: String, _ pdu: String, at us: UInt32) -> [UInt8] {
        let flags: UInt16 = 0x0C13 | pduType << 7
        let data = [rf, 0xC2, 0x80, 0x00] + hex(aa) + [UInt8(flags & 0xFF), UInt8(flags >> 8)] + hex(aa) + hex(pdu) + [0, 0, 0]
        return CaptureBytes.pcapRecord(data, seconds: 1_700_000_000, fraction: us)
    }
    let adv = "d6be898e", link = "17656550"
    var b = CaptureBytes.pcapHeader(linktype: 256)
    b += record(rf: 0, pduType: 0, aa: adv, "40 09 e8dd6ee5c578 020105", at: 0)  // ADV_IND, 3 bytes of AdvData
    b += record(rf: 0, pduType: 0, aa: adv,
                "45 22 56353085bd70 e8dd6ee5c578 17656550 98d8e0 03 1700 1800 0000 4800 007899ff1f 2d", at: 1000)
    b += record(rf: 14, pduType: 2, aa: link, "13 0c 00 03 0800 1800 0000 4800 9c01", at: 5000)  // interval 30 ms, instant 412
    b += record(rf: 14, pduType: 3, aa: link, "0d 00", at: 5400)  // empty, acknowledges
    b += record(rf: 20, pduType: 2, aa: link, "0a 07 0300 0400 0a 2a00", at: 35000)  // ATT Read Request 0x002a
    b += record(rf: 26, pduType: 2, aa: link, "0a 07 0300 0400 0a 2a00", at: 65000)  // resent: not acknowledged
    return b
}

@Suite("btlens on air captures")
struct AirCaptureCommandTests {
    @Test("stats --json adds link_layer: advertising PDUs by type, data PDUs, retransmissions, control opcodes")
    func statsJSON() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("air.pcap", airCapture())
        let r = try CLI.run(["stats", "--json", path])
        #expect(r.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let ll = try #require(object["link_layer"] as? [String: Any])
        #expect(ll["advertising_pdus"] as? [String: Int] == ["0x00": 1, "0x05": 1])
        #expect(ll["connect_requests"] as? Int == 1)
        #expect(ll["crc_errors"] as? Int == 0)
        #expect(ll["data_pdus"] as? Int == 3)
        #expect(ll["retransmissions"] as? Int == 1)
        #expect(ll["control"] as? [String: Int] == ["0x00": 1])
        #expect(object["att"] as? [String: Int] == ["0x0a": 1])
        #expect(object["malformed"] as? Int == 0)
        let text = try CLI.run(["stats", path])
        #expect(text.stdout.contains("LL connect requests  1"))
    }

    @Test("decode names each LL PDU with its fields, channel and RSSI")
    func decode() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("air.pcap", airCapture())
        let r = try CLI.run(["decode", path])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines[0].contains("ADV_IND AdvA 78:C5:E5:6E:DD:E8 (random) 3 bytes ch 37 -62 dBm"))
        #expect(lines[1].contains("CONNECT_IND InitA 70:BD:85:30:35:56 (random) AdvA 78:C5:E5:6E:DD:E8 AA 0x50656517 interval 30 ms"))
        #expect(lines[2].contains("LL_CONNECTION_UPDATE_IND interval 30 ms timeout 720 ms instant 412 C→P ch 12"))
        #expect(lines[3].contains("LL Empty PDU SN 1 NESN 1 P→C"))
        #expect(lines[4].contains("ATT Read Request handle 0x002a C→P ch 18"))
        #expect(lines[5].contains("(retransmission)"))
        let att = try CLI.run(["decode", "--kind", "att", path])
        #expect(att.stdout.split(separator: "\n").count == 1)
        let verbose = try CLI.run(["decode", "-v", "--limit", "3", path])
        #expect(verbose.stdout.contains("CRCInit: 0xe0d898"))
        #expect(verbose.stdout.contains("instant: 412"))
    }

    @Test("decode filters air records by access address, PDU type and direction")
    func decodeFilters() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("air.pcap", airCapture())
        func lines(_ args: [String]) throws -> [Substring] {
            let r = try CLI.run(["decode"] + args + [path])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n")
        }
        // The link's four packets and the CONNECT_IND that assigned its address.
        #expect(try lines(["--access-address", "0x50656517"]).count == 5)
        #expect(try lines(["--pdu-type", "adv_ind", "--pdu-type", "LL_CONNECTION_UPDATE_IND"]).count == 2)
        #expect(try lines(["--pdu-type", "empty"]).map { $0.contains("Empty PDU") } == [true])
        #expect(try lines(["--direction", "p2c"]).count == 1)
        #expect(try lines(["--direction", "c2p", "--pdu-type", "data"]).count == 2)
        let bad = try CLI.run(["decode", "--pdu-type", "ADV_BOGUS", path])
        #expect(bad.status == 2 && bad.stderr.contains("unknown PDU type 'ADV_BOGUS'"))
        let badDirection = try CLI.run(["decode", "--direction", "up", path])
        #expect(badDirection.status == 2 && badDirection.stderr.contains("use c2p or p2c"))
    }

    @Test("timeline, gatt, devices, energy and audit read a generated air capture; their JSON follows the schemas")
    func reports() throws {
        let path = try writeScenario("wasteful-central", format: .air256)
        let timeline = try CLI.run(["timeline", "--json", path])
        #expect(timeline.status == 0)
        try SchemaValidation.validate(timeline.stdout, schema: "Sources/BTReport/Schemas/timeline.schema.json")
        #expect(timeline.stdout.contains("\"access_address\""))
        let energy = try CLI.run(["energy", "--json", path])
        try SchemaValidation.validate(energy.stdout, schema: "Sources/BTReport/Schemas/energy.schema.json")
        #expect(energy.stdout.contains("\"heard\": {"))
        let audit = try CLI.run(["audit", "--format", "json", path])
        try SchemaValidation.validate(audit.stdout, schema: "Sources/BTReport/Schemas/audit.schema.json")
        #expect(audit.stdout.contains("air capture: each link is seen from its central"))
        let html = try CLI.run(["audit", "--format", "html", path])
        #expect(html.stdout.contains("<p class=\"note\">air capture:") && html.stdout.contains("Connection #1 AA 0x"))
        #expect(!html.stdout.contains("handle 0x0000"))
        let text = try CLI.run(["timeline", path])
        #expect(text.stdout.contains("air  AA 0x") && text.stdout.contains("air: interval 7.5 ms"))
        let gatt = try CLI.run(["gatt", "--json", path])
        try SchemaValidation.validate(gatt.stdout, schema: "Sources/BTReport/Schemas/gatt.schema.json")
        let devices = try CLI.run(["devices", "--json", path])
        try SchemaValidation.validate(devices.stdout, schema: "Sources/BTReport/Schemas/devices.schema.json")
        #expect(devices.stdout.contains("E1:7F:03:9A:42:42"))
    }
}
