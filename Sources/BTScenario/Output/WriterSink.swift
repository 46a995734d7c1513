import BTCapture
import BTWire

/// Scenario output through a capture writer: btsnoop (H4, H1, monitor) or pcap (linktypes 187, 201, 254).
/// Only formats with monitor records (btsnoop 2001, pcap 254) get the controller announcement and notes.
public final class WriterSink<Writer: HCIRecordWriter>: PacketSink {
    let writer: Writer
    var controller: UInt16 = 0

    public init(_ writer: Writer) { self.writer = writer }

    public func begin(controller identity: ControllerIdentity, title: String, timestamp: Timestamp) throws {
        controller = identity.index
        guard writer.carriesMonitorRecords else { return }
        for r in MonitorPreamble.records(identity, note: title) {
            try writer.write(kind: r.kind, direction: .unknown, timestamp: timestamp, controller: controller,
                             monitorOpcode: r.opcode, bytes: r.payload)
        }
    }

    public func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp,
                       payload: UnsafeRawBufferPointer) throws {
        try writer.write(kind: kind, direction: direction, timestamp: timestamp, controller: controller,
                         monitorOpcode: nil, payload: payload)
    }

    public func note(_ text: String, timestamp: Timestamp) throws {
        guard writer.carriesMonitorRecords else { return }
        try writer.write(kind: .note, direction: .unknown, timestamp: timestamp, controller: controller,
                         monitorOpcode: MonitorOpcode.systemNote, bytes: MonitorPreamble.noteText(text))
    }

    public func finish() throws { try writer.finish() }
}
