import BTCapture
import BTWire

/// pcap output through libpcap with linktype 187, 201 or 254. Linktype 254 is the monitor channel, so it
/// gets the same controller announcement and notes as btsnoop 2001.
public final class PcapSink: PacketSink {
    let writer: PcapWriter
    var controller: UInt16 = 0

    public init(path: String, linktype: Int) throws {
        writer = try PcapWriter(path: path, linktype: linktype)
    }

    var isMonitor: Bool { writer.linktype == Linktype.bluetoothLinuxMonitor }

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

    public func finish() throws { try writer.close() }
}
