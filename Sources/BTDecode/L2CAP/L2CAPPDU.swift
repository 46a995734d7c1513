import BTWire
import BTCapture

/// What protocol an L2CAP channel carries, from its fixed CID or from the signalling that opened it.
public enum L2CAPChannelProtocol: UInt8, Sendable, CustomStringConvertible {
    case brEdrSignaling
    case connectionless
    case att
    case leSignaling
    case smp
    case brEdrSMP
    /// A dynamic channel carrying ATT: PSM 0x001F over BR/EDR (basic mode), or EATT (PSM 0x0027, credit based).
    case dynamicATT
    case enhancedATT
    /// A dynamic channel for another PSM (SDP, RFCOMM, AVDTP, …), or one whose opening was not captured.
    case dynamic
    case unknownFixed

    public var carriesATT: Bool { self == .att || self == .dynamicATT || self == .enhancedATT }

    public var description: String {
        switch self {
        case .brEdrSignaling: "L2CAP signaling"
        case .connectionless: "connectionless"
        case .att: "ATT"
        case .leSignaling: "LE signaling"
        case .smp: "SMP"
        case .brEdrSMP: "BR/EDR SMP"
        case .dynamicATT: "ATT (dynamic channel)"
        case .enhancedATT: "EATT"
        case .dynamic: "dynamic channel"
        case .unknownFixed: "fixed channel"
        }
    }

    @inline(__always)
    public static func fixed(_ cid: UInt16) -> L2CAPChannelProtocol {
        switch cid {
        case L2CAPChannelID.signaling.rawValue: .brEdrSignaling
        case L2CAPChannelID.connectionless.rawValue: .connectionless
        case L2CAPChannelID.att.rawValue: .att
        case L2CAPChannelID.leSignaling.rawValue: .leSignaling
        case L2CAPChannelID.smp.rawValue: .smp
        case L2CAPChannelID.brEdrSMP.rawValue: .brEdrSMP
        default: cid >= L2CAPChannelID.firstDynamic ? .dynamic : .unknownFixed
        }
    }
}

/// A complete L2CAP PDU (basic header `length u16, cid u16`), with the context BlueZ's `l2cap_frame` carries:
/// controller, connection handle, direction and the record(s) it came from. `payload` is borrowed from the
/// record or from the reassembler's buffer and is valid until the decoder's next call.
public struct L2CAPPDU {
    public static let headerLength = 4

    // Declared smallest-first after the 16-bit fields so the struct packs into 64 bytes: every decoded frame
    // carries one, and a larger frame is copied with a library call per record.
    public var controller: UInt16
    public var handle: UInt16
    public var direction: Direction
    public var channel: L2CAPChannelProtocol
    public var channelID: UInt16
    /// The channel, numbered the same in both directions (`ChannelMap.Channel.bearer`): a request and its
    /// response on a dynamic channel travel on different CIDs but share this.
    public var bearer: UInt32
    /// K-frames the SDU arrived in (more than 1 when the sender segmented it); 0 when no SDU was completed.
    public var kFrames: UInt16 = 0
    var sduLength: UInt16 = 0
    /// Information payload (after the basic header).
    public var payload: UnsafeRawBufferPointer
    /// Record where the PDU began (its first fragment) and its byte offset.
    public var firstRecord: Int
    public var firstOffset: Int64
    /// ACL fragments the PDU arrived in.
    public var fragments: Int
    var sduStart: UnsafeRawPointer?

    /// On EATT (credit-based) channels: the SDU this K-frame completed, without its SDU length; nil while the SDU
    /// continues in later K-frames or when the K-frame was malformed. Set by `PacketDecoder`.
    public var sdu: UnsafeRawBufferPointer? {
        kFrames == 0 ? nil : UnsafeRawBufferPointer(start: sduStart, count: Int(sduLength))
    }

    /// Records the SDU this K-frame completed (at most 65 535 bytes, the SDU length field's range).
    mutating func complete(sdu: UnsafeRawBufferPointer, kFrames: Int) {
        sduStart = sdu.baseAddress
        sduLength = UInt16(truncatingIfNeeded: sdu.count)
        self.kFrames = UInt16(clamping: max(1, kFrames))
    }

    public init(controller: UInt16, handle: UInt16, direction: Direction, channelID: UInt16,
                channel: L2CAPChannelProtocol, bearer: UInt32, payload: UnsafeRawBufferPointer, firstRecord: Int,
                firstOffset: Int64, fragments: Int) {
        self.controller = controller
        self.handle = handle
        self.direction = direction
        self.channelID = channelID
        self.channel = channel
        self.bearer = bearer
        self.payload = payload
        self.firstRecord = firstRecord
        self.firstOffset = firstOffset
        self.fragments = fragments
    }

    /// The ATT PDU for ATT-carrying channels: the payload, or on EATT the reassembled SDU (nil until complete).
    public var attPayload: UnsafeRawBufferPointer? {
        switch channel {
        case .att, .dynamicATT: return payload
        case .enhancedATT: return sdu
        default: return nil
        }
    }
}
