import BTCapture
import BTScenario
import BTWire
import Testing
import TestSupport

/// Protocol rules every scenario must keep, checked on the decoded capture: commands are answered,
/// ACL reassembles strictly, fragments respect the data length, ATT requests are answered once, and the
/// host's buffer credits come back through Number Of Completed Packets.
@Suite struct ScenarioProtocolTests {
    @Test(arguments: ScenarioRegistry.names)
    func everyCommandIsAnsweredInOrder(name: String) throws {
        let packets = try loadScenario(name).hciPackets
        var outstanding: UInt16? = nil
        var commands = 0
        for r in packets {
            if let c = Wire.command(r) {
                #expect(outstanding == nil, "command \(c.opcode) sent while another was outstanding")
                outstanding = c.opcode
                commands += 1
            } else if let e = Wire.event(r) {
                let answered: UInt16?
                switch e.code {
                case HCIEventCode.commandComplete.rawValue: answered = Wire.u16(e.params, 1)
                case HCIEventCode.commandStatus.rawValue: answered = Wire.u16(e.params, 2)
                default: answered = nil
                }
                if let answered {
                    #expect(answered == outstanding)
                    outstanding = nil
                }
            }
        }
        #expect(outstanding == nil)
        #expect(commands > 10)
    }

    @Test(arguments: ScenarioRegistry.names.filter { $0 != Beacons.name })
    func aclReassemblesAndFragmentsFollowTheRules(name: String) throws {
        let capture = try loadScenario(name)
        let (frames, problems) = reassemble(capture.records)
        #expect(problems.isEmpty, "\(problems)")
        #expect(!frames.isEmpty)
        let limit = capture.hciPackets.compactMap(Wire.command).contains { $0.opcode == 0x2002 }
        #expect(limit)
        // The LE Read Buffer Size answer states the host's fragment size.
        let bufferSize = capture.hciPackets.compactMap(Wire.event).first {
            $0.code == HCIEventCode.commandComplete.rawValue && Wire.u16($0.params, 1) == 0x2002
        }.flatMap { Wire.u16($0.params, 4) }
        let size = Int(try #require(bufferSize))
        for r in capture.hciPackets {
            guard let acl = Wire.acl(r) else { continue }
            #expect(acl.data.count <= size)
            if acl.pb != PacketBoundary.continuation.rawValue {
                #expect(acl.pb == (r.direction == .sent ? PacketBoundary.firstNonFlushable
                                                         : PacketBoundary.firstFlushable).rawValue)
            }
        }
    }

    /// ATT on CID 4. Beacons has no links; eatt-logger runs ATT on an EATT bearer, whose K-frames this test's
    /// reassembler does not join (EnhancedATTTrackingTests pairs its transactions through the tracker).
    @Test(arguments: ScenarioRegistry.names.filter { $0 != Beacons.name && $0 != EnhancedATTLogger.name })
    func attRequestsGetOneResponse(name: String) throws {
        let capture = try loadScenario(name)
        let frames = reassemble(capture.records).frames.filter { $0.cid == L2CAPChannelID.att.rawValue }
        struct Bearer: Hashable { var handle: UInt16; var clientSent: Bool }
        var outstanding: [Bearer: UInt8] = [:]
        var unanswered: [UInt8] = []
        var requests = 0
        for f in frames {
            guard let op = f.attOpcode else { continue }
            let opcode = ATTOpcode(rawValue: op)
            if opcode.isRequest {
                let bearer = Bearer(handle: f.handle, clientSent: f.direction == .sent)
                #expect(outstanding[bearer] == nil, "a second request before the first was answered")
                outstanding[bearer] = op
                requests += 1
            } else if opcode.isResponse {
                let bearer = Bearer(handle: f.handle, clientSent: f.direction != .sent)
                let request = try #require(outstanding[bearer])
                if op == ATTOpcode.errorResponse.rawValue {
                    #expect(f.payload.count == 5 && f.payload[1] == request)
                } else {
                    #expect(op == request + 1)
                }
                outstanding[bearer] = nil
            }
        }
        unanswered = Array(outstanding.values)
        #expect(requests > 5)
        if name == WastefulCentral.name {
            #expect(unanswered == [ATTOpcode.writeRequest.rawValue])  // the ATT timeout
        } else {
            #expect(unanswered.isEmpty)
        }
    }

    @Test(arguments: ScenarioRegistry.names.filter { $0 != Beacons.name })
    func completedPacketsReturnWhatTheHostSent(name: String) throws {
        let packets = try loadScenario(name).hciPackets
        var sent: [UInt16: Int] = [:]
        var completed: [UInt16: Int] = [:]
        for r in packets {
            if let acl = Wire.acl(r), r.direction == .sent {
                sent[acl.handle, default: 0] += 1
            } else if let e = Wire.event(r), e.code == HCIEventCode.numberOfCompletedPackets.rawValue {
                let n = Int(e.params[0])
                #expect(e.params.count == 1 + 4 * n)
                for i in 0..<n {
                    let handle = try #require(Wire.u16(e.params, 1 + 4 * i))
                    completed[handle, default: 0] += Int(try #require(Wire.u16(e.params, 3 + 4 * i)))
                }
            }
        }
        #expect(!sent.isEmpty)
        #expect(sent == completed)
    }

    @Test(arguments: ScenarioRegistry.names.filter { $0 != Beacons.name })
    func linksOpenBeforeUseAndCloseOnce(name: String) throws {
        let packets = try loadScenario(name).hciPackets
        var open = Set<UInt16>()
        for r in packets {
            if let le = Wire.le(r), le.subevent == LESubevent.connectionComplete.rawValue
                || le.subevent == LESubevent.enhancedConnectionComplete.rawValue {
                let handle = try #require(Wire.u16(le.params, 1))
                // A failed attempt (non-zero status, as connection-churn scripts) opens no link.
                if le.params[0] == 0 { #expect(open.insert(handle).inserted) }
            } else if let e = Wire.event(r), e.code == HCIEventCode.disconnectionComplete.rawValue {
                #expect(open.remove(try #require(Wire.u16(e.params, 1))) != nil)
            } else if let acl = Wire.acl(r) {
                #expect(open.contains(acl.handle))
            }
        }
        #expect(open.isEmpty, "every scenario ends with its links closed")
    }
}
