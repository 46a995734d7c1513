import BTWire
import BTCapture

/// LINKTYPE_NORDIC_BLE (272): see `NordicBLEHeader` (BTCapture) for the layout.
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
        packet.snifferPacketCounter = u16(version == 0 ? N.legacyPacketCounterOffset : N.packetCounterOffset)
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
