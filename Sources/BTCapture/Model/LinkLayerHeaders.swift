/// The layouts of the LE air sniffers' container headers (LINKLAYER.md §1): what `BTDecode`'s link-layer decoder
/// reads and `LinkLayerRecordWriter` writes, defined once here.

/// LINKTYPE_NORDIC_BLE (272): the nRF Sniffer's UART header, then a 10-byte event header, then the LL packet,
/// which starts at offset 17 in every header version [Wireshark packet-nordic_ble.c; LINKLAYER.md §1.4].
///
///     v0:    BE EF · … · payload length u8 @7 · event header @8 without its length byte
///     v1:    board u8 · header length u8 · payload length u8 · version 1 · packet counter u16 · id u8
///     v2/v3: board u8 · payload length u16 · version · packet counter u16 · id u8
///     event header @7: length u8 (10) · flags u8 · channel index u8 · RSSI (−dBm) u8 · event counter u16 ·
///                      time u32
public enum NordicBLEHeader {
    public static let legacyMagic: UInt16 = 0xBEEF
    public static let legacyHeaderLength = 8
    public static let version1HeaderBase = 1
    public static let version2HeaderLength = 7
    public static let versionOffset = 3
    /// v1–v3: the sniffer's packet counter, u16 LE; consecutive unless packets were dropped on the way.
    public static let packetCounterOffset = 4
    /// v0: the packet counter's place, after the magic and the packet id.
    public static let legacyPacketCounterOffset = 3
    public static let flagsOffset = 8
    public static let channelOffset = 9
    public static let rssiOffset = 10
    public static let eventCounterOffset = 11
    public static let timeOffset = 13
    public static let packetOffset = 17
    /// v3's packet ids; below v3 the id is not reliable (SweynTooth writes 0) and the access address decides.
    public static let advertisingPacketID: UInt8 = 0x02
    public static let dataPacketID: UInt8 = 0x06
    public static let firstAbsoluteTimeVersion: UInt8 = 3

    // Flags.
    public static let crcOK: UInt8 = 0x01
    /// Data PDUs: set when the central sent it.
    public static let centralToPeripheral: UInt8 = 0x02
    public static let encrypted: UInt8 = 0x04
    public static let micOK: UInt8 = 0x08
    public static let phyMask: UInt8 = 0x70
    public static let phyShift: UInt8 = 4
    /// Advertising PDUs on a secondary channel: the aux type in bits 1–2.
    public static let auxTypeMask: UInt8 = 0x06
    public static let auxTypeShift: UInt8 = 1
}

/// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (256): a 10-byte pseudo-header before the LL packet
/// [tcpdump.org LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR; LINKLAYER.md §1.3].
///
///     off 0 RF channel u8 · 1 signal i8 · 2 noise i8 · 3 AA offenses u8 · 4 reference AA u32 · 8 flags u16
public enum LLPseudoHeader {
    public static let length = 10
    public static let dewhitened: UInt16 = 0x0001
    public static let signalValid: UInt16 = 0x0002
    public static let noiseValid: UInt16 = 0x0004
    public static let decrypted: UInt16 = 0x0008
    public static let referenceAccessAddressValid: UInt16 = 0x0010
    public static let accessAddressOffensesValid: UInt16 = 0x0020
    public static let channelAliased: UInt16 = 0x0040
    public static let pduTypeMask: UInt16 = 0x0380
    public static let pduTypeShift: UInt16 = 7
    public static let crcChecked: UInt16 = 0x0400
    public static let crcValid: UInt16 = 0x0800
    public static let auxTypeMask: UInt16 = 0x3000
    public static let auxTypeShift: UInt16 = 12
    /// PDU types other than 1: the MIC was checked, and was valid.
    public static let micChecked: UInt16 = 0x1000
    public static let micValid: UInt16 = 0x2000
    public static let phyMask: UInt16 = 0xC000
    public static let phyShift: UInt16 = 14

    /// The flags' PDU type (0x0380 >> 7).
    public enum PDUType: UInt16 {
        case unspecified = 0, auxiliaryAdvertising, dataCentralToPeripheral, dataPeripheralToCentral
        case cisCentralToPeripheral, cisPeripheralToCentral, bis, reserved
    }
}

/// PPI (192) as Ubertooth writes it (`ubertooth-btle -c`): a PPI header, a BTLE field (type 30006), then the
/// LL packet at the PPI header's length [greatscottgadgets/libbtbb lib/src/pcap.c; LINKLAYER.md §1.5].
///
///     PPI: version u8 · flags u8 · length u16 · inner DLT u32 (251, or 147 in old files)
///     field: type u16 · length u16 · btle_version u8 · channel u16 (MHz) · clkn_high u8 · clk100ns u32 ·
///            rssi_max i8 · rssi_min i8 · rssi_avg i8 · rssi_count u8
public enum PPIHeader {
    public static let length = 8
    public static let fieldHeaderLength = 4
    public static let btleFieldType: UInt16 = 30006
    public static let btleChannelOffset = 1
    public static let btleClockOffset = 4
    public static let btleClockTickNanoseconds: UInt32 = 100
    public static let btleRSSIAverageOffset = 10
    public static let btleFieldLength = 12
    /// Channel MHz → RF channel: 2402 + 2k MHz.
    public static let baseFrequency = 2402
    public static let channelSpacing = 2
}
