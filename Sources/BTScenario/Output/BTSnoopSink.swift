import BTCapture
import BTWire

/// btsnoop output through `BTSnoopWriter`: H4 (1002), H1 (1001) or Linux monitor (2001). Only the monitor
/// datalink can hold the controller announcement and notes.
public final class BTSnoopSink: PacketSink {
    let writer: BTSnoopWriter
    var controller: UInt16 = 0

    public init(path: String, datalink: UInt32) throws {
        writer = try BTSnoopWriter(path: path, datalink: datalink)
    }

    var isMonitor: Bool { writer.datalink == BTSnoopDatalink.monitor }

    public func begin(controller identity: ControllerIdentity, title: String, timestamp: Timestamp) throws {
        controller = identity.index
        guard isMonitor else { return }
        for r in MonitorPreamble.records(identity, note: title) {
            try writer.write(kind: r.kind, direction: .unknown, timestamp: timestamp, controller: controller,
                             monitorOpcode: r.opcode, bytes: r.payload)
        }
    }

    public func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp,
                       payload: UnsafeRawBufferPointer) throws {
        try writer.write(kind: kind, direction: direction, timestamp: timestamp, controller: controller,
                         payload: payload)
    }

    public func note(_ text: String, timestamp: Timestamp) throws {
        guard isMonitor else { return }
        try writer.write(kind: .note, direction: .unknown, timestamp: timestamp, controller: controller,
                         monitorOpcode: MonitorOpcode.systemNote, bytes: MonitorPreamble.noteText(text))
    }

    public func finish() throws { try writer.flush() }
}
