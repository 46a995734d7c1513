import BTCapture

/// `btlens live --write FILE`: the capture as btsnoop in the Linux monitor datalink (2001), the format
/// `btmon -w` writes and btmon and Wireshark open. Each record is written through to the kernel as soon as it
/// is seen, so the file is complete up to the last record whenever the process dies — killed, crashed or
/// stopped — and another tool can follow it meanwhile.
public final class LiveCaptureWriter {
    public let path: String
    let writer: BTSnoopWriter
    /// Set after the first write error; nothing more is written.
    public private(set) var failure: CaptureError?
    public private(set) var written = 0

    /// Creates (truncates) `path` and writes the file header.
    public init(path: String) throws {
        self.path = path
        writer = try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.monitor, flushThreshold: 0)
    }

    /// Writes one record. Monitor records (from the socket or a datalink-2001 file) keep their opcode and
    /// index; HCI packets from other formats get the opcode of their kind and direction. Non-HCI records of
    /// other formats (PacketLogger notes) have no monitor form and are skipped.
    /// Returns the error the first time writing fails.
    @discardableResult
    public func write(_ record: CaptureRecord, fromMonitor: Bool) -> CaptureError? {
        guard failure == nil else { return nil }
        let opcode: UInt16?
        if fromMonitor {
            opcode = UInt16(truncatingIfNeeded: record.sourceType)
        } else {
            guard record.kind.isHCIPacket else { return nil }
            opcode = nil
        }
        do {
            // flushThreshold 0: the writer flushes after every record.
            try writer.write(kind: record.kind, direction: record.direction, timestamp: record.timestamp,
                             controller: record.controller == CaptureRecord.noController && !fromMonitor ? 0 : record.controller,
                             monitorOpcode: opcode, payload: record.payload)
            written += 1
            return nil
        } catch let error as CaptureError {
            failure = error
            return error
        } catch {
            let wrapped = CaptureError(.readFailed, "\(error)")
            failure = wrapped
            return wrapped
        }
    }
}
