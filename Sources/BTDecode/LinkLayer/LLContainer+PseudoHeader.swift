import BTWire
import BTCapture

/// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (256): see `LLPseudoHeader` (BTCapture) for the layout.
extension LLContainer {
    static func unwrapPseudoHeader(_ bytes: UnsafeRawBufferPointer, into packet: inout LLCapturedPacket) -> LLDecodeError? {
        let reader = ByteReader(bytes)
        guard bytes.count >= LLPseudoHeader.length, let flags = reader.get(UInt16.self, at: 8) else {
            return LLDecodeError(.containerTooShort, "\(bytes.count) bytes are shorter than the 10-byte pseudo-header")
        }
        // The writer's RF channel; WHAD writes the channel index here instead, which the spec's mapping turns
        // into a neighbouring index: good enough for display, never used to name or classify a PDU.
        packet.channel = channelIndex(rfChannel: Int(bytes[0]))
        if flags & LLPseudoHeader.signalValid != 0 { packet.rssi = Int8(bitPattern: bytes[1]) }
        if flags & LLPseudoHeader.decrypted != 0 { packet.encryption = .decrypted }
        if flags & LLPseudoHeader.crcChecked != 0 { packet.crc = flags & LLPseudoHeader.crcValid != 0 ? .good : .bad }
        packet.phy = LLPHY(rawValue: UInt8((flags & LLPseudoHeader.phyMask) >> LLPseudoHeader.phyShift)) ?? .unknown
        switch LLPseudoHeader.PDUType(rawValue: (flags & LLPseudoHeader.pduTypeMask) >> LLPseudoHeader.pduTypeShift) {
        case .auxiliaryAdvertising:
            packet.pduClass = .advertising
            packet.isSecondaryChannel = true
            packet.auxiliaryType = UInt8((flags & LLPseudoHeader.auxTypeMask) >> LLPseudoHeader.auxTypeShift)
        case .dataCentralToPeripheral:
            packet.pduClass = .data
            packet.direction = .centralToPeripheral
        case .dataPeripheralToCentral:
            packet.pduClass = .data
            packet.direction = .peripheralToCentral
        case .cisCentralToPeripheral, .cisPeripheralToCentral, .bis:
            packet.pduClass = .isochronous
        case .unspecified, .reserved, nil:
            break  // the access address decides
        }
        return split(UnsafeRawBufferPointer(rebasing: bytes[LLPseudoHeader.length...]), into: &packet)
    }
}
