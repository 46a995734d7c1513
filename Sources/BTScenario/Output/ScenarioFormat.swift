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
    /// What an LE air sniffer following the scenario's links captures (`AirSink`): nRF Sniffer (272, header v3),
    /// LE_LL_WITH_PHDR (256), bare LE link layer (251), PPI with Ubertooth's BTLE field (192).
    case air272 = "air-272"
    case air256 = "air-256"
    case air251 = "air-251"
    case airPPI = "air-ppi"

    public static let `default` = ScenarioFormat.btsnoopH4

    public var description: String { rawValue }

    /// One line for `btlens-scenario list`.
    public var summary: String {
        switch self {
        case .btsnoopH4: "btsnoop, H4 (Android's btsnoop_hci.log; the default)"
        case .btsnoopH1: "btsnoop, H1"
        case .btsnoopMonitor: "btsnoop, Linux monitor (btmon -w)"
        case .packetLoggerLE: "Apple PacketLogger, little-endian"
        case .packetLoggerBE: "Apple PacketLogger, big-endian"
        case .pcapH4: "pcap linktype 187, H4 without direction"
        case .pcapH4WithDirection: "pcap linktype 201, H4 with direction (tcpdump -i bluetooth0)"
        case .pcapMonitor: "pcap linktype 254, Linux monitor"
        case .air272: "air sniffer: pcap linktype 272, nRF Sniffer header v3 (--air-* options)"
        case .air256: "air sniffer: pcap linktype 256, LE_LL_WITH_PHDR"
        case .air251: "air sniffer: pcap linktype 251, the bare LE link layer"
        case .airPPI: "air sniffer: pcap linktype 192, PPI with Ubertooth's BTLE field"
        }
    }

    /// The usual file extension.
    public var fileExtension: String {
        switch self {
        case .btsnoopH4, .btsnoopH1, .btsnoopMonitor: "btsnoop"
        case .packetLoggerLE, .packetLoggerBE: "pklg"
        case .pcapH4, .pcapH4WithDirection, .pcapMonitor, .air272, .air256, .air251, .airPPI: "pcap"
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
        case .air272, .air256, .air251, .airPPI: .pcap(linktype: airContainer?.linktype ?? 0)
        }
    }

    /// The air sniffer's container, nil for the HCI formats.
    public var airContainer: LinkLayerContainer? {
        switch self {
        case .air272: .nordic(version: 3, board: 0)
        case .air256: .pseudoHeader
        case .air251: .leLL
        case .airPPI: .ppi
        default: nil
        }
    }

    /// Formats that hold the HCI packets themselves (every one but the air captures).
    public static var hciFormats: [ScenarioFormat] { allCases.filter { $0.airContainer == nil } }
    public static var airFormats: [ScenarioFormat] { allCases.filter { $0.airContainer != nil } }

    /// True when the container records which side sent an ACL packet (all but pcap linktype 187).
    public var recordsACLDirection: Bool { self != .pcapH4 }

    /// True when the container has controller records and notes (monitor channel).
    public var isMonitor: Bool { self == .btsnoopMonitor || self == .pcapMonitor }

    /// Opens a sink that writes this format to `path`. `air` sets how air formats are written (its container
    /// is replaced by this format's, but for the nRF header version of air-272).
    public func makeSink(path: String, air: AirOptions = AirOptions()) throws -> any PacketSink {
        if let container = airContainer {
            var options = air
            if case .nordic = air.container, self == .air272 {} else { options.container = container }
            return try AirSink(path: path, options: options)
        }
        return switch self {
        case .btsnoopH4: WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h4))
        case .btsnoopH1: WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h1))
        case .btsnoopMonitor: WriterSink(try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.monitor))
        case .packetLoggerLE: try PacketLoggerSink(path: path, bigEndian: false)
        case .packetLoggerBE: try PacketLoggerSink(path: path, bigEndian: true)
        case .pcapH4: WriterSink(try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4))
        case .pcapH4WithDirection: WriterSink(try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4WithPHDR))
        case .pcapMonitor: WriterSink(try PcapWriter(path: path, linktype: Linktype.bluetoothLinuxMonitor))
        case .air272, .air256, .air251, .airPPI: preconditionFailure("air formats are handled above")
        }
    }
}

/// Names shared by every output.
public enum ScenarioOutput {
    /// The note a capture starts with where the format has notes.
    public static let generatorNote = "btlens-scenario"
}
