/// A capture writer for HCI packets and, where the format has them, Linux monitor records (btsnoop 2001, pcap
/// linktype 254). Records a format cannot carry are skipped.
public protocol HCIRecordWriter: AnyObject {
    /// The format holds monitor records (controller announcements, notes), not only HCI packets.
    var carriesMonitorRecords: Bool { get }
    func write(kind: RecordKind, direction: Direction, timestamp: Timestamp, controller: UInt16,
               monitorOpcode: UInt16?, payload: UnsafeRawBufferPointer) throws
    /// Writes what is buffered and completes the file.
    func finish() throws
}

extension HCIRecordWriter {
    public func write(kind: RecordKind, direction: Direction, timestamp: Timestamp, controller: UInt16 = 0,
                      monitorOpcode: UInt16? = nil, bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes {
            try write(kind: kind, direction: direction, timestamp: timestamp, controller: controller,
                      monitorOpcode: monitorOpcode, payload: $0)
        }
    }
}
