import BTDecode
import BTWire
import Testing

/// Decodes `bytes` as an LE signalling PDU (one command) and hands it to `body` while the bytes are alive.
private func signal<R>(_ bytes: [UInt8], _ body: (L2CAPSignal) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes { try body(L2CAPSignal($0)) }
}

private func value(_ fields: [DecodedField], _ name: String) -> String? {
    fields.first { $0.name == name }?.value
}

@Suite("L2CAP signalling decoding")
struct L2CAPSignalTests {
    @Test func connectionParameterUpdateRequest() {
        // 12 Connection Parameter Update Request | 03 identifier | 08 00 length 8
        // 06 00 interval min 6 (7.5 ms) | 0c 00 interval max 12 (15 ms) | 00 00 latency 0 | c8 00 timeout 200 (2 s)
        signal([0x12, 0x03, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0xC8, 0x00]) { s in
            guard case .connectionParameterUpdateRequest(let min, let max, let latency, let timeout) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(s.code == .connectionParameterUpdateRequest)
            #expect(s.identifier == 3)
            #expect(s.length == 8)
            #expect(min == 6 && max == 12 && latency == 0 && timeout == 200)
            #expect(L2CAPSignal.intervalMilliseconds(min) == 7.5)
            #expect(L2CAPSignal.timeoutMilliseconds(timeout) == 2000)
            #expect(s.summary == "Connection Parameter Update Request id 3 interval 7.5-15 ms latency 0 timeout 2000 ms")
            #expect(value(s.fields, "Interval Min") == "7.5 ms (0x0006)")
            #expect(value(s.fields, "Interval Max") == "15 ms (0x000c)")
            #expect(value(s.fields, "Latency") == "0 events")
            #expect(value(s.fields, "Timeout") == "2000 ms (0x00c8)")
            #expect(value(s.fields, "Identifier") == "3")
        }
    }

    @Test func connectionParameterUpdateResponse() {
        // 13 Connection Parameter Update Response | 03 id | 02 00 length | 00 00 accepted
        signal([0x13, 0x03, 0x02, 0x00, 0x00, 0x00]) { s in
            guard case .connectionParameterUpdateResponse(let result) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(result == 0)
            #expect(s.summary == "Connection Parameter Update Response id 3 accepted")
        }
        // same, 01 00 rejected
        signal([0x13, 0x04, 0x02, 0x00, 0x01, 0x00]) { s in
            #expect(s.summary == "Connection Parameter Update Response id 4 rejected")
            #expect(value(s.fields, "Result") == "rejected (0x0001)")
        }
    }

    @Test func leCreditBasedConnection() {
        // 14 LE Credit Based Connection Request | 01 id | 0a 00 length 10
        // 80 00 spsm 0x0080 | 40 00 scid 0x0040 | 00 02 mtu 512 | f7 00 mps 247 | 0a 00 credits 10
        signal([0x14, 0x01, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00]) { s in
            guard case .leCreditBasedConnectionRequest(let spsm, let scid, let mtu, let mps, let credits) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(spsm.rawValue == 0x0080 && scid == 0x0040 && mtu == 512 && mps == 247 && credits == 10)
            #expect(s.summary == "LE Credit Based Connection Request id 1 spsm 0x0080 scid 0x0040 mtu 512 mps 247 credits 10")
        }
        // 15 LE Credit Based Connection Response | 01 id | 0a 00
        // 41 00 dcid 0x0041 | 00 01 mtu 256 | 40 00 mps 64 | 05 00 credits 5 | 00 00 success
        signal([0x15, 0x01, 0x0A, 0x00, 0x41, 0x00, 0x00, 0x01, 0x40, 0x00, 0x05, 0x00, 0x00, 0x00]) { s in
            guard case .leCreditBasedConnectionResponse(let dcid, let mtu, let mps, let credits, let result) = s.command
            else { Issue.record("decoded as \(s.summary)"); return }
            #expect(dcid == 0x0041 && mtu == 256 && mps == 64 && credits == 5 && result == 0)
            #expect(value(s.fields, "Result") == "Connection successful (0x0000)")
        }
        // 16 Flow Control Credit Indication | 02 id | 04 00 | 40 00 cid | 03 00 credits 3
        signal([0x16, 0x02, 0x04, 0x00, 0x40, 0x00, 0x03, 0x00]) { s in
            guard case .flowControlCreditIndication(let cid, let credits) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(cid == 0x0040 && credits == 3)
            #expect(s.summary == "Flow Control Credit Indication id 2 cid 0x0040 credits 3")
        }
    }

    @Test func enhancedCreditBasedConnection() {
        // 17 Credit Based Connection Request | 05 id | 0c 00 length 12
        // 27 00 spsm EATT | 00 02 mtu 512 | f7 00 mps 247 | 0a 00 credits | 40 00 41 00 scids
        signal([0x17, 0x05, 0x0C, 0x00, 0x27, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00, 0x40, 0x00, 0x41, 0x00]) { s in
            guard case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let scids) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(spsm == .eatt && mtu == 512 && mps == 247 && credits == 10)
            #expect(Array(scids) == [0x0040, 0x0041])
            #expect(s.summary == "Credit Based Connection Request id 5 spsm EATT (0x0027) mtu 512 mps 247 credits 10 scids 0x0040,0x0041")
        }
        // 18 Credit Based Connection Response | 05 id | 0c 00
        // 00 02 mtu | f7 00 mps | 0a 00 credits | 04 00 some refused, no resources | 50 00 00 00 dcids (2nd refused)
        signal([0x18, 0x05, 0x0C, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00, 0x04, 0x00, 0x50, 0x00, 0x00, 0x00]) { s in
            guard case .creditBasedConnectionResponse(_, _, _, let result, let dcids) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(result == 4)
            #expect(Array(dcids) == [0x0050, 0x0000])
            #expect(value(s.fields, "Result") == "Some connections refused - insufficient resources available (0x0004)")
        }
        // 19 Credit Based Reconfigure Request | 06 id | 06 00 | 00 02 mtu 512 | f7 00 mps 247 | 50 00 dcid
        signal([0x19, 0x06, 0x06, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x50, 0x00]) { s in
            guard case .creditBasedReconfigureRequest(let mtu, let mps, let dcids) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(mtu == 512 && mps == 247 && Array(dcids) == [0x0050])
            #expect(s.summary == "Credit Based Reconfigure Request id 6 mtu 512 mps 247 dcids 0x0050")
        }
        // 1a Credit Based Reconfigure Response | 06 id | 02 00 | 00 00 success
        signal([0x1A, 0x06, 0x02, 0x00, 0x00, 0x00]) { s in
            guard case .creditBasedReconfigureResponse(let result) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(result == 0)
            #expect(s.summary == "Credit Based Reconfigure Response id 6 result Reconfiguration successful")
        }
    }

    @Test func disconnectionAndReject() {
        // 06 Disconnection Request | 07 id | 04 00 | 41 00 dcid | 40 00 scid
        signal([0x06, 0x07, 0x04, 0x00, 0x41, 0x00, 0x40, 0x00]) { s in
            guard case .disconnectionRequest(let dcid, let scid) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(dcid == 0x0041 && scid == 0x0040)
            #expect(s.summary == "Disconnection Request id 7 dcid 0x0041 scid 0x0040")
        }
        // 07 Disconnection Response | 07 id | 04 00 | 41 00 | 40 00
        signal([0x07, 0x07, 0x04, 0x00, 0x41, 0x00, 0x40, 0x00]) { s in
            guard case .disconnectionResponse(let dcid, let scid) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(dcid == 0x0041 && scid == 0x0040)
        }
        // 01 Command Reject | 08 id | 02 00 | 00 00 Command not understood
        signal([0x01, 0x08, 0x02, 0x00, 0x00, 0x00]) { s in
            guard case .commandReject(let reason, let data) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(reason == 0 && data.isEmpty)
            #expect(s.summary == "Command Reject id 8: Command not understood (0x0000)")
        }
    }

    /// A BR/EDR signalling PDU (CID 0x0001) carrying three commands back to back.
    @Test func brEdrCommandsInOnePDU() {
        let pdu: [UInt8] = [
            // 02 Connection Request | 01 id | 04 00 | 01 00 psm SDP | 40 00 scid
            0x02, 0x01, 0x04, 0x00, 0x01, 0x00, 0x40, 0x00,
            // 0a Information Request | 02 id | 02 00 | 02 00 extended features
            0x0A, 0x02, 0x02, 0x00, 0x02, 0x00,
            // 04 Configuration Request | 03 id | 08 00 | 41 00 dcid | 00 00 flags | 01 02 a0 02 option MTU 672
            0x04, 0x03, 0x08, 0x00, 0x41, 0x00, 0x00, 0x00, 0x01, 0x02, 0xA0, 0x02,
        ]
        pdu.withUnsafeBytes { raw in
            let commands = Array(L2CAPSignal.commands(in: raw))
            #expect(commands.map(\.identifier) == [1, 2, 3])
            #expect(commands.map(\.code) == [.connectionRequest, .informationRequest, .configurationRequest])
            guard commands.count == 3 else { return }
            if case .connectionRequest(let psm, let scid) = commands[0].command {
                #expect(psm == .sdp && scid == 0x0040)
            } else { Issue.record("first is \(commands[0].summary)") }
            #expect(commands[0].summary == "Connection Request id 1 psm SDP (0x0001) scid 0x0040")
            if case .informationRequest(let type) = commands[1].command {
                #expect(type == 2)
            } else { Issue.record("second is \(commands[1].summary)") }
            #expect(commands[1].summary == "Information Request id 2 Extended features supported (0x0002)")
            if case .configurationRequest(let dcid, let flags, let options) = commands[2].command {
                #expect(dcid == 0x0041 && flags == 0 && Array(options) == [0x01, 0x02, 0xA0, 0x02])
            } else { Issue.record("third is \(commands[2].summary)") }
            #expect(value(commands[2].fields, "Options") == "0102a002")
        }
    }

    @Test func brEdrResponses() {
        // 03 Connection Response | 01 id | 08 00 | 41 00 dcid | 40 00 scid | 01 00 pending | 01 00 authentication pending
        signal([0x03, 0x01, 0x08, 0x00, 0x41, 0x00, 0x40, 0x00, 0x01, 0x00, 0x01, 0x00]) { s in
            guard case .connectionResponse(let dcid, let scid, let result, let status) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(dcid == 0x0041 && scid == 0x0040 && result == 1 && status == 1)
            #expect(s.summary == "Connection Response id 1 dcid 0x0041 scid 0x0040 result Connection pending status Authentication pending (0x0001)")
        }
        // 05 Configuration Response | 03 id | 06 00 | 40 00 scid | 00 00 flags | 00 00 success
        signal([0x05, 0x03, 0x06, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00]) { s in
            guard case .configurationResponse(let scid, let flags, let result, let options) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(scid == 0x0040 && flags == 0 && result == 0 && options.isEmpty)
            #expect(value(s.fields, "Result") == "Success (0x0000)")
        }
        // 08 Echo Request | 04 id | 02 00 | 68 69 "hi"
        signal([0x08, 0x04, 0x02, 0x00, 0x68, 0x69]) { s in
            guard case .echoRequest(let data) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(Array(data) == [0x68, 0x69])
        }
        // 09 Echo Response | 04 id | 00 00
        signal([0x09, 0x04, 0x00, 0x00]) { s in
            guard case .echoResponse(let data) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(data.isEmpty)
        }
        // 0b Information Response | 02 id | 0c 00 | 03 00 fixed channels | 00 00 success | 86 00 00 00 00 00 00 00
        signal([0x0B, 0x02, 0x0C, 0x00, 0x03, 0x00, 0x00, 0x00, 0x86, 0, 0, 0, 0, 0, 0, 0]) { s in
            guard case .informationResponse(let type, let result, let data) = s.command else {
                Issue.record("decoded as \(s.summary)"); return
            }
            #expect(type == 3 && result == 0 && data.count == 8 && data.first == 0x86)
        }
    }

    @Test func malformedCommands() {
        // header cut short: 12 01
        signal([0x12, 0x01]) { s in
            guard case .malformed(let reason) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(reason == "header too short")
            #expect(s.code == .connectionParameterUpdateRequest && s.identifier == 1)
        }
        // empty PDU
        signal([]) { s in #expect(s.isMalformed) }
        // length 8 but only 2 data bytes: 12 01 08 00 | 06 00
        signal([0x12, 0x01, 0x08, 0x00, 0x06, 0x00]) { s in
            guard case .malformed(let reason) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(reason == "length runs past the end of the PDU")
            #expect(Array(s.data) == [0x06, 0x00])
            #expect(s.summary == "Malformed Connection Parameter Update Request id 1: length runs past the end of the PDU")
        }
        // length consistent but too short for the layout: 13 02 01 00 | 00
        signal([0x13, 0x02, 0x01, 0x00, 0x00]) { s in
            guard case .malformed(let reason) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(reason == "too short")
        }
        // unknown code 0x40 | 09 id | 01 00 | ff
        signal([0x40, 0x09, 0x01, 0x00, 0xFF]) { s in
            guard case .unknown(let data) = s.command else { Issue.record("decoded as \(s.summary)"); return }
            #expect(Array(data) == [0xFF])
        }
    }

    @Test func iterationStopsAfterALengthOverrun() {
        let pdu: [UInt8] = [
            // 13 Connection Parameter Update Response | 01 id | 01 00 length 1 (too short for result) | 00
            0x13, 0x01, 0x01, 0x00, 0x00,
            // 06 Disconnection Request | 02 id | 10 00 length 16, but only 4 bytes follow
            0x06, 0x02, 0x10, 0x00, 0x41, 0x00, 0x40, 0x00,
        ]
        pdu.withUnsafeBytes { raw in
            let commands = Array(L2CAPSignal.commands(in: raw))
            #expect(commands.count == 2)
            #expect(commands.allSatisfy { $0.isMalformed })
            #expect(commands.map(\.identifier) == [1, 2])
        }
    }

    @Test func neverTraps() {
        var decoded = 0
        for code in 0...0x1F {
            for length in 0...20 {
                // code | id 1 | declared length = `length` | `length` bytes, then a second copy cut in half
                let one: [UInt8] = [UInt8(code), 0x01, UInt8(length), 0x00] + [UInt8](repeating: 0x33, count: length)
                let input = one + one.prefix(one.count / 2)
                input.withUnsafeBytes { raw in
                    for s in L2CAPSignal.commands(in: raw) {
                        _ = s.summary
                        _ = s.fields
                        decoded += 1
                    }
                }
            }
        }
        #expect(decoded >= 32 * 21 * 2)
    }
}
