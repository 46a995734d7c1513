import BTWire
import CPcap
#if canImport(Glibc)
import Glibc
#endif

/// Writes classic pcap files through libpcap (`pcap_open_dead_with_tstamp_precision`, `pcap_dump_open`,
/// `pcap_dump`), so the header, magic and record layout are libpcap's own rather than our reading of them.
/// Bluetooth linktypes:
/// - 187 HCI_H4: H4 indicator + HCI packet; no direction.
/// - 201 HCI_H4_WITH_PHDR: direction u32 BE (1 = received, as libpcap writes `htonl(in != 0)`), then H4.
/// - 254 LINUX_MONITOR: adapter u16 BE, monitor opcode u16 BE, then the monitor payload.
public final class PcapWriter: HCIRecordWriter {
    public let linktype: Int
    public let nanosecondResolution: Bool
    let dead: OpaquePointer
    @exclusivity(unchecked) var dumper: OpaquePointer?
    /// Reused for every frame, so writing does not allocate per record.
    @exclusivity(unchecked) var frame: [UInt8] = []

    /// Large enough for any HCI packet plus a pseudo-header (Wireshark's limit).
    public static let defaultSnapLength: Int32 = 262_144
    static let directionReceived: UInt32 = 1
    static let directionSent: UInt32 = 0
    static let nanosecondsPerMicrosecond: Int64 = 1_000
    static let nanosecondsPerSecond: Int64 = 1_000_000_000

    /// Creates (truncates) `path`. The error gives only the cause: the caller names the file.
    public init(path: String, linktype: Int, nanosecondResolution: Bool = false,
                snapLength: Int32 = PcapWriter.defaultSnapLength) throws {
        self.linktype = linktype
        self.nanosecondResolution = nanosecondResolution
        let precision = nanosecondResolution ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO
        guard let dead = pcap_open_dead_with_tstamp_precision(Int32(linktype), snapLength, UInt32(precision)) else {
            throw CaptureError(.cannotOpen, "libpcap cannot create a linktype \(linktype) handle")
        }
        guard let dumper = pcap_dump_open(dead, path) else {
            // libpcap words it "path: cause".
            let message = String(cString: pcap_geterr(dead)), named = path + ": "
            pcap_close(dead)
            throw CaptureError(.cannotOpen, message.hasPrefix(named) ? String(message.dropFirst(named.count)) : message)
        }
        self.dead = dead
        self.dumper = dumper
        frame.reserveCapacity(Int(snapLength))
    }

    deinit {
        if let d = dumper { pcap_dump_close(d) }
        pcap_close(dead)
    }

    /// Writes one frame exactly as given (the linktype's pseudo-header already included).
    public func writeFrame(timestamp: Timestamp, frame bytes: UnsafeRawBufferPointer) throws {
        guard let dumper, let base = bytes.baseAddress else {
            throw CaptureError(.writeFailed, "pcap writer is closed")
        }
        let ns = timestamp.nanoseconds
        let seconds = ns >= 0 ? ns / Self.nanosecondsPerSecond : (ns - Self.nanosecondsPerSecond + 1) / Self.nanosecondsPerSecond
        let remainder = ns - seconds * Self.nanosecondsPerSecond
        let fraction = nanosecondResolution ? remainder : remainder / Self.nanosecondsPerMicrosecond
        var header = pcap_pkthdr()
        header.ts.tv_sec = Int(seconds)
        header.ts.tv_usec = Int(fraction)
        header.caplen = UInt32(truncatingIfNeeded: bytes.count)
        header.len = UInt32(truncatingIfNeeded: bytes.count)
        pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &header,
                  base.assumingMemoryBound(to: UInt8.self))
    }

    /// Writes an HCI packet (without H4 indicator) of `kind` in `direction`, or, for linktype 254, any monitor
    /// record (`monitorOpcode` for the ones that are not HCI packets). Records the linktype cannot carry are
    /// skipped, as `BTSnoopWriter` does.
    public func write(kind: RecordKind, direction: Direction, timestamp: Timestamp, controller: UInt16 = 0,
                      monitorOpcode: UInt16? = nil, payload: UnsafeRawBufferPointer) throws {
        frame.removeAll(keepingCapacity: true)
        switch linktype {
        case Linktype.bluetoothHCIH4:
            guard let indicator = H4PacketType.indicator(for: kind) else { return }
            frame.append(indicator)
        case Linktype.bluetoothHCIH4WithPHDR:
            guard let indicator = H4PacketType.indicator(for: kind) else { return }
            append32BE(H4PacketType.isReceived(kind, direction) ? Self.directionReceived : Self.directionSent)
            frame.append(indicator)
        case Linktype.bluetoothLinuxMonitor:
            guard let opcode = monitorOpcode ?? MonitorOpcode.opcode(kind: kind, direction: direction) else { return }
            append16BE(controller)
            append16BE(opcode)
        default:
            throw CaptureError(.unsupportedLinktype, "cannot write HCI records with linktype \(linktype)")
        }
        frame.append(contentsOf: payload)
        try frame.withUnsafeBytes { try writeFrame(timestamp: timestamp, frame: $0) }
    }

    public var carriesMonitorRecords: Bool { linktype == Linktype.bluetoothLinuxMonitor }

    public func finish() throws { try close() }

    /// Pushes buffered frames to the file; throws if libpcap's stream reports an error.
    public func flush() throws {
        guard let dumper else { return }
        if pcap_dump_flush(dumper) != 0 {
            throw CaptureError(.writeFailed, "pcap write failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Flushes and closes the file. Further writes throw.
    public func close() throws {
        guard let d = dumper else { return }
        let flushed = pcap_dump_flush(d) == 0
        pcap_dump_close(d)
        dumper = nil
        if !flushed { throw CaptureError(.writeFailed, "pcap write failed: \(String(cString: strerror(errno)))") }
    }

    @inline(__always) func append16BE(_ v: UInt16) {
        frame.append(UInt8(truncatingIfNeeded: v >> 8))
        frame.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always) func append32BE(_ v: UInt32) {
        frame.append(UInt8(truncatingIfNeeded: v >> 24))
        frame.append(UInt8(truncatingIfNeeded: v >> 16))
        frame.append(UInt8(truncatingIfNeeded: v >> 8))
        frame.append(UInt8(truncatingIfNeeded: v))
    }
}
