import BTWire

/// Writes btsnoop files: H4 (1002, as Android writes them), H1 (1001) or Linux monitor (2001, as btmon -w).
/// Buffered; `flush()` pushes whole records to the descriptor, so a reader never sees half a record after it.
public final class BTSnoopWriter: HCIRecordWriter {
    public let datalink: UInt32
    let output: BufferedDescriptorWriter
    public var flushThreshold: Int { output.flushThreshold }

    /// Writes the file header to `output` at once.
    init(output: BufferedDescriptorWriter, datalink: UInt32) throws {
        self.datalink = datalink
        self.output = output
        output.append(contentsOf: BTSnoopReader.magic)
        append32(1)
        append32(datalink)
        try flush()
    }

    public convenience init(fd: Int32, datalink: UInt32, ownsDescriptor: Bool = false,
                            flushThreshold: Int = 1 << 20) throws {
        try self.init(output: BufferedDescriptorWriter(fd: fd, ownsDescriptor: ownsDescriptor,
                                                       flushThreshold: flushThreshold), datalink: datalink)
    }

    /// Creates (truncates) `path`. The error gives only the cause: the caller names the file.
    public convenience init(path: String, datalink: UInt32, flushThreshold: Int = 1 << 20) throws {
        try self.init(output: BufferedDescriptorWriter(path: path, flushThreshold: flushThreshold), datalink: datalink)
    }

    @inline(__always) func append32(_ v: UInt32) { output.append32(v, bigEndian: true) }

    /// Writes an HCI packet (without H4 indicator) of `kind` in `direction`, or a monitor record.
    /// - Parameter monitorOpcode: for datalink 2001 records that are not HCI packets (NEW_INDEX, notes, …).
    public func write(kind: RecordKind, direction: Direction, timestamp: Timestamp, controller: UInt16 = 0,
                      monitorOpcode: UInt16? = nil, payload: UnsafeRawBufferPointer) throws {
        var flags: UInt32 = 0
        var prefix: UInt8? = nil
        let received: UInt32 = H4PacketType.isReceived(kind, direction) ? 1 : 0
        switch datalink {
        case BTSnoopDatalink.h4:
            guard let indicator = H4PacketType.indicator(for: kind) else { return }  // H4 carries HCI packets only
            flags = received | (kind == .command || kind == .event ? 2 : 0)
            prefix = indicator
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
        if let p = prefix { output.append(p) }
        output.append(contentsOf: payload)
        try output.flushIfFull()
    }

    public var carriesMonitorRecords: Bool { datalink == BTSnoopDatalink.monitor }

    public func finish() throws { try flush() }

    /// Writes what is buffered; after a failure, calling again resumes where the descriptor stopped.
    public func flush() throws { try output.flush() }
}
