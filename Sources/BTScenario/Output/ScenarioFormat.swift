import BTCapture

/// The output formats a scenario can be written in. The names are the CLI's `--format` values.
public enum ScenarioFormat: String, CaseIterable, Sendable, CustomStringConvertible {
    case btsnoopH4 = "btsnoop-h4"
    case btsnoopH1 = "btsnoop-h1"
    case btsnoopMonitor = "btsnoop-monitor"
    case packetLoggerLE = "pklg-le"
    case packetLoggerBE = "pklg-be"
    case pcapH4 = "pcap-187"
    case pcapH4WithDirection = "pcap-201"
    case pcapMonitor = "pcap-254"

    public static let `default` = ScenarioFormat.btsnoopH4

    public var description: String { rawValue }

    /// The usual file extension.
    public var fileExtension: String {
        switch self {
        case .btsnoopH4, .btsnoopH1, .btsnoopMonitor: "btsnoop"
        case .packetLoggerLE, .packetLoggerBE: "pklg"
        case .pcapH4, .pcapH4WithDirection, .pcapMonitor: "pcap"
        }
    }

    /// What a reader reports for a file in this format.
    public var captureFormat: CaptureFormat {
        switch self {
        case .btsnoopH4: .btsnoop(datalink: BTSnoopDatalink.h4)
        case .btsnoopH1: .btsnoop(datalink: BTSnoopDatalink.h1)
        case .btsnoopMonitor: .btsnoop(datalink: BTSnoopDatalink.monitor)
        case .packetLoggerLE: .packetLogger(bigEndian: false)
        case .packetLoggerBE: .packetLogger(bigEndian: true)
        case .pcapH4: .pcap(linktype: Linktype.bluetoothHCIH4)
        case .pcapH4WithDirection: .pcap(linktype: Linktype.bluetoothHCIH4WithPHDR)
        case .pcapMonitor: .pcap(linktype: Linktype.bluetoothLinuxMonitor)
        }
    }

    /// True when the container records which side sent an ACL packet (all but pcap linktype 187).
    public var recordsACLDirection: Bool { self != .pcapH4 }

    /// True when the container has controller records and notes (monitor channel).
    public var isMonitor: Bool { self == .btsnoopMonitor || self == .pcapMonitor }

    /// Opens a sink that writes this format to `path`.
    public func makeSink(path: String) throws -> any PacketSink {
        switch self {
        case .btsnoopH4: WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h4))
        case .btsnoopH1: WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h1))
        case .btsnoopMonitor: WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.monitor))
        case .packetLoggerLE: try PacketLoggerSink(path: path, bigEndian: false)
        case .packetLoggerBE: try PacketLoggerSink(path: path, bigEndian: true)
        case .pcapH4: WriterSink(try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4))
        case .pcapH4WithDirection: WriterSink(try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4WithPHDR))
        case .pcapMonitor: WriterSink(try PcapWriter(path: path, linktype: Linktype.bluetoothLinuxMonitor))
        }
    }
}

/// Names shared by every output.
public enum ScenarioOutput {
    /// The note a capture starts with where the format has notes.
    public static let generatorNote = "btlens-scenario"
}
