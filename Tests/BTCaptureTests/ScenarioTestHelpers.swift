import BTCapture
import BTScenario
import BTWire
import TestSupport

/// Minimal, independent views of HCI packets for the scenario tests. They parse only what the assertions
/// need, with their own code, so the tests do not trust the generator's encoders to check themselves.
enum Wire {
    static func u16(_ b: [UInt8], _ at: Int) -> UInt16? {
        guard at + 1 < b.count else { return nil }
        return UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    /// Command: opcode and parameters.
    static func command(_ r: CopiedRecord) -> (opcode: UInt16, params: [UInt8])? {
        guard r.kind == .command, let op = u16(r.payload, 0), r.payload.count >= 3 else { return nil }
        return (op, Array(r.payload[3...]))
    }

    /// Event: code and parameters.
    static func event(_ r: CopiedRecord) -> (code: UInt8, params: [UInt8])? {
        guard r.kind == .event, r.payload.count >= 2 else { return nil }
        return (r.payload[0], Array(r.payload[2...]))
    }

    /// LE Meta: subevent and the parameters after it.
    static func le(_ r: CopiedRecord) -> (subevent: UInt8, params: [UInt8])? {
        guard let e = event(r), e.code == HCIEventCode.leMeta.rawValue, let sub = e.params.first else { return nil }
        return (sub, Array(e.params.dropFirst()))
    }

    /// ACL: handle, packet boundary flag, data.
    static func acl(_ r: CopiedRecord) -> (handle: UInt16, pb: UInt16, data: [UInt8])? {
        guard r.kind == .acl, let hf = u16(r.payload, 0), let length = u16(r.payload, 2),
              r.payload.count == 4 + Int(length) else { return nil }
        return (hf & 0x0FFF, (hf >> 12) & 0x3, Array(r.payload[4...]))
    }
}

/// One reassembled L2CAP frame.
struct Frame {
    var handle: UInt16
    var direction: Direction
    var cid: UInt16
    var payload: [UInt8]
    /// Index (in the record list) of the record that completed it, and its time.
    var lastRecord: Int
    var microseconds: Int64

    var attOpcode: UInt8? { cid == L2CAPChannelID.att.rawValue ? payload.first : nil }
    var attHandle: UInt16? { Wire.u16(payload, 1) }
}

/// Reassembles ACL into L2CAP frames per (handle, direction), strictly: any orphan continuation, interrupted
/// PDU, overlong PDU or PDU left open at the end is reported as a problem.
func reassemble(_ records: [CopiedRecord]) -> (frames: [Frame], problems: [String]) {
    struct Key: Hashable { var handle: UInt16; var direction: Direction }
    var pending: [Key: (expected: Int, bytes: [UInt8])] = [:]
    var frames: [Frame] = []
    var problems: [String] = []
    for (i, r) in records.enumerated() {
        guard let acl = Wire.acl(r) else {
            if r.kind == .acl { problems.append("record \(r.number): bad ACL header") }
            continue
        }
        let key = Key(handle: acl.handle, direction: r.direction)
        var buffer: [UInt8]
        var expected: Int
        if acl.pb == PacketBoundary.continuation.rawValue {
            guard let p = pending[key] else {
                problems.append("record \(r.number): orphan continuation on \(acl.handle)")
                continue
            }
            buffer = p.bytes + acl.data
            expected = p.expected
        } else {
            if pending[key] != nil { problems.append("record \(r.number): start while a PDU is pending") }
            guard let length = Wire.u16(acl.data, 0) else {
                problems.append("record \(r.number): start shorter than an L2CAP header")
                continue
            }
            buffer = acl.data
            expected = Int(length) + 4
        }
        if buffer.count > expected {
            problems.append("record \(r.number): PDU longer than its L2CAP length")
            pending[key] = nil
        } else if buffer.count == expected {
            frames.append(Frame(handle: acl.handle, direction: r.direction, cid: Wire.u16(buffer, 2) ?? 0,
                                payload: Array(buffer[4...]), lastRecord: i, microseconds: r.microseconds))
            pending[key] = nil
        } else {
            pending[key] = (expected, buffer)
        }
    }
    for (key, _) in pending { problems.append("PDU on \(key.handle) never completed") }
    return (frames, problems)
}

/// The scenario's H4 capture, loaded.
func loadScenario(_ name: String, format: ScenarioFormat = .btsnoopH4) throws -> LoadedCapture {
    try LoadedCapture.load(writeScenario(name, format: format))
}

/// Where every scenario starts: 2026-01-15T10:00:00Z in microseconds.
let scenarioStartMicroseconds: Int64 = 1_768_471_200_000_000
