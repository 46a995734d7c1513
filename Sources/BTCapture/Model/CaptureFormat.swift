/// The container format of a capture, decided from its content.
public enum CaptureFormat: Hashable, Sendable, CustomStringConvertible {
    case btsnoop(datalink: UInt32)
    case pcap(linktype: Int)
    case pcapng(linktype: Int)
    case packetLogger(bigEndian: Bool)
    /// The btsnooz summary in an Android bug report's text (only the last packets, ACL payloads cut).
    case btsnooz(version: Int)
    /// Android's btsnooz records (version 2, uncompressed) behind a btsnoop file header, as some phones write
    /// `btsnooz_hci.log`: the same caveat as the summary's, and no absolute time base.
    case btsnoozLog

    /// The `format` value of `stats --json`.
    public var name: String {
        switch self {
        case .btsnoop(let d):
            switch d {
            case BTSnoopDatalink.h1: "btsnoop-h1"
            case BTSnoopDatalink.h4: "btsnoop-h4"
            case BTSnoopDatalink.monitor: "btsnoop-monitor"
            default: "btsnoop-\(d)"
            }
        case .pcap: "pcap"
        case .pcapng: "pcapng"
        case .packetLogger: "pklg"
        case .btsnooz, .btsnoozLog: "btsnooz"
        }
    }

    /// pcap LINKTYPE for pcap/pcapng, the datalink for btsnoop, nil for PacketLogger.
    public var linktype: Int? {
        switch self {
        case .btsnoop(let d): Int(d)
        case .pcap(let l), .pcapng(let l): l
        case .packetLogger, .btsnooz, .btsnoozLog: nil
        }
    }

    /// Whether record times are clock times; false when they only count from the first record (the
    /// btsnoop-headed btsnooz log), so they say nothing about whether two captures follow or overlap.
    public var hasAbsoluteTime: Bool { self != .btsnoozLog }

    /// pcap or pcapng, whose linktype is a pcap LINKTYPE.
    public var isPcapFamily: Bool {
        switch self {
        case .pcap, .pcapng: true
        default: false
        }
    }

    public var description: String {
        if let l = linktype { return "\(name) (linktype \(l))" }
        return name
    }
}

/// btsnoop datalink values (BlueZ src/shared/btsnoop.h).
public enum BTSnoopDatalink {
    public static let h1: UInt32 = 1001
    public static let h4: UInt32 = 1002
    public static let bcsp: UInt32 = 1003
    public static let h5: UInt32 = 1004
    public static let monitor: UInt32 = 2001
    public static let simulator: UInt32 = 2002
}

/// pcap LINKTYPE values btlens knows (tcpdump.org linktypes, libpcap pcap/dlt.h).
public enum Linktype {
    public static let ethernet = 1
    public static let rawIP = 101
    public static let ieee80211 = 105
    public static let linuxCooked = 113
    public static let bluetoothHCIH4 = 187
    public static let bluetoothHCIH4WithPHDR = 201
    public static let bluetoothLinuxMonitor = 254
    public static let bluetoothLELL = 251
    public static let bluetoothLELLWithPHDR = 256
    public static let nordicBLE = 272
    public static let ppi = 192
    public static let user0 = 147
    public static let user15 = 162
    public static let bluetoothBREDRBB = 255

    /// Air-sniffer linktypes: recognised and read as `.linkLayer` records (`isLELinkLayer` ones are decoded).
    public static func isLinkLayerSniffer(_ l: Int) -> Bool {
        l == bluetoothLELL || l == bluetoothLELLWithPHDR || l == nordicBLE || l == ppi || l == bluetoothBREDRBB
            || (user0...user15).contains(l)
    }

    /// The air-sniffer linktypes whose records hold LE link-layer packets, which BTDecode decodes.
    public static func isLELinkLayer(_ l: Int) -> Bool {
        l == bluetoothLELL || l == bluetoothLELLWithPHDR || l == nordicBLE || l == ppi
    }

    public static func name(_ l: Int) -> String {
        switch l {
        case ethernet: "Ethernet"
        case rawIP: "raw IP"
        case ieee80211: "IEEE 802.11"
        case linuxCooked: "Linux cooked"
        case bluetoothHCIH4: "Bluetooth HCI H4"
        case ppi: "PPI"
        case bluetoothHCIH4WithPHDR: "Bluetooth HCI H4 with pseudo-header"
        case bluetoothLELL: "Bluetooth LE link layer"
        case bluetoothLinuxMonitor: "Bluetooth Linux monitor"
        case bluetoothBREDRBB: "Bluetooth BR/EDR baseband"
        case bluetoothLELLWithPHDR: "Bluetooth LE link layer with pseudo-header"
        case nordicBLE: "Nordic BLE sniffer"
        default: "linktype \(l)"
        }
    }
}

/// The words that open pcap and pcapng files (libpcap sf-pcap.c and sf-pcapng.c, the tcpdump.org pcap and
/// pcapng specifications), as read big-endian: a little-endian writer's file holds them byte-swapped.
public enum PcapMagic {
    /// pcap with microsecond timestamps.
    public static let microseconds: UInt32 = 0xA1B2_C3D4
    /// pcap with nanosecond timestamps.
    public static let nanoseconds: UInt32 = 0xA1B2_3C4D
    /// The pcapng Section Header Block type, which reads the same in both byte orders.
    public static let pcapngSection: UInt32 = 0x0A0D_0D0A
    /// The pcapng byte-order magic, after the section header's type and length.
    public static let pcapngByteOrder: UInt32 = 0x1A2B_3C4D

    /// Whether `word` (a file's first four bytes, read big-endian) opens a classic pcap file.
    public static func isPcap(_ word: UInt32) -> Bool {
        matches(word, microseconds) || matches(word, nanoseconds)
    }

    /// Whether `word` opens a pcap file with nanosecond timestamps.
    public static func isNanosecondPcap(_ word: UInt32) -> Bool { matches(word, nanoseconds) }

    static func matches(_ word: UInt32, _ magic: UInt32) -> Bool { word == magic || word == magic.byteSwapped }
}

/// pcapng block types and interface options btlens reads and writes (the pcapng specification,
/// draft-ietf-opsawg-pcapng): the reader's `PcapngFraming` and the scenario tools' pcapng writer share them.
public enum PcapngBlock {
    public static let sectionHeader: UInt32 = PcapMagic.pcapngSection
    public static let interfaceDescription: UInt32 = 1
    public static let obsoletePacket: UInt32 = 2
    public static let simplePacket: UInt32 = 3
    public static let enhancedPacket: UInt32 = 6
    /// Section header: the major version btlens reads.
    public static let majorVersion: UInt16 = 1

    /// Option codes of a pcapng block (pcapng §3.5): comments, interface names and the like.
    public enum Option {
        public static let endOfOptions: UInt16 = 0
        /// if_tsresol: 10^-n seconds, or 2^-n with the top bit set.
        public static let timestampResolution: UInt16 = 9
        /// if_tsoffset: seconds added to every timestamp.
        public static let timestampOffset: UInt16 = 14
        public static let binaryResolution: UInt8 = 0x80
        /// if_tsresol for nanoseconds.
        public static let nanosecondResolution: UInt8 = 9
    }
}

/// Facts about an opened capture.
public struct CaptureInfo: Sendable {
    public var format: CaptureFormat
    /// 6 for microsecond sources, 9 for nanosecond ones.
    public var timestampDigits: Int
    public init(format: CaptureFormat, timestampDigits: Int) {
        self.format = format
        self.timestampDigits = timestampDigits
    }
}
