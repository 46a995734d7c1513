import BTWire
import BTCapture

/// LINKTYPE_NORDIC_BLE (272): the nRF Sniffer's UART header, then a 10-byte event header, then the LL packet,
/// which starts at offset 17 in every header version [Wireshark packet-nordic_ble.c; LINKLAYER.md §1.4].
///
///     v0:    BE EF · … · payload length u8 @7 · event header @8 without its length byte
///     v1:    board u8 · header length u8 · payload length u8 · version 1 · packet counter u16 · id u8
///     v2/v3: board u8 · payload length u16 · version · packet counter u16 · id u8
///     event header @7: length u8 (10) · flags u8 · channel index u8 · RSSI (−dBm) u8 · event counter u16 ·
///                      time u32
enum NordicBLEHeader {
    static let legacyMagic: UInt16 = 0xBEEF
    static let legacyHeaderLength = 8
    static let version1HeaderBase = 1
    static let version2HeaderLength = 7
    static let versionOffset = 3
    static let flagsOffset = 8
    static let channelOffset = 9
    static let rssiOffset = 10
    static let eventCounterOffset = 11
    static let timeOffset = 13
    static let packetOffset = 17
    /// v3's packet ids; below v3 the id is not reliable (SweynTooth writes 0) and the access address decides.
    static let advertisingPacketID: UInt8 = 0x02
    static let dataPacketID: UInt8 = 0x06
    static let firstAbsoluteTimeVersion: UInt8 = 3

    // Flags.
    static let crcOK: UInt8 = 0x01
    /// Data PDUs: set when the central sent it.
    static let centralToPeripheral: UInt8 = 0x02
    static let encrypted: UInt8 = 0x04
    static let micOK: UInt8 = 0x08
    static let phyMask: UInt8 = 0x70
    static let phyShift: UInt8 = 4
    /// Advertising PDUs on a secondary channel: the aux type in bits 1–2.
    static let auxTypeMask: UInt8 = 0x06
    static let auxTypeShift: UInt8 = 1
}

extension LLContainer {
    static func unwrapNordic(_ bytes: UnsafeRawBufferPointer, originalLength: Int,
                             into packet: inout LLCapturedPacket) -> LLDecodeError? {
        typealias N = NordicBLEHeader
        guard bytes.count >= N.packetOffset else {
            return LLDecodeError(.containerTooShort, "\(bytes.count) bytes are shorter than the nRF Sniffer header")
        }
        // Every field read below lies before the packet at offset 17, which the guard above holds.
        @inline(__always) func u16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
        @inline(__always) func u32(_ offset: Int) -> UInt32 {
            UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
        let version: UInt8
        let headerLength: Int
        let payloadLength: Int
        if UInt16(bytes[0]) << 8 | UInt16(bytes[1]) == N.legacyMagic {
            version = 0
            headerLength = N.legacyHeaderLength
            payloadLength = Int(bytes[7])
        } else {
            version = bytes[N.versionOffset]
            if version == 1 {
                headerLength = N.version1HeaderBase + Int(bytes[1])
                payloadLength = Int(bytes[2])
            } else {
                headerLength = N.version2HeaderLength
                payloadLength = Int(u16(1))
            }
        }
        // Wireshark dissects nothing further when the lengths disagree; neither does btlens.
        guard headerLength + payloadLength == originalLength else {
            return LLDecodeError(.containerLengthMismatch,
                                          "nRF Sniffer v\(version) header says \(headerLength) + \(payloadLength) bytes, the record has \(originalLength)")
        }
        let flags = bytes[N.flagsOffset]
        packet.channel = bytes[N.channelOffset]
        packet.rssi = Int8(truncatingIfNeeded: -Int(bytes[N.rssiOffset]))
        packet.eventCounter = u16(N.eventCounterOffset)
        packet.snifferTime = u32(N.timeOffset)
        packet.snifferTimeIsDelta = version < N.firstAbsoluteTimeVersion
        packet.crc = flags & N.crcOK != 0 ? .good : .bad
        packet.phy = LLPHY(rawValue: (flags & N.phyMask) >> N.phyShift) ?? .unknown
        if version >= N.firstAbsoluteTimeVersion {
            let id = bytes[6]
            if id == N.advertisingPacketID { packet.pduClass = .advertising }
            if id == N.dataPacketID { packet.pduClass = .data }
        }
        let aa: UInt32? = bytes.count >= N.packetOffset + 4 ? u32(N.packetOffset) : nil
        let advertising = packet.pduClass == .advertising
            || (packet.pduClass == .unspecified && aa == LLCapturedPacket.advertisingAccessAddress)
        if advertising {
            // SweynTooth's v2 records say channel 0 for every packet: below v3 only a 2M packet (never on a
            // primary channel) proves a secondary one.
            if bytes[N.channelOffset] < LLCapturedPacket.firstPrimaryAdvertisingChannel,
               version >= N.firstAbsoluteTimeVersion || packet.phy == .le2M {
                packet.isSecondaryChannel = true
                packet.auxiliaryType = (flags & N.auxTypeMask) >> N.auxTypeShift
            }
        } else {
            packet.direction = flags & N.centralToPeripheral != 0 ? .centralToPeripheral : .peripheralToCentral
            if flags & N.encrypted != 0 {
                // The sniffer decrypted it when the MIC checked out (and took the MIC away); else ciphertext.
                packet.encryption = flags & N.micOK != 0 ? .decrypted : .encrypted
            } else {
                packet.encryption = .plaintext
            }
        }
        return split(UnsafeRawBufferPointer(rebasing: bytes[N.packetOffset...]), into: &packet)
    }
}
