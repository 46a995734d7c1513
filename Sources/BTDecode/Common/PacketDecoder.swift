import BTWire
import BTCapture

/// One record after decoding: its HCI packet and, when this record completed one, an L2CAP PDU. Every part is
/// borrowed from the record or the decoder and valid until the decoder's next call.
public struct DecodedFrame {
    public var record: CaptureRecord
    public var hci: HCIPacket?
    public var l2cap: L2CAPPDU?
    /// Problems were reported for this record.
    public var isMalformed = false
    /// For Command Complete / Command Status: the record of the command it answers, when seen.
    public var commandRecord: Int?
    /// Reports inside an LE (Extended) Advertising Report event.
    public var advertisingReports = 0
    /// An ACL packet that is a Qualcomm controller's debug log (`ACLPacket.isQualcommDebugLog`), not L2CAP.
    public var isControllerDebugLog = false
    /// An air sniffer's LE link-layer packet (`.linkLayer` records). The L2CAP PDU its data PDU completed is in
    /// `l2cap`, as for ACL; the tracker reads `l2cap` only beside an HCI ACL packet, so air frames open no link.
    /// Valid until the next record is decoded, as the payload is.
    public var linkLayer: LLFrame? { linkLayerSlot?.takeUnretainedValue().frame }
    /// The decoder's one slot for it: a frame is copied for every record (a few hundred bytes), so the link-layer
    /// packet (about as big again) stays out of it, behind a reference that costs no retain.
    var linkLayerSlot: Unmanaged<LLFrameSlot>?

    public init(record: CaptureRecord) { self.record = record }

    /// The ATT PDU bytes when this frame completed an ATT PDU.
    @inlinable public var attPDU: UnsafeRawBufferPointer? {
        guard let l2 = l2cap, l2.channel.carriesATT else { return nil }
        return l2.attPayload
    }
}

/// A record `PacketDecoder.plainPacket` found needs no decoding beyond its parts.
public enum PlainPacket {
    /// An LE (Extended) Advertising Report event's subevent and the parameters after it.
    case advertisingReports(LESubevent, UnsafeRawBufferPointer)
    case acl(ACLPacket)
}

/// Decodes records into frames: HCI packets, ACL → L2CAP reassembly, the channel map for dynamic ATT channels,
/// and the link from Command Complete/Status to their command. Holds only per-connection state.
public struct PacketDecoder {
    public let issues: IssueLog
    public private(set) var l2cap = L2CAPDecoder()
    public var reassembler: ACLReassembler { l2cap.reassembler }
    public var sdus: SDUReassembler { l2cap.sdus }
    /// (controller << 16 | opcode) → record number of the last such command, when `linksCommands`.
    var lastCommand: [UInt32: Int] = [:]
    /// Link Command Complete/Status to the record of their command (`DecodedFrame.commandRecord`). Only the
    /// verbose decode shows it, so the other pipelines leave it off and skip a hash per command and answer.
    public var linksCommands = false
    /// Commands remembered at most; a corrupt capture cannot grow the table beyond it.
    static let maximumLinkedCommands = 4096
    /// Controllers that gave a link handle 0x0EDC (a Connection Complete said so): there that handle carries
    /// L2CAP, not the Qualcomm debug log (`ACLPacket.isQualcommDebugLog`).
    var debugLogHandleIsLink: Set<UInt16> = []
    /// Walk every advertising report to count it and check the event's layout. A consumer that walks the
    /// reports itself (the tracker) turns this off and reports bad layouts, so each report is read once.
    public var validatesAdvertisingReports = true
    /// Air-sniffer records: per access address state, and L2CAP over LL fragments.
    public let linkLayer = LLDecoder()

    public init(issues: IssueLog) { self.issues = issues }

    public mutating func decode(_ record: CaptureRecord) -> DecodedFrame {
        guard record.kind.isHCIPacket else {
            if record.kind == .controllerAdded || record.kind == .controllerRemoved { forget(controller: record.controller) }
            return decodeOther(record)
        }
        var frame = DecodedFrame(record: record)
        let issuesBefore = issues.count
        decodeHCI(record, l2cap: true, into: &frame)
        frame.isMalformed = issues.count != issuesBefore
        return frame
    }

    /// As `decode`, for a `.linkLayer` record (an air sniffer's packet), built in the caller's frame: `decode`
    /// returns such frames from `decodeOther`, out of line, which copies each one (6 % of air `stats`); bringing
    /// the air path into `decode` itself made HCI `stats` 5 % slower.
    @inline(__always)
    public func decodeLinkLayer(_ record: CaptureRecord) -> DecodedFrame {
        var frame = DecodedFrame(record: record)
        let issuesBefore = issues.count
        linkLayer.decode(record, issues: issues, into: &frame)
        frame.isMalformed = issues.count != issuesBefore
        return frame
    }

    /// As `decode`, without reassembling ACL data into L2CAP PDUs (`DecodedFrame.l2cap` stays nil): for tracking
    /// on two threads, which decodes L2CAP on the link thread (its own `L2CAPDecoder`, which reports the L2CAP
    /// issues). The same body as `decode`: a flag, or a shared helper, makes `decode` copy its frame.
    public mutating func decodeWithoutL2CAP(_ record: CaptureRecord) -> DecodedFrame {
        // Air records are decoded whole there: their L2CAP is the link layer's, not the link thread's.
        guard record.kind.isHCIPacket else {
            if record.kind == .controllerAdded || record.kind == .controllerRemoved { forget(controller: record.controller) }
            return decodeOther(record)
        }
        var frame = DecodedFrame(record: record)
        let issuesBefore = issues.count
        decodeHCI(record, l2cap: false, into: &frame)
        frame.isMalformed = issues.count != issuesBefore
        return frame
    }

    /// The record as a packet that decoding without L2CAP (`decodeWithoutL2CAP`) would only take apart, or nil: a
    /// whole LE (Extended) Advertising Report event when reports are not validated here, or a whole ACL packet on
    /// a handle other than the debug log's. These are nearly every record of a capture; the tracker's reading
    /// loop takes them without a decoded frame (a few hundred bytes built and copied per record), and decodes the
    /// others. Anything short, cut or unusual goes the usual way, so issues are reported as they always are.
    @inlinable @inline(__always)
    public func plainPacket(_ record: CaptureRecord) -> PlainPacket? {
        let b = record.payload
        switch record.kind {
        case .event:
            guard !validatesAdvertisingReports, b.count >= HCIEventPacket.headerLength,
                  let parameters = HCIPacket.body(b, HCIEventPacket.headerLength, Int(b[1]), false)
            else { return nil }
            let event = HCIEventPacket(code: HCIEventCode(rawValue: b[0]), declaredLength: Int(b[1]),
                                       parameters: parameters)
            guard let sub = event.subevent, sub == .advertisingReport || sub == .extendedAdvertisingReport
            else { return nil }
            return .advertisingReports(sub, event.subeventParameters)
        case .acl:
            guard b.count >= ACLPacket.headerLength else { return nil }
            let length = Int(UInt16(b[2]) | UInt16(b[3]) << 8)
            guard let data = HCIPacket.body(b, ACLPacket.headerLength, length, false) else { return nil }
            let acl = ACLPacket(header: UInt16(b[0]) | UInt16(b[1]) << 8, declaredLength: length, data: data)
            return acl.handle == ACLPacket.qualcommDebugLogHandle ? nil : .acl(acl)
        default:
            return nil
        }
    }

    @inline(__always)
    mutating func decodeHCI(_ record: CaptureRecord, l2cap decodesL2CAP: Bool, into frame: inout DecodedFrame) {
        switch HCIPacket.parse(kind: record.kind, record.payload, cutShortByCapture: record.isCutShort) {
        case .none:
            return
        case .failure(let failure)?:
            issues.report(.shortPacket, record: record.number, offset: record.offset,
                          "\(record.kind) \(failure.message)")
        case .success(let packet)?:
            frame.hci = packet
            switch packet {
            case .command(let command):
                if linksCommands {
                    if lastCommand.count >= Self.maximumLinkedCommands { lastCommand.removeAll(keepingCapacity: true) }
                    lastCommand[UInt32(record.controller) << 16 | UInt32(command.opcode.rawValue)] = record.number
                }
            case .event(let event):
                decodeEvent(event, record: record, frame: &frame)
            case .acl(let acl):
                decodeACL(acl, record: record, l2cap: decodesL2CAP, frame: &frame)
            case .sco, .iso:
                break
            }
        }
    }

    @inline(__always)
    mutating func decodeEvent(_ event: HCIEventPacket, record: CaptureRecord, frame: inout DecodedFrame) {
        switch event.code {
        case .leMeta:
            guard let sub = event.subevent else {
                issues.report(.badParameters, record: record.number, offset: record.offset, "LE Meta event without subevent")
                return
            }
            if validatesAdvertisingReports && (sub == .advertisingReport || sub == .extendedAdvertisingReport) {
                var reports = AdvertisingReportIterator(subevent: sub, parameters: event.subeventParameters)
                var n = 0
                while reports.skip() { n += 1 }
                frame.advertisingReports = n
                if reports.isMalformed {
                    issues.report(.badParameters, record: record.number, offset: record.offset,
                                  "\(sub) declares \(reports.declaredCount) reports, \(n) fit in the event")
                }
            } else if sub == .connectionComplete || sub == .enhancedConnectionComplete
                        || sub == .enhancedConnectionCompleteV2 {
                linkCameUp(event.subeventParameters, controller: record.controller)  // status, handle
            }
        case .commandComplete:
            guard event.parameters.count >= 3 else {
                issues.report(.badParameters, record: record.number, offset: record.offset, "Command Complete too short")
                return
            }
            let opcode = UInt16(event.parameters[1]) | UInt16(event.parameters[2]) << 8
            if linksCommands { frame.commandRecord = lastCommand[UInt32(record.controller) << 16 | UInt32(opcode)] }
            if opcode == HCIOpcode.reset.rawValue { forget(controller: record.controller) }
        case .commandStatus:
            guard event.parameters.count >= 4 else {
                issues.report(.badParameters, record: record.number, offset: record.offset, "Command Status too short")
                return
            }
            let opcode = UInt16(event.parameters[2]) | UInt16(event.parameters[3]) << 8
            if linksCommands { frame.commandRecord = lastCommand[UInt32(record.controller) << 16 | UInt32(opcode)] }
        case .disconnectionComplete:
            guard let d = DisconnectionComplete(event.parameters) else {
                issues.report(.badParameters, record: record.number, offset: record.offset,
                              "Disconnection Complete too short")
                return
            }
            if d.status == .success {
                if d.handle == ACLPacket.qualcommDebugLogHandle { debugLogHandleIsLink.remove(record.controller) }
                l2cap.linkClosed(controller: record.controller, handle: d.handle)
            }
        case .connectionComplete, .synchronousConnectionComplete:
            linkCameUp(event.parameters, controller: record.controller)  // status, handle
        default:
            break
        }
    }

    /// A Connection Complete (`status, handle, …`): only a link given handle 0x0EDC matters here.
    @inline(__always)
    mutating func linkCameUp(_ p: UnsafeRawBufferPointer, controller: UInt16) {
        guard p.count >= 3, p[0] == HCIStatus.success.rawValue,
              (UInt16(p[1]) | UInt16(p[2]) << 8) & 0x0FFF == ACLPacket.qualcommDebugLogHandle
        else { return }
        debugLogHandleIsLink.insert(controller)
    }

    /// Records that are not HCI packets (an air sniffer's link-layer packet, notes, controllers coming and going).
    /// Out of line, returning its own frame and changing nothing of `self`: a frame passed `inout` to a call made
    /// `decode` copy every frame, and a mutating call made it check its tables' uniqueness at every record.
    @inline(never)
    func decodeOther(_ record: CaptureRecord) -> DecodedFrame {
        record.kind == .linkLayer ? decodeLinkLayer(record) : DecodedFrame(record: record)
    }

    /// HCI Reset, or the controller came or went: its links are gone, and handles will be reused, so partial
    /// PDUs and learnt channels of that controller are dropped (as the tracker drops its links).
    mutating func forget(controller: UInt16) {
        debugLogHandleIsLink.remove(controller)
        l2cap.forget(controller: controller)
    }

    @inline(__always)
    mutating func decodeACL(_ acl: ACLPacket, record: CaptureRecord, l2cap decodesL2CAP: Bool, frame: inout DecodedFrame) {
        if acl.handle == ACLPacket.qualcommDebugLogHandle && isControllerDebugLog(acl, record: record) {
            frame.isControllerDebugLog = true  // not L2CAP: reassembling it would invent PDUs and errors
            return
        }
        guard decodesL2CAP else { return }
        frame.l2cap = l2cap.decode(acl, record: record, issues: issues)
    }

    /// The packet is the Qualcomm debug log, not a link's data. Out of line: it runs only for handle 0x0EDC, and
    /// inlined into `decode` its set lookup would make every frame be copied rather than built in place.
    @inline(never)
    func isControllerDebugLog(_ acl: ACLPacket, record: CaptureRecord) -> Bool {
        acl.isQualcommDebugLog(direction: record.direction) && !debugLogHandleIsLink.contains(record.controller)
    }
}
