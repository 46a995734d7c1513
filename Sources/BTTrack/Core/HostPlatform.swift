import BTWire
import BTCapture
import BTDecode

/// The operating system of the host that recorded the capture, where the capture shows it. Some behaviour is
/// the platform's, not the app's — Android's `discoverServices()` always discovers everything, Android's
/// controller scans with duplicate filtering off for every client — and findings say so.
public enum HostPlatform: String, Sendable, CaseIterable {
    case iOS = "ios"
    case macOS = "macos"
    /// An Apple system whose kind the capture does not say (PacketLogger records from either).
    case apple
    case android
    /// Linux with BlueZ (its monitor records).
    case linux
    /// BTstack, an embedded stack that writes PacketLogger files of its own (its log lines as notes): the
    /// app drives the stack directly, on whatever system.
    case btstack

    public var name: String {
        switch self {
        case .iOS: "iOS"
        case .macOS: "macOS"
        case .apple: "iOS or macOS"
        case .android: "Android"
        case .linux: "Linux (BlueZ)"
        case .btstack: "BTstack"
        }
    }

    public var isApple: Bool { self == .iOS || self == .macOS || self == .apple }
}

/// What the capture showed of its host's platform, and the first thing that showed it.
public struct PlatformEvidence: Sendable, Equatable {
    public internal(set) var platform: HostPlatform?
    /// In words: `Android vendor command 0xfd57 (LE Advertising Packet Content Filter)`.
    public internal(set) var evidence: String?

    /// Notes read for evidence: each is decoded into text, and an Apple capture can hold a syslog line for every
    /// few packets, so only the first ones are read (device information comes at the start).
    static let notesRead = 512
    var notesSeen = 0

    public init() {}

    /// Android's LE vendor commands (AOSP hcidefs.h, OGF 0x3F OCF 0x153–0x15A): only Android's stack sends them.
    static let androidVendorCommands: ClosedRange<UInt16> = 0xFD53...0xFD5A

    /// Words in PacketLogger notes (its device-information and system records) that name the system.
    static let iOSWords = ["iPhone", "iPad", "iPod", "iOS", "watchOS", "Apple Watch"]
    static let macOSWords = ["macOS", "Mac OS", "MacBook", "iMac", "Mac mini", "Mac Pro", "Macmini", "Macintosh"]

    /// BTstack's log lines: `hci.c.2862: hci_power_control: …`, or its well-known messages without the source.
    static func isBTstackLog(_ text: String) -> Bool {
        if text.contains("hci_power_control") || text.contains("hci_transport_") || text.lowercased().contains("btstack") { return true }
        // "file.c.123: " at the start.
        guard let colon = text.firstIndex(of: ":") else { return false }
        let head = text[..<colon]
        let parts = head.split(separator: ".")
        return parts.count == 3 && parts[1] == "c" && !parts[0].isEmpty && parts[2].allSatisfy(\.isNumber)
    }

    mutating func set(_ p: HostPlatform, _ why: String) {
        // A more specific Apple system refines `apple`, and so does BTstack (whose files are PacketLogger's
        // format); anything else keeps the first evidence.
        if platform == nil || (platform == .apple && (p.isApple || p == .btstack)) {
            platform = p
            evidence = why
        }
    }

    mutating func format(_ f: CaptureFormat) {
        switch f {
        case .packetLogger: set(.apple, "Apple PacketLogger capture")
        case .btsnooz: set(.android, "btsnooz summary from an Android bug report")
        case .btsnoozLog: set(.android, "btsnooz log from an Android bug report")
        case .btsnoop(let datalink) where datalink == BTSnoopDatalink.monitor: set(.linux, "BlueZ monitor capture (btsnoop 2001)")
        default: break
        }
    }

    /// Every HCI command: one range check.
    @inline(__always)
    mutating func command(_ opcode: HCIOpcode) {
        guard platform != .android, Self.androidVendorCommands.contains(opcode.rawValue) else { return }
        androidCommand(opcode)
    }

    @inline(never)
    mutating func androidCommand(_ opcode: HCIOpcode) {
        set(.android, "Android vendor command \(Hex.u16(opcode.rawValue).lowercased()) (\(opcode.name ?? "vendor"))")
    }

    /// A note record (PacketLogger text and syslog, monitor notes): off the hot path.
    mutating func note(_ record: CaptureRecord) {
        guard platform == nil || platform == .apple, notesSeen < Self.notesRead else { return }
        notesSeen += 1
        let text: String
        switch NoteRecord(record) {
        case .text(_, let t): text = t
        case .syslog(_, let process, let subsystem, _, let message): text = "\(process) \(subsystem) \(message)"
        case .userLogging(_, let ident, let message): text = "\(ident) \(message)"
        default: return
        }
        if Self.isBTstackLog(text) {
            set(.btstack, "BTstack log lines in the capture's notes")
        } else if let word = Self.iOSWords.first(where: { text.contains($0) }) {
            set(.iOS, "a capture note names \(word)")
        } else if let word = Self.macOSWords.first(where: { text.contains($0) }) {
            set(.macOS, "a capture note names \(word)")
        } else if record.sourceType >= 0xF7 && record.sourceType <= 0xFE {
            set(.apple, "Apple PacketLogger notes")
        }
    }
}
