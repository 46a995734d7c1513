import BTWire
import BTCapture

/// ACL data → L2CAP PDUs: fragments reassembled per link and direction, channels named from the signalling
/// seen (dynamic ATT, EATT), and credit-based SDUs joined. `PacketDecoder` runs one inline; tracking on two
/// threads runs one on the link thread instead, fed the same ACL packets and link events in the same order.
public struct L2CAPDecoder {
    public private(set) var reassembler = ACLReassembler()
    public private(set) var channels = ChannelMap()
    public private(set) var sdus = SDUReassembler()

    public init() {}

    /// The PDU this ACL packet completed, if any. Its bytes are borrowed from `record` or the decoder, until
    /// the next call. Out of line: inlined into `PacketDecoder.decode`, it makes that copy its frame.
    @inline(never)
    public mutating func decode(_ acl: ACLPacket, record: CaptureRecord, issues: IssueLog) -> L2CAPPDU? {
        if record.isCutShort {
            reassembler.skipTruncated(acl, record: record, issues: issues)
            return nil
        }
        guard case .complete(let cid, let payload, let firstRecord, let firstOffset, let fragments) =
            reassembler.push(acl, record: record, issues: issues)
        else { return nil }
        let channel = channels.lookup(controller: record.controller, handle: acl.handle, cid: cid, direction: record.direction)
        var pdu = L2CAPPDU(controller: record.controller, handle: acl.handle, direction: record.direction,
                           channelID: cid, channel: channel.proto, bearer: channel.bearer, payload: payload, firstRecord: firstRecord,
                           firstOffset: firstOffset, fragments: fragments)
        switch channel.proto {
        case .brEdrSignaling, .leSignaling:
            channels.observeSignaling(controller: record.controller, handle: acl.handle, direction: record.direction,
                                      payload: payload)
        case .att, .dynamicATT:
            if payload.isEmpty {
                issues.report(.emptyPDU, record: record.number, offset: record.offset, "empty ATT PDU on \(L2CAPChannelID(rawValue: cid))")
            }
        case .enhancedATT:
            joinSDU(&pdu, record: record, issues: issues)
        default:
            break
        }
        return pdu
    }

    /// Completes `pdu.sdu` when this K-frame ends an SDU. Out of line: EATT is rare, and the ACL path it would
    /// join is inlined into `decode` for every record.
    @inline(never)
    mutating func joinSDU(_ pdu: inout L2CAPPDU, record: CaptureRecord, issues: IssueLog) {
        guard case .complete(let sdu, let kFrames) = sdus.push(pdu.payload, controller: pdu.controller, handle: pdu.handle,
                                                              cid: pdu.channelID, direction: pdu.direction,
                                                              record: record, issues: issues)
        else { return }
        pdu.complete(sdu: sdu, kFrames: kFrames)
        if sdu.isEmpty {
            issues.report(.emptyPDU, record: record.number, offset: record.offset,
                          "empty ATT PDU on \(L2CAPChannelID(rawValue: pdu.channelID))")
        }
    }

    /// A link closed (Disconnection Complete, status 0): its handle will be reused.
    @inline(never)
    public mutating func linkClosed(controller: UInt16, handle: UInt16) {
        reassembler.clear(controller: controller, handle: handle)
        channels.clear(controller: controller, handle: handle)
        sdus.clear(controller: controller, handle: handle)
    }

    /// HCI Reset, or the controller came or went: every link of it is gone.
    @inline(never)
    public mutating func forget(controller: UInt16) {
        reassembler.clear(controller: controller)
        channels.clear(controller: controller)
        sdus.clear(controller: controller)
    }
}
