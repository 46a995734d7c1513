import BTWire

/// L2CAP basic frames and LE signaling commands (Core Vol 3 Part A §3.1, §4).
public enum L2CAPFrame {
    /// `len u16, cid u16, payload`.
    public static func basic(cid: L2CAPChannelID, payload: [UInt8]) -> [UInt8] {
        ByteWriter.build(capacity: HCIFraming.l2capHeaderLength + payload.count) { w in
            w.u16(UInt16(truncatingIfNeeded: payload.count))
            w.u16(cid.rawValue)
            w.append(payload)
        }
    }

    /// A signaling command: `code, identifier, len u16, data`.
    public static func signal(_ code: L2CAPSignalCode, identifier: UInt8, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        ByteWriter.build { w in
            w.u8(code.rawValue)
            w.u8(identifier)
            w.lengthPrefixed16(body)
        }
    }

    /// L2CAP Credit Based Connection Request (0x17): `spsm, mtu, mps, initial credits, source CIDs` (§4.25).
    public static func creditBasedConnectionRequest(identifier: UInt8, spsm: L2CAPPSM, mtu: UInt16, mps: UInt16,
                                                    credits: UInt16, sourceCIDs: [UInt16]) -> [UInt8] {
        signal(.creditBasedConnectionRequest, identifier: identifier) { w in
            w.u16(spsm.rawValue)
            w.u16(mtu)
            w.u16(mps)
            w.u16(credits)
            for cid in sourceCIDs { w.u16(cid) }
        }
    }

    /// L2CAP Credit Based Connection Response (0x18): `mtu, mps, initial credits, result, destination CIDs`
    /// (§4.26); result 0 is success.
    public static func creditBasedConnectionResponse(identifier: UInt8, mtu: UInt16, mps: UInt16, credits: UInt16,
                                                     result: UInt16, destinationCIDs: [UInt16]) -> [UInt8] {
        signal(.creditBasedConnectionResponse, identifier: identifier) { w in
            w.u16(mtu)
            w.u16(mps)
            w.u16(credits)
            w.u16(result)
            for cid in destinationCIDs { w.u16(cid) }
        }
    }

    /// The information payloads of the K-frames that carry `sdu` on a credit-based channel (Core Vol 3 Part A
    /// §3.4.3): the first starts with the SDU length, and none is longer than `mps`.
    public static func kFrames(sdu: [UInt8], mps: Int) -> [[UInt8]] {
        let first = max(0, mps - sduLengthSize)
        var frames = [ByteWriter.build(capacity: min(mps, sdu.count + sduLengthSize)) { w in
            w.u16(UInt16(truncatingIfNeeded: sdu.count))
            w.append(sdu.prefix(first))
        }]
        var start = min(first, sdu.count)
        while start < sdu.count {
            let end = min(sdu.count, start + max(1, mps))
            frames.append(Array(sdu[start..<end]))
            start = end
        }
        return frames
    }

    /// The SDU length field of a first K-frame.
    public static let sduLengthSize = 2

    /// Connection Parameter Update Request (0x12), peripheral to central, intervals in HCI units.
    public static func connectionParameterUpdateRequest(identifier: UInt8, _ p: ConnectionParameters) -> [UInt8] {
        signal(.connectionParameterUpdateRequest, identifier: identifier) { p.write(to: &$0, includeCELength: false) }
    }

    /// Connection Parameter Update Response (0x13): result 0 accepted, 1 rejected.
    public static func connectionParameterUpdateResponse(identifier: UInt8, accepted: Bool) -> [UInt8] {
        signal(.connectionParameterUpdateResponse, identifier: identifier) {
            $0.u16(accepted ? ConnectionParameterUpdateResult.accepted : ConnectionParameterUpdateResult.rejected)
        }
    }
}

/// Connection Parameter Update Response results.
public enum ConnectionParameterUpdateResult {
    public static let accepted: UInt16 = 0x0000
    public static let rejected: UInt16 = 0x0001
}

/// Splits an L2CAP frame into HCI ACL data packets (Core Vol 4 Part E §5.4.2), the way each side does it:
/// the host marks its first fragment 0b00 (non-flushable), a controller marks the first fragment it delivers
/// 0b10, and every later fragment is a continuation 0b01.
public enum ACLFragmenter {
    /// Whole ACL packets (header and data) for `frame`, each carrying at most `dataLength` bytes.
    public static func packets(handle: UInt16, frame: [UInt8], fromHost: Bool, dataLength: Int) -> [[UInt8]] {
        let chunk = max(1, dataLength)
        var packets: [[UInt8]] = []
        var start = 0
        repeat {
            let end = min(frame.count, start + chunk)
            let boundary: PacketBoundary = start > 0 ? .continuation : (fromHost ? .firstNonFlushable : .firstFlushable)
            packets.append(packet(handle: handle, boundary: boundary, data: frame[start..<end]))
            start = end
        } while start < frame.count
        return packets
    }

    /// One ACL packet: `handle | PB << 12 | BC << 14` (BC always 0 on LE), `dlen u16`, data.
    public static func packet(handle: UInt16, boundary: PacketBoundary, data: ArraySlice<UInt8>) -> [UInt8] {
        ByteWriter.build(capacity: HCIFraming.aclHeaderLength + data.count) { w in
            w.u16(handle & HCIFraming.handleMask | boundary.rawValue << HCIFraming.packetBoundaryShift)
            w.u16(UInt16(truncatingIfNeeded: data.count))
            w.append(data)
        }
    }
}
