import BTCapture
import BTWire

/// Where a scenario's packets go. The scenario logic only ever talks to this protocol, so every output format
/// receives exactly the same HCI packets with the same timestamps; each sink adds what its container has
/// (monitor index records, notes) and drops what it cannot hold.
public protocol PacketSink: AnyObject {
    /// Called once, before the first packet: monitor formats announce the controller here, and formats with
    /// notes record `title` (which generator and scenario wrote the capture).
    func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws
    /// An HCI packet without H4 indicator.
    func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws
    /// A free-text annotation; formats without notes drop it.
    func note(_ text: String, timestamp: Timestamp) throws
    /// Flushes and closes; errors that buffered writes hid surface here.
    func finish() throws
}

/// The capturing controller, as the monitor's NEW_INDEX and INDEX_INFO records describe it.
public struct ControllerIdentity: Sendable {
    /// hciN.
    public var index: UInt16
    public var address: BDAddr
    /// NEW_INDEX bus (1 = USB).
    public var bus: UInt8
    public var manufacturer: CompanyID
    public var name: String

    public static let usbBus: UInt8 = 1
    public static let primaryControllerType: UInt8 = 0
    /// Intel, a common laptop controller.
    public static let intel = CompanyID(rawValue: 0x0002)

    public init(index: UInt16 = 0, address: BDAddr, bus: UInt8 = ControllerIdentity.usbBus,
                manufacturer: CompanyID = ControllerIdentity.intel, name: String = "hci0") {
        self.index = index
        self.address = address
        self.bus = bus
        self.manufacturer = manufacturer
        self.name = name
    }
}

/// The records a Linux monitor capture starts with (BlueZ monitor/packet.c; the kernel replays them on bind):
/// NEW_INDEX, INDEX_INFO, OPEN_INDEX, then a SYSTEM_NOTE naming the generator.
enum MonitorPreamble {
    /// NEW_INDEX's name field is 8 bytes, NUL-padded.
    static let nameFieldLength = 8

    static func records(_ c: ControllerIdentity, note: String) -> [(opcode: UInt16, kind: RecordKind, payload: [UInt8])] {
        let newIndex = ByteWriter.build { w in
            w.u8(ControllerIdentity.primaryControllerType)
            w.u8(c.bus)
            w.address(c.address)
            let name = Array(c.name.utf8.prefix(nameFieldLength))
            w.append(name)
            w.fill(0, count: nameFieldLength - name.count)
        }
        let indexInfo = ByteWriter.build { w in
            w.address(c.address)
            w.u16(c.manufacturer.rawValue)
        }
        return [
            (MonitorOpcode.newIndex, .controllerAdded, newIndex),
            (MonitorOpcode.indexInfo, .controllerInfo, indexInfo),
            (MonitorOpcode.openIndex, .controllerOpened, []),
            (MonitorOpcode.systemNote, .note, noteText(note)),
        ]
    }

    /// SYSTEM_NOTE text is NUL-terminated, as btmon writes it.
    static func noteText(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }
}
