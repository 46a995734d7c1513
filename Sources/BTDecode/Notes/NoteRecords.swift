import BTWire
import BTCapture

/// Decoders for the records that are not HCI packets: Linux monitor index and control records
/// (BlueZ monitor/packet.c) and PacketLogger text and syslog records (Wireshark packet-packetlogger.c).
/// Off the hot path: they build Strings.
public enum NoteRecord {
    /// Monitor NEW_INDEX: `type u8, bus u8, bdaddr[6], name[8]`.
    case newIndex(type: UInt8, bus: UInt8, address: BDAddr, name: String)
    /// Monitor INDEX_INFO: `bdaddr[6], manufacturer u16`.
    case indexInfo(address: BDAddr, manufacturer: CompanyID)
    /// Monitor SYSTEM_NOTE, PacketLogger text records (kernel, error, power, note, config).
    case text(label: String, text: String)
    /// Monitor USER_LOGGING: `priority u8, ident_len u8, ident, message`.
    case userLogging(priority: UInt8, ident: String, message: String)
    /// PacketLogger syslog (0xF7): `pid u32 LE, msg_type u8`, then NUL-terminated process, sender, subsystem,
    /// category and message.
    case syslog(pid: UInt32, process: String, subsystem: String, category: String, message: String)
    /// Monitor CTRL_OPEN: `cookie u32, format u16, version u8, revision u16, flags u32, ident_len u8, ident`.
    case controlOpen(cookie: UInt32, format: UInt16, ident: String)
    case controlClose(cookie: UInt32)
    /// Monitor CTRL_COMMAND / CTRL_EVENT: `cookie u32, mgmt_opcode u16, params`.
    case controlMessage(isCommand: Bool, cookie: UInt32, opcode: UInt16, parameters: UnsafeRawBufferPointer)
    case empty(RecordKind)
    case opaque(RecordKind, UnsafeRawBufferPointer)

    /// NEW_INDEX bus names (BlueZ hci_bus).
    public static let busNames = ["virtual", "USB", "PCCARD", "UART", "RS232", "PCI", "SDIO", "SPI", "I2C", "SMD",
                                  "VIRTIO", "IPC"]
    /// mgmt socket formats of CTRL_OPEN.
    public static let controlFormats: [UInt16: String] = [0: "raw", 1: "user", 2: "mgmt"]
    /// PacketLogger text record labels.
    static let packetLoggerLabels: [UInt8: String] = [
        0xF8: "kernel", 0xF9: "kernel debug", 0xFA: "error", 0xFB: "power", 0xFC: "note", 0xFD: "config",
    ]

    public init(_ record: CaptureRecord) {
        let p = record.payload
        var r = ByteReader(p)
        let isPacketLogger = record.kind == .note && record.sourceType >= 0xF7 && record.sourceType <= 0xFD
        switch record.kind {
        case .controllerAdded where record.sourceType == UInt32(PacketLoggerReader.RecordType.newController):
            self = .text(label: "new controller", text: Self.cString(p))
        case .controllerAdded:
            guard let type = r.readU8(), let bus = r.readU8(), let address = r.readAddress() else { self = .opaque(record.kind, p); return }
            self = .newIndex(type: type, bus: bus, address: address, name: Self.cString(r.readRest()))
        case .controllerInfo:
            guard let address = r.readAddress(), let m = r.readU16() else { self = .opaque(record.kind, p); return }
            self = .indexInfo(address: address, manufacturer: CompanyID(rawValue: m))
        case .note where isPacketLogger && record.sourceType == 0xF7:
            guard let pid = r.readU32(), r.skip(1) else { self = .opaque(record.kind, p); return }
            var parts = Self.cStrings(r.readRest())
            while parts.count < 5 { parts.append("") }
            self = .syslog(pid: pid, process: parts[0], subsystem: parts[2], category: parts[3], message: parts[4])
        case .note where isPacketLogger:
            self = .text(label: Self.packetLoggerLabels[UInt8(record.sourceType)] ?? "note", text: Self.cString(p))
        case .note where record.sourceType == UInt32(MonitorOpcode.userLogging):
            guard let priority = r.readU8(), let identLength = r.readU8(), let ident = r.readBytes(Int(identLength))
            else { self = .opaque(record.kind, p); return }
            self = .userLogging(priority: priority, ident: Self.cString(ident), message: Self.cString(r.readRest()))
        case .note:
            self = .text(label: "system note", text: Self.cString(p))
        case .managementOpened:
            guard let cookie = r.readU32(), let format = r.readU16() else { self = .opaque(record.kind, p); return }
            var ident = ""
            if r.skip(7), let n = r.readU8(), let bytes = r.readBytes(Int(n)) { ident = Self.cString(bytes) }
            self = .controlOpen(cookie: cookie, format: format, ident: ident)
        case .managementClosed:
            guard let cookie = r.readU32() else { self = .opaque(record.kind, p); return }
            self = .controlClose(cookie: cookie)
        case .managementCommand, .managementEvent:
            guard let cookie = r.readU32(), let opcode = r.readU16() else { self = .opaque(record.kind, p); return }
            self = .controlMessage(isCommand: record.kind == .managementCommand, cookie: cookie, opcode: opcode,
                                   parameters: r.readRest())
        default:
            self = p.isEmpty ? .empty(record.kind) : .opaque(record.kind, p)
        }
    }

    /// Text up to the first NUL, invalid UTF-8 repaired.
    static func cString(_ bytes: UnsafeRawBufferPointer) -> String {
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
            .trimmingCharacters(in: " \n\r\t")
    }

    static func cStrings(_ bytes: UnsafeRawBufferPointer) -> [String] {
        bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self).trimmingCharacters(in: " \n\r\t")
        }
    }
}

extension NoteRecord: PacketDescribing {
    public var summary: String {
        switch self {
        case .newIndex(let type, let bus, let address, let name):
            let b = Int(bus) < Self.busNames.count ? Self.busNames[Int(bus)] : Hex.u8(bus)
            return "New Index \(name) \(address) (\(type == 0 ? "primary" : "AMP"), \(b))"
        case .indexInfo(let address, let m): return "Index Info \(address) manufacturer \(m)"
        case .text(let label, let text): return label.prefix(1).uppercased() + label.dropFirst() + ": " + text
        case .userLogging(_, let ident, let message): return "User Logging \(ident): \(message)"
        case .syslog(_, let process, _, _, let message): return "Syslog \(process): \(message)"
        case .controlOpen(let cookie, let format, let ident):
            return "Control Open \(ident.isEmpty ? "" : ident + " ")(\(Self.controlFormats[format] ?? Hex.u16(format)), cookie \(cookie))"
        case .controlClose(let cookie): return "Control Close (cookie \(cookie))"
        case .controlMessage(let isCommand, let cookie, let opcode, let parameters):
            return "MGMT \(isCommand ? "Command" : "Event") \(Hex.u16(opcode)) (cookie \(cookie)) \(parameters.count) bytes"
        case .empty(let kind): return Self.title(kind)
        case .opaque(let kind, let p): return "\(Self.title(kind)) \(p.count) bytes"
        }
    }

    public var fields: [DecodedField] {
        switch self {
        case .newIndex(let type, let bus, let address, let name):
            return [DecodedField("type", type == 0 ? "primary" : "AMP (\(type))"),
                    DecodedField("bus", Int(bus) < Self.busNames.count ? Self.busNames[Int(bus)] : Hex.u8(bus)),
                    DecodedField("address", "\(address)"), DecodedField("name", name)]
        case .indexInfo(let address, let m):
            return [DecodedField("address", "\(address)"), DecodedField("manufacturer", "\(m)")]
        case .text(_, let text): return [DecodedField("text", text)]
        case .userLogging(let priority, let ident, let message):
            return [DecodedField("priority", "\(priority)"), DecodedField("ident", ident), DecodedField("message", message)]
        case .syslog(let pid, let process, let subsystem, let category, let message):
            return [DecodedField("pid", "\(pid)"), DecodedField("process", process), DecodedField("subsystem", subsystem),
                    DecodedField("category", category), DecodedField("message", message)]
        case .controlOpen(let cookie, let format, let ident):
            return [DecodedField("cookie", "\(cookie)"), DecodedField("format", Self.controlFormats[format] ?? Hex.u16(format)),
                    DecodedField("ident", ident)]
        case .controlClose(let cookie): return [DecodedField("cookie", "\(cookie)")]
        case .controlMessage(_, let cookie, let opcode, let parameters):
            return [DecodedField("cookie", "\(cookie)"), DecodedField("opcode", Hex.u16(opcode)),
                    DecodedField("parameters", Hex.string(parameters, separator: " ", limit: 64))]
        case .empty: return []
        case .opaque(_, let p): return [DecodedField("data", Hex.string(p, separator: " ", limit: 64))]
        }
    }

    static func title(_ kind: RecordKind) -> String {
        "\(kind)".split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
