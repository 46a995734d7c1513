import BTCapture
import BTWire

/// Apple PacketLogger output (little- or big-endian). PacketLogger has no controller records; the generator
/// note becomes a 0xFC note record, as PacketLogger shows user annotations.
public final class PacketLoggerSink: PacketSink {
    let writer: PacketLoggerWriter

    public init(path: String, bigEndian: Bool) throws {
        writer = try PacketLoggerWriter(path: path, bigEndian: bigEndian)
    }

    public func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {
        try writer.writeNote(title, timestamp: timestamp)
    }

    public func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp,
                       payload: UnsafeRawBufferPointer) throws {
        try writer.write(kind: kind, direction: direction, timestamp: timestamp, payload: payload)
    }

    public func note(_ text: String, timestamp: Timestamp) throws {
        try writer.writeNote(text, timestamp: timestamp)
    }

    public func finish() throws { try writer.flush() }
}
