import BTDecode
import BTWire

/// One data-channel PDU a side has queued: LLID and plaintext payload, and once sent the bytes it had on air
/// (a resend repeats them exactly). `reply` is what the receiver queues when it accepts this PDU (an LL
/// procedure's response); `onAccepted` marks PDUs whose receipt changes the link.
struct AirPDU {
    enum Effect: UInt8 { case none, terminate, startEncryption }

    var llid: UInt8
    var payload: [UInt8]
    /// Ciphertext and MIC, fixed when the PDU is first sent on an encrypted link.
    var cipher: [UInt8]?
    var reply: [UInt8]?
    var effect = Effect.none

    static let llidContinuation: UInt8 = 1
    static let llidStart: UInt8 = 2
    static let llidControl: UInt8 = 3

    static let empty = AirPDU(llid: llidContinuation, payload: [])

    var isEmpty: Bool { llid == Self.llidContinuation && payload.isEmpty }

    static func control(_ opcode: LLControlOpcode, _ body: [UInt8] = [], reply: [UInt8]? = nil,
                        effect: Effect = .none) -> AirPDU {
        AirPDU(llid: llidControl, payload: [opcode.rawValue] + body, reply: reply, effect: effect)
    }
}

/// LL control PDUs [Core Vol 6 Part B §2.4.2; LINKLAYER.md §2.5].
enum AirControl {
    static func connectionUpdate(windowSize: UInt8, windowOffset: UInt16, interval: UInt16, latency: UInt16,
                                 timeout: UInt16, instant: UInt16) -> AirPDU {
        .control(.connectionUpdateInd, ByteWriter.build { w in
            w.u8(windowSize)
            w.u16(windowOffset)
            w.u16(interval)
            w.u16(latency)
            w.u16(timeout)
            w.u16(instant)
        })
    }

    static func terminate(_ reason: UInt8) -> AirPDU { .control(.terminateInd, [reason], effect: .terminate) }

    static func phyRequest(_ phys: UInt8, reply: Bool) -> AirPDU {
        .control(.phyReq, [phys, phys], reply: reply ? [LLControlOpcode.phyRsp.rawValue, phys, phys] : nil)
    }

    static func phyUpdate(centralToPeripheral: UInt8, peripheralToCentral: UInt8, instant: UInt16) -> AirPDU {
        .control(.phyUpdateInd, ByteWriter.build { w in
            w.u8(centralToPeripheral)
            w.u8(peripheralToCentral)
            w.u16(instant)
        })
    }

    /// LL_LENGTH_REQ, answered by LL_LENGTH_RSP with the responder's values.
    static func length(requesterRx: UInt16, requesterTx: UInt16, responderRx: UInt16, responderTx: UInt16) -> AirPDU {
        func body(_ rx: UInt16, _ tx: UInt16) -> [UInt8] {
            ByteWriter.build { w in
                w.u16(rx)
                w.u16(HCIScript.maxTime(octets: rx))
                w.u16(tx)
                w.u16(HCIScript.maxTime(octets: tx))
            }
        }
        return .control(.lengthReq, body(requesterRx, requesterTx),
                         reply: [LLControlOpcode.lengthRsp.rawValue] + body(responderRx, responderTx))
    }

    /// LL_ENC_REQ (Rand, EDIV, SKDc, IVc), answered by LL_ENC_RSP (SKDp, IVp).
    static func encryptionRequest(random: UInt64, ediv: UInt16, rng: inout SplitMix64) -> AirPDU {
        let request = ByteWriter.build { w in
            w.u64(random)
            w.u16(ediv)
            w.append(rng.bytes(8 + 4))
        }
        return .control(.encReq, request, reply: [LLControlOpcode.encRsp.rawValue] + rng.bytes(8 + 4))
    }

    /// The central's LL_START_ENC_RSP, the first encrypted PDU; the peripheral answers with its own.
    static let startEncryptionResponse = AirPDU.control(.startEncRsp, reply: [LLControlOpcode.startEncRsp.rawValue],
                                                        effect: .startEncryption)
    static let startEncryptionRequest = AirPDU.control(.startEncReq)
}
