import BTCapture

/// Copies each HCI packet through the `Anonymizer` into the writer, one reused buffer for all.
public struct AnonymizingCopier: RecordSourceVisitor {
    public struct Result: Sendable {
        public var written = 0
        /// Records that are not HCI packets (notes, monitor records): btsnoop H4 cannot carry them.
        public var leftOut = 0
        public var addresses = 0
        public var names = 0
    }

    let writer: any HCIRecordWriter
    let anonymizer: Anonymizer
    /// Called with a record's byte offset every 65,536 records (a progress line).
    public var progress: ((Int64) -> Void)?

    public init(writer: any HCIRecordWriter, anonymizer: Anonymizer = Anonymizer()) {
        self.writer = writer
        self.anonymizer = anonymizer
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> Result {
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: BTSnoopReader.maximumRecordLength, alignment: 8)
        defer { buffer.deallocate() }
        var result = Result()
        while let record = source.next() {
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            guard record.kind.isHCIPacket else {
                result.leftOut += 1
                continue
            }
            let count = record.payload.count
            if count > buffer.count {
                buffer.deallocate()
                buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
            }
            let packet = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            if count > 0 { packet.copyMemory(from: record.payload) }
            anonymizer.anonymize(kind: record.kind, payload: packet)
            try writer.write(kind: record.kind, direction: record.direction, timestamp: record.timestamp, controller: 0,
                             monitorOpcode: nil, payload: UnsafeRawBufferPointer(packet))
            result.written += 1
        }
        result.addresses = anonymizer.addressesReplaced
        result.names = anonymizer.namesReplaced
        return result
    }
}
