import BTWire

/// An Apple iBeacon frame, carried as Manufacturer Specific Data (FORMATS.md §8):
/// `4C 00` (Apple), `02` (type), `15` (21 bytes follow), proximity UUID (16 bytes, **text order**),
/// major (u16 **big-endian**), minor (u16 **big-endian**), measured power (i8, RSSI at 1 m).
///
/// Unlike everything else in Bluetooth these fields are big-endian; btmon 5.66 reverses the UUID and reads
/// major/minor little-endian, so its output for iBeacons is not a reference.
public struct IBeacon: Hashable, Sendable, CustomStringConvertible {
    public var proximityUUID: BluetoothUUID
    public var major: UInt16
    public var minor: UInt16
    /// dBm measured 1 m from the beacon, used to estimate distance from RSSI.
    public var measuredPower: Int8

    /// Apple's iBeacon type byte and its payload length, after the company identifier.
    public static let type: UInt8 = 0x02
    public static let payloadLength: UInt8 = 0x15
    /// Company ID (2) + type (1) + length (1) + the 21-byte payload.
    public static let manufacturerDataLength = 25

    public init(proximityUUID: BluetoothUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Parses the data of a Manufacturer Specific Data structure (starting with the company ID); nil unless it is
    /// Apple's iBeacon layout. Trailing bytes after the 25 are ignored.
    public init?(manufacturerSpecificData d: UnsafeRawBufferPointer) {
        guard d.count >= Self.manufacturerDataLength,
            UInt16(d[0]) | UInt16(d[1]) << 8 == CompanyID.apple.rawValue, d[2] == Self.type,
            d[3] == Self.payloadLength,
            let uuid = BluetoothUUID(bigEndianBytes: UnsafeRawBufferPointer(rebasing: d[4..<20]))
        else { return nil }
        self.init(proximityUUID: uuid, major: UInt16(d[20]) << 8 | UInt16(d[21]),
                  minor: UInt16(d[22]) << 8 | UInt16(d[23]), measuredPower: Int8(bitPattern: d[24]))
    }

    /// `ibeacon 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major 258 minor 772 power -59`.
    public var description: String {
        "ibeacon " + proximityUUID.fullString + " major " + String(major) + " minor " + String(minor) + " power "
            + String(measuredPower)
    }

    var fields: [DecodedField] {
        [
            DecodedField("Proximity UUID", proximityUUID.fullString),
            DecodedField("Major", String(major) + " (" + Hex.u16(major) + ")"),
            DecodedField("Minor", String(minor) + " (" + Hex.u16(minor) + ")"),
            DecodedField("Measured Power", String(measuredPower) + " dBm"),
        ]
    }
}
