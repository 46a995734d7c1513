import BTWire

/// Who sent a packet: the host (to the controller) or the controller (to the host).
public enum Direction: UInt8, Sendable, CustomStringConvertible {
    /// Host to controller ("sent", TX).
    case sent
    /// Controller to host ("received", RX).
    case received
    /// The container does not say (pcap linktype 187 ACL/SCO).
    case unknown

    public var description: String {
        switch self {
        case .sent: "sent"
        case .received: "received"
        case .unknown: "unknown"
        }
    }
}

/// What a record holds. The model follows the Linux monitor opcodes (BlueZ btsnoop.h), which every other
/// source maps onto, plus notes from PacketLogger and link-layer frames from air sniffers.
public enum RecordKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case command, event, acl, sco, iso
    /// Text: monitor SYSTEM_NOTE / USER_LOGGING, PacketLogger notes, syslog, power and config records.
    case note
    case controllerAdded, controllerRemoved, controllerOpened, controllerClosed, controllerInfo
    case vendorDiagnostic
    case managementOpened, managementClosed, managementCommand, managementEvent
    /// A frame from an air sniffer, the whole pcap record (`sourceType` is its linktype): LE link-layer packets
    /// (251, 256, 272, PPI), decoded by BTDecode's `LLDecoder`; BR/EDR baseband and user linktypes are only counted.
    case linkLayer
    /// A record of a type the container defines but btlens does not know; kept opaque.
    case unknown

    public var description: String {
        switch self {
        case .command: "command"
        case .event: "event"
        case .acl: "acl"
        case .sco: "sco"
        case .iso: "iso"
        case .note: "note"
        case .controllerAdded: "controller-added"
        case .controllerRemoved: "controller-removed"
        case .controllerOpened: "controller-opened"
        case .controllerClosed: "controller-closed"
        case .controllerInfo: "controller-info"
        case .vendorDiagnostic: "vendor-diagnostic"
        case .managementOpened: "mgmt-opened"
        case .managementClosed: "mgmt-closed"
        case .managementCommand: "mgmt-command"
        case .managementEvent: "mgmt-event"
        case .linkLayer: "link-layer"
        case .unknown: "unknown"
        }
    }

    public init?(name: String) {
        guard let k = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = k
    }

    public var isHCIPacket: Bool { self == .command || self == .event || self == .acl || self == .sco || self == .iso }
}

/// One record from any capture source. `payload` is borrowed from the reader's buffer and is valid only until
/// the reader's next call; copy what must outlive that.
public struct CaptureRecord {
    /// 1-based position in the capture.
    public var number: Int
    /// Byte offset of the record's header in the file (or stream).
    public var offset: Int64
    public var timestamp: Timestamp
    public var direction: Direction
    public var kind: RecordKind
    /// Controller index (hciN); 0 when the source has a single controller, `noController` for none.
    public var controller: UInt16
    /// The container's own type value (monitor opcode, H4 indicator, PacketLogger type), for display.
    public var sourceType: UInt32
    /// Length of the packet on the wire; more than `payload.count` when the capture cut it short.
    public var originalLength: Int
    /// The HCI packet without H4 indicator, or the note/monitor payload.
    public var payload: UnsafeRawBufferPointer
    /// Bytes the whole record takes in the file, header included (0 when unknown), so reports can point at it.
    public var length: Int = 0

    public static let noController: UInt16 = 0xFFFF

    public init(number: Int, offset: Int64, timestamp: Timestamp, direction: Direction, kind: RecordKind,
                controller: UInt16, sourceType: UInt32, originalLength: Int, payload: UnsafeRawBufferPointer) {
        self.number = number
        self.offset = offset
        self.timestamp = timestamp
        self.direction = direction
        self.kind = kind
        self.controller = controller
        self.sourceType = sourceType
        self.originalLength = originalLength
        self.payload = payload
    }

    /// True when the capture kept fewer bytes than were on the wire (snap length).
    public var isCutShort: Bool { originalLength > payload.count }
}
