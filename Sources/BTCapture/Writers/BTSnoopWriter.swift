#if canImport(Glibc)
import Glibc
#endif
import BTWire

/// Writes btsnoop files: H4 (1002, as Android writes them), H1 (1001) or Linux monitor (2001, as btmon -w).
/// Buffered; `flush()` pushes whole records to the descriptor, so a reader never sees half a record after it.
public final class BTSnoopWriter: HCIRecordWriter {
    public let datalink: UInt32
    let fd: Int32
    let ownsDescriptor: Bool
    var buffer: [UInt8] = []
    public let flushThreshold: Int

    public init(fd: Int32, datalink: UInt32, ownsDescriptor: Bool = false, flushThreshold: Int = 1 << 20) throws {
        self.fd = fd
        self.datalink = datalink
        self.ownsDescriptor = ownsDescriptor
        self.flushThreshold = flushThreshold
        buffer.reserveCapacity(flushThreshold + 65_600)
        buffer.append(contentsOf: BTSnoopReader.magic)
        append32(1)
        append32(datalink)
        try flush()
    }

    /// Creates (truncates) `path`. The error gives only the cause: the caller names the file.
    public convenience init(path: String, datalink: UInt32, flushThreshold: Int = 1 << 20) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError(.cannotOpen, String(cString: strerror(errno))) }
        try self.init(fd: fd, datalink: datalink, ownsDescriptor: true, flushThreshold: flushThreshold)
    }

    deinit {
        try? flush()
        if ownsDescriptor { close(fd) }
    }

    @inline(__always) func append32(_ v: UInt32) {
        buffer.append(UInt8(truncatingIfNeeded: v >> 24))
        buffer.append(UInt8(truncatingIfNeeded: v >> 16))
        buffer.append(UInt8(truncatingIfNeeded: v >> 8))
        buffer.append(UInt8(truncatingIfNeeded: v))
    }

    /// Writes an HCI packet (without H4 indicator) of `kind` in `direction`, or a monitor record.
    /// - Parameter monitorOpcode: for datalink 2001 records that are not HCI packets (NEW_INDEX, notes, …).
    public func write(kind: RecordKind, direction: Direction, timestamp: Timestamp, controller: UInt16 = 0,
                      monitorOpcode: UInt16? = nil, payload: UnsafeRawBufferPointer) throws {
        var flags: UInt32 = 0
        var prefix: UInt8? = nil
        let received: UInt32 = direction == .received || kind == .event ? 1 : 0
        switch datalink {
        case BTSnoopDatalink.h4:
            flags = received | (kind == .command || kind == .event ? 2 : 0)
            switch kind {
            case .command: prefix = H4PacketType.command
            case .event: prefix = H4PacketType.event
            case .acl: prefix = H4PacketType.acl
            case .sco: prefix = H4PacketType.sco
            case .iso: prefix = H4PacketType.iso
            default: return  // H4 carries HCI packets only
            }
        case BTSnoopDatalink.h1:
            guard kind == .command || kind == .event || kind == .acl else { return }
            flags = received | (kind == .command || kind == .event ? 2 : 0)
        case BTSnoopDatalink.monitor:
            guard let opcode = monitorOpcode ?? MonitorOpcode.opcode(kind: kind, direction: direction) else { return }
            flags = UInt32(controller) << 16 | UInt32(opcode)
        default:
            return
        }
        let length = UInt32(payload.count + (prefix == nil ? 0 : 1))
        append32(length)
        append32(length)
        append32(flags)
        append32(0)
        let ts = UInt64(bitPattern: BTSnoopTime.btsnoopValue(timestamp))
        append32(UInt32(truncatingIfNeeded: ts >> 32))
        append32(UInt32(truncatingIfNeeded: ts))
        if let p = prefix { buffer.append(p) }
        buffer.append(contentsOf: payload)
        if buffer.count >= flushThreshold { try flush() }
    }

    public var carriesMonitorRecords: Bool { datalink == BTSnoopDatalink.monitor }

    public func finish() throws { try flush() }

    public func flush() throws {
        var written = 0
        while written < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.readFailed, "write failed: \(String(cString: strerror(errno)))")
            }
            written += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
