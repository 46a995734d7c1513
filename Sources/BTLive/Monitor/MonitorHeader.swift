import BTWire
import BTCapture

/// The header the kernel puts before every frame on the HCI monitor channel (`struct hci_mon_hdr`, Linux
/// include/net/bluetooth/hci_mon.h; BlueZ monitor/control.c): `opcode u16, index u16, len u16`, all
/// little-endian. libbluetooth's hci.h does not declare it, so it is spelt out here.
public struct MonitorHeader: Equatable, Sendable {
    public static let length = 6
    /// A frame is at most the header plus a 16-bit payload length.
    public static let maximumFrameLength = length + Int(UInt16.max)

    /// `MonitorOpcode` value (NEW_INDEX, COMMAND, ACL_RX, …).
    public var opcode: UInt16
    /// Controller index (hciN); 0xFFFF for records that belong to no controller.
    public var index: UInt16
    /// Payload length.
    public var payloadLength: UInt16

    public init(opcode: UInt16, index: UInt16, payloadLength: UInt16) {
        self.opcode = opcode
        self.index = index
        self.payloadLength = payloadLength
    }

    /// Parses the first six bytes; nil when fewer are given.
    @inline(__always)
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= Self.length else { return nil }
        opcode = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self))
        index = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        payloadLength = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
    }

    /// The six header bytes (tests and tools that write monitor frames).
    public var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: opcode), UInt8(truncatingIfNeeded: opcode >> 8),
         UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8),
         UInt8(truncatingIfNeeded: payloadLength), UInt8(truncatingIfNeeded: payloadLength >> 8)]
    }

    /// A whole frame: header and payload.
    public static func frame(opcode: UInt16, index: UInt16, payload: [UInt8]) -> [UInt8] {
        MonitorHeader(opcode: opcode, index: index, payloadLength: UInt16(truncatingIfNeeded: payload.count)).bytes + payload
    }
}

/// One frame read from the monitor channel. `payload` is borrowed from the reader's buffer until its next read.
public struct MonitorFrame {
    public var header: MonitorHeader
    public var payload: UnsafeRawBufferPointer
    /// From SO_TIMESTAMP when the kernel gave one, else the clock when the frame was read.
    public var timestamp: Timestamp
    /// Byte position of the header in the stream of frames read so far.
    public var offset: Int64
}
