import BTWire
import BTCapture

/// An HCI command: `opcode u16, plen u8, parameters` (Core Vol 4 Part E §5.4.1).
public struct HCICommandPacket {
    public static let headerLength = 3
    public var opcode: HCIOpcode
    public var declaredLength: Int
    public var parameters: UnsafeRawBufferPointer
}

/// An HCI event: `code u8, plen u8, parameters` (§5.4.4).
public struct HCIEventPacket {
    public static let headerLength = 2
    public var code: HCIEventCode
    public var declaredLength: Int
    public var parameters: UnsafeRawBufferPointer

    @inlinable
    public init(code: HCIEventCode, declaredLength: Int, parameters: UnsafeRawBufferPointer) {
        self.code = code
        self.declaredLength = declaredLength
        self.parameters = parameters
    }

    /// The LE Meta subevent code, when this is an LE Meta event.
    @inlinable public var subevent: LESubevent? {
        guard code == .leMeta, let first = parameters.first else { return nil }
        return LESubevent(rawValue: first)
    }

    /// Parameters after the subevent code.
    @inlinable public var subeventParameters: UnsafeRawBufferPointer {
        parameters.isEmpty ? parameters : UnsafeRawBufferPointer(rebasing: parameters[1...])
    }
}

/// ACL data: `handle:12, PB:2, BC:2` then `dlen u16` (§5.4.2).
public struct ACLPacket {
    public static let headerLength = 4
    public var handle: UInt16
    public var packetBoundary: PacketBoundary
    public var broadcast: UInt8
    public var declaredLength: Int
    public var data: UnsafeRawBufferPointer

    @inlinable
    public init(handle: UInt16, packetBoundary: PacketBoundary, broadcast: UInt8, declaredLength: Int,
                data: UnsafeRawBufferPointer) {
        self.handle = handle
        self.packetBoundary = packetBoundary
        self.broadcast = broadcast
        self.declaredLength = declaredLength
        self.data = data
    }

    /// From the header's first 16 bits (`handle:12, PB:2, BC:2`), its declared length and the data.
    @inlinable
    public init(header hf: UInt16, declaredLength: Int, data: UnsafeRawBufferPointer) {
        self.init(handle: hf & 0x0FFF, packetBoundary: PacketBoundary(rawValue: UInt8((hf >> 12) & 0x3)),
                  broadcast: UInt8(hf >> 14), declaredLength: declaredLength, data: data)
    }

    /// Packet boundary flag (Core Vol 4 Part E §5.4.2). Don't infer direction from it.
    public struct PacketBoundary: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// First fragment, non-flushable (LE hosts send this).
        public static let firstNonFlushable = PacketBoundary(rawValue: 0b00)
        public static let continuation = PacketBoundary(rawValue: 0b01)
        /// First fragment, flushable (LE controllers, BR/EDR).
        public static let firstFlushable = PacketBoundary(rawValue: 0b10)
        /// A complete L2CAP PDU (AMP, obsolete).
        public static let complete = PacketBoundary(rawValue: 0b11)
        public var isStart: Bool { rawValue != 0b01 }
        public var description: String {
            switch rawValue {
            case 0: "start (non-flushable)"
            case 1: "continuation"
            case 2: "start (flushable)"
            default: "complete"
            }
        }
    }

    /// Qualcomm controllers send their firmware's debug log to the host as ACL data whose header word is
    /// 0x2EDC: handle 0x0EDC, packet boundary "first, flushable" (Linux's hci_qca driver diverts these as
    /// `QCA_DEBUG_HANDLE`; Android's snoop log records them as ACL). Their payload is no L2CAP.
    public static let qualcommDebugLogHandle: UInt16 = 0x0EDC

    /// A received packet with the Qualcomm debug-log header. `PacketDecoder` takes it for the log unless a
    /// Connection Complete gave a link that handle (controllers that number links upwards reach it).
    @inlinable public func isQualcommDebugLog(direction: Direction) -> Bool {
        handle == Self.qualcommDebugLogHandle && packetBoundary == .firstFlushable && direction != .sent
    }
}

/// SCO data: `handle:12, status:2, reserved:2` then `dlen u8` (§5.4.3).
public struct SCOPacket {
    public static let headerLength = 3
    public var handle: UInt16
    public var packetStatus: UInt8
    public var declaredLength: Int
    public var data: UnsafeRawBufferPointer
}

/// ISO data: `handle:12, PB:2, TS:1` then `len:14` (§5.4.5).
public struct ISOPacket {
    public static let headerLength = 4
    public var handle: UInt16
    public var packetBoundary: UInt8
    public var hasTimestamp: Bool
    public var declaredLength: Int
    public var data: UnsafeRawBufferPointer
}

/// One HCI packet, its parts borrowed from the record.
public enum HCIPacket {
    case command(HCICommandPacket)
    case event(HCIEventPacket)
    case acl(ACLPacket)
    case sco(SCOPacket)
    case iso(ISOPacket)

    /// Why an HCI packet could not be taken apart.
    public enum ParseFailure: Error {
        /// Shorter than the packet header.
        case shorterThanHeader(needed: Int, got: Int)
        /// The header announces more parameter bytes than the record holds.
        case shorterThanDeclared(declared: Int, got: Int)

        public var message: String {
            switch self {
            case .shorterThanHeader(let n, let g): "packet of \(g) bytes is shorter than its \(n)-byte header"
            case .shorterThanDeclared(let d, let g): "header declares \(d) bytes but \(g) follow"
            }
        }
    }

    /// Splits an HCI packet of `kind`. Extra bytes beyond the declared length are ignored; fewer is a failure
    /// unless `cutShortByCapture` (snap length), in which case what is there is kept.

    public static func parse(kind: RecordKind, _ b: UnsafeRawBufferPointer, cutShortByCapture: Bool = false)
        -> Result<HCIPacket, ParseFailure>?
    {
        switch kind {
        case .command:
            guard b.count >= HCICommandPacket.headerLength else {
                return .failure(.shorterThanHeader(needed: HCICommandPacket.headerLength, got: b.count))
            }
            let opcode = UInt16(b[0]) | UInt16(b[1]) << 8
            let length = Int(b[2])
            guard let params = body(b, HCICommandPacket.headerLength, length, cutShortByCapture) else {
                return .failure(.shorterThanDeclared(declared: length, got: b.count - HCICommandPacket.headerLength))
            }
            return .success(.command(HCICommandPacket(opcode: HCIOpcode(rawValue: opcode), declaredLength: length,
                                                      parameters: params)))
        case .event:
            guard b.count >= HCIEventPacket.headerLength else {
                return .failure(.shorterThanHeader(needed: HCIEventPacket.headerLength, got: b.count))
            }
            let length = Int(b[1])
            guard let params = body(b, HCIEventPacket.headerLength, length, cutShortByCapture) else {
                return .failure(.shorterThanDeclared(declared: length, got: b.count - HCIEventPacket.headerLength))
            }
            return .success(.event(HCIEventPacket(code: HCIEventCode(rawValue: b[0]), declaredLength: length,
                                                  parameters: params)))
        case .acl:
            guard b.count >= ACLPacket.headerLength else {
                return .failure(.shorterThanHeader(needed: ACLPacket.headerLength, got: b.count))
            }
            let hf = UInt16(b[0]) | UInt16(b[1]) << 8
            let length = Int(UInt16(b[2]) | UInt16(b[3]) << 8)
            guard let data = body(b, ACLPacket.headerLength, length, cutShortByCapture) else {
                return .failure(.shorterThanDeclared(declared: length, got: b.count - ACLPacket.headerLength))
            }
            return .success(.acl(ACLPacket(header: hf, declaredLength: length, data: data)))
        case .sco:
            guard b.count >= SCOPacket.headerLength else {
                return .failure(.shorterThanHeader(needed: SCOPacket.headerLength, got: b.count))
            }
            let hf = UInt16(b[0]) | UInt16(b[1]) << 8
            let length = Int(b[2])
            guard let data = body(b, SCOPacket.headerLength, length, cutShortByCapture) else {
                return .failure(.shorterThanDeclared(declared: length, got: b.count - SCOPacket.headerLength))
            }
            return .success(.sco(SCOPacket(handle: hf & 0x0FFF, packetStatus: UInt8((hf >> 12) & 0x3),
                                           declaredLength: length, data: data)))
        case .iso:
            guard b.count >= ISOPacket.headerLength else {
                return .failure(.shorterThanHeader(needed: ISOPacket.headerLength, got: b.count))
            }
            let hf = UInt16(b[0]) | UInt16(b[1]) << 8
            let length = Int((UInt16(b[2]) | UInt16(b[3]) << 8) & 0x3FFF)
            guard let data = body(b, ISOPacket.headerLength, length, cutShortByCapture) else {
                return .failure(.shorterThanDeclared(declared: length, got: b.count - ISOPacket.headerLength))
            }
            return .success(.iso(ISOPacket(handle: hf & 0x0FFF, packetBoundary: UInt8((hf >> 12) & 0x3),
                                           hasTimestamp: hf & 0x4000 != 0, declaredLength: length, data: data)))
        default:
            return nil
        }
    }

    @inlinable @inline(__always)
    static func body(_ b: UnsafeRawBufferPointer, _ header: Int, _ length: Int, _ allowShort: Bool)
        -> UnsafeRawBufferPointer?
    {
        let available = b.count - header
        if available >= length { return UnsafeRawBufferPointer(rebasing: b[header..<header + length]) }
        return allowShort ? UnsafeRawBufferPointer(rebasing: b[header...]) : nil
    }
}
