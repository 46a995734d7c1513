import BTWire
import BTDecode

/// Which controller the capture's host ran: its answer to Read Local Version Information (Core Vol 4 Part E
/// §7.4.1), which stacks send at start-up. The manufacturer (a company identifier) and its LMP subversion name the
/// chip family, whose controller counts radio time its own way (docs/ENERGY-COUNTERS.md).
public struct ControllerVersion: Sendable, Equatable {
    public static let opcode = HCIOpcode(rawValue: 0x1001)

    public var controller: UInt16
    /// The Core specification version (Assigned Numbers, "Core Specification Versions": 0x09 is 5.0).
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    /// Company identifier of the controller's maker.
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16

    /// Return parameters: status, HCI version, HCI revision (u16), LMP version, manufacturer (u16), LMP
    /// subversion (u16), little-endian.
    public init?(returnParameters p: UnsafeRawBufferPointer, controller: UInt16) {
        var r = ByteReader(p)
        guard let status = r.readU8(), status == HCIStatus.success.rawValue, let hci = r.readU8(), let revision = r.readU16(),
              let lmp = r.readU8(), let maker = r.readU16(), let sub = r.readU16()
        else { return nil }
        self.controller = controller
        hciVersion = hci
        hciRevision = revision
        lmpVersion = lmp
        manufacturer = maker
        lmpSubversion = sub
    }

    /// Core Specification Versions (Assigned Numbers §2.1), by the value both HCI and LMP versions use.
    static let coreVersions: [UInt8: String] = [
        0x00: "1.0b", 0x01: "1.1", 0x02: "1.2", 0x03: "2.0 + EDR", 0x04: "2.1 + EDR", 0x05: "3.0 + HS", 0x06: "4.0",
        0x07: "4.1", 0x08: "4.2", 0x09: "5.0", 0x0A: "5.1", 0x0B: "5.2", 0x0C: "5.3", 0x0D: "5.4", 0x0E: "6.0",
    ]

    /// "Bluetooth 5.0", or the raw value for a version newer than the table.
    public var coreVersion: String { Self.coreVersions[hciVersion].map { "Bluetooth \($0)" } ?? "HCI version \(Hex.u8(hciVersion))" }

    /// "Qualcomm", or "company 0x1234" for an identifier not in the table.
    public var manufacturerName: String { AssignedNumbers.companyName(manufacturer) ?? "company \(Hex.u16(manufacturer))" }

    /// "Qualcomm, Bluetooth 5.0, LMP subversion 702": what reports say of the chip.
    public var description: String { "\(manufacturerName), \(coreVersion), LMP subversion \(lmpSubversion)" }
}
