import BTWire

/// UART (H4) packet indicators (Core Vol 4 Part A §2).
public enum H4PacketType {
    public static let command: UInt8 = 0x01
    public static let acl: UInt8 = 0x02
    public static let sco: UInt8 = 0x03
    public static let event: UInt8 = 0x04
    public static let iso: UInt8 = 0x05

    @inlinable public static func kind(_ indicator: UInt8) -> RecordKind {
        switch indicator {
        case command: .command
        case acl: .acl
        case sco: .sco
        case event: .event
        case iso: .iso
        default: .unknown
        }
    }

    /// The indicator for an HCI packet of `kind` (the inverse of `kind(_:)`), nil for records that are not HCI
    /// packets.
    @inlinable public static func indicator(for kind: RecordKind) -> UInt8? {
        switch kind {
        case .command: command
        case .acl: acl
        case .sco: sco
        case .event: event
        case .iso: iso
        default: nil
        }
    }

    /// The direction a container's one direction bit gives an HCI packet: received for events whatever the
    /// record says (they only come from the controller), otherwise received only when known to be.
    @inlinable public static func isReceived(_ kind: RecordKind, _ direction: Direction) -> Bool {
        direction == .received || kind == .event
    }

    /// Direction implied by the packet type where the container has none (commands go to the controller,
    /// events come from it).
    @inlinable public static func impliedDirection(_ kind: RecordKind) -> Direction {
        switch kind {
        case .command: .sent
        case .event: .received
        default: .unknown
        }
    }
}

/// Linux monitor opcodes (BlueZ BTSNOOP_OPCODE_*, kernel HCI_MON_*), used by btsnoop datalink 2001, pcap
/// linktype 254 and the live monitor socket.
public enum MonitorOpcode {
    public static let newIndex: UInt16 = 0
    public static let deleteIndex: UInt16 = 1
    public static let command: UInt16 = 2
    public static let event: UInt16 = 3
    public static let aclTX: UInt16 = 4
    public static let aclRX: UInt16 = 5
    public static let scoTX: UInt16 = 6
    public static let scoRX: UInt16 = 7
    public static let openIndex: UInt16 = 8
    public static let closeIndex: UInt16 = 9
    public static let indexInfo: UInt16 = 10
    public static let vendorDiagnostic: UInt16 = 11
    public static let systemNote: UInt16 = 12
    public static let userLogging: UInt16 = 13
    public static let controlOpen: UInt16 = 14
    public static let controlClose: UInt16 = 15
    public static let controlCommand: UInt16 = 16
    public static let controlEvent: UInt16 = 17
    public static let isoTX: UInt16 = 18
    public static let isoRX: UInt16 = 19

    @inlinable public static func classify(_ opcode: UInt16) -> (RecordKind, Direction) {
        switch opcode {
        case newIndex: (.controllerAdded, .unknown)
        case deleteIndex: (.controllerRemoved, .unknown)
        case command: (.command, .sent)
        case event: (.event, .received)
        case aclTX: (.acl, .sent)
        case aclRX: (.acl, .received)
        case scoTX: (.sco, .sent)
        case scoRX: (.sco, .received)
        case openIndex: (.controllerOpened, .unknown)
        case closeIndex: (.controllerClosed, .unknown)
        case indexInfo: (.controllerInfo, .unknown)
        case vendorDiagnostic: (.vendorDiagnostic, .received)
        case systemNote, userLogging: (.note, .unknown)
        case controlOpen: (.managementOpened, .unknown)
        case controlClose: (.managementClosed, .unknown)
        case controlCommand: (.managementCommand, .sent)
        case controlEvent: (.managementEvent, .received)
        case isoTX: (.iso, .sent)
        case isoRX: (.iso, .received)
        default: (.unknown, .unknown)
        }
    }

    /// The opcode for an HCI packet kind and direction (for writing monitor captures).
    public static func opcode(kind: RecordKind, direction: Direction) -> UInt16? {
        switch (kind, direction) {
        case (.command, _): command
        case (.event, _): event
        case (.acl, .sent): aclTX
        case (.acl, _): aclRX
        case (.sco, .sent): scoTX
        case (.sco, _): scoRX
        case (.iso, .sent): isoTX
        case (.iso, _): isoRX
        default: nil
        }
    }

    public static let names: [UInt16: String] = [
        newIndex: "New Index", deleteIndex: "Delete Index", command: "Command", event: "Event", aclTX: "ACL TX",
        aclRX: "ACL RX", scoTX: "SCO TX", scoRX: "SCO RX", openIndex: "Open Index", closeIndex: "Close Index",
        indexInfo: "Index Info", vendorDiagnostic: "Vendor Diagnostic", systemNote: "System Note",
        userLogging: "User Logging", controlOpen: "Control Open", controlClose: "Control Close",
        controlCommand: "Control Command", controlEvent: "Control Event", isoTX: "ISO TX", isoRX: "ISO RX",
    ]
}
