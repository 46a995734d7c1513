import BTWire

/// Writes Apple PacketLogger (.pklg) files: no file header; records of `len u32` (the bytes after it),
/// `ts_secs u32` (Unix), `ts_usecs u32`, `type u8`, payload. Newer files are all little-endian, old ones all
/// big-endian; both are written so the reader's byte-order detection is exercised (Wireshark
/// wiretap/packetlogger.c, BlueZ btsnoop.c `pklg_read_hci`). HCI payloads carry no H4 byte and no controller
/// index. Buffered like `BTSnoopWriter`: a reader never sees half a record after `flush()`.
public final class PacketLoggerWriter {
    public let bigEndian: Bool
    let output: BufferedDescriptorWriter
    public var flushThreshold: Int { output.flushThreshold }

    typealias RecordType = PacketLoggerReader.RecordType
    static let microsecondsPerSecond: Int64 = 1_000_000
    static let nanosecondsPerMicrosecond: Int64 = 1_000

    init(output: BufferedDescriptorWriter, bigEndian: Bool) {
        self.output = output
        self.bigEndian = bigEndian
    }

    public convenience init(fd: Int32, bigEndian: Bool, ownsDescriptor: Bool = false, flushThreshold: Int = 1 << 20) {
        self.init(output: BufferedDescriptorWriter(fd: fd, ownsDescriptor: ownsDescriptor, flushThreshold: flushThreshold),
                  bigEndian: bigEndian)
    }

    /// Creates (truncates) `path`. The error gives only the cause: the caller names the file.
    public convenience init(path: String, bigEndian: Bool, flushThreshold: Int = 1 << 20) throws {
        self.init(output: try BufferedDescriptorWriter(path: path, flushThreshold: flushThreshold), bigEndian: bigEndian)
    }

    /// The PacketLogger type for an HCI packet, nil for kinds the format has no type for.
    public static func recordType(kind: RecordKind, direction: Direction) -> UInt8? {
        let sent = direction == .sent
        switch kind {
        case .command: return RecordType.command
        case .event: return RecordType.event
        case .acl: return sent ? RecordType.aclSent : RecordType.aclReceived
        case .sco: return sent ? RecordType.scoSent : RecordType.scoReceived
        case .iso: return sent ? RecordType.isoSent : RecordType.isoReceived
        case .note: return RecordType.note
        default: return nil
        }
    }

    /// Writes an HCI packet (without H4 indicator) or a note; kinds PacketLogger cannot hold are skipped.
    public func write(kind: RecordKind, direction: Direction, timestamp: Timestamp,
                      payload: UnsafeRawBufferPointer) throws {
        guard let type = Self.recordType(kind: kind, direction: direction) else { return }
        try write(type: type, timestamp: timestamp, payload: payload)
    }

    public func write(kind: RecordKind, direction: Direction, timestamp: Timestamp, bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write(kind: kind, direction: direction, timestamp: timestamp, payload: $0) }
    }

    /// A text note (type 0xFC), as PacketLogger shows user annotations.
    public func writeNote(_ text: String, timestamp: Timestamp) throws {
        try Array(text.utf8).withUnsafeBytes { try write(type: RecordType.note, timestamp: timestamp, payload: $0) }
    }

    /// Writes one record of any type.
    public func write(type: UInt8, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws {
        let micros = timestamp.nanoseconds / Self.nanosecondsPerMicrosecond
        let seconds = micros / Self.microsecondsPerSecond
        let fraction = micros - seconds * Self.microsecondsPerSecond
        append32(UInt32(truncatingIfNeeded: PacketLoggerReader.minimumLength + payload.count))
        append32(UInt32(truncatingIfNeeded: seconds))
        append32(UInt32(truncatingIfNeeded: fraction))
        output.append(type)
        output.append(contentsOf: payload)
        try output.flushIfFull()
    }

    @inline(__always) func append32(_ v: UInt32) { output.append32(v, bigEndian: bigEndian) }

    /// Writes what is buffered; after a failure, calling again resumes where the descriptor stopped.
    public func flush() throws { try output.flush() }
}
