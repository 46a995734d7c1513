import BTWire
import BTCapture

/// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (256): a 10-byte pseudo-header before the LL packet
/// [tcpdump.org LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR; LINKLAYER.md §1.3].
///
///     off 0 RF channel u8 · 1 signal i8 · 2 noise i8 · 3 AA offenses u8 · 4 reference AA u32 · 8 flags u16
enum LLPseudoHeader {
    static let length = 10
    static let dewhitened: UInt16 = 0x0001
    static let signalValid: UInt16 = 0x0002
    static let noiseValid: UInt16 = 0x0004
    static let decrypted: UInt16 = 0x0008
    static let referenceAccessAddressValid: UInt16 = 0x0010
    static let accessAddressOffensesValid: UInt16 = 0x0020
    static let channelAliased: UInt16 = 0x0040
    static let pduTypeMask: UInt16 = 0x0380
    static let pduTypeShift: UInt16 = 7
    static let crcChecked: UInt16 = 0x0400
    static let crcValid: UInt16 = 0x0800
    static let auxTypeMask: UInt16 = 0x3000
    static let auxTypeShift: UInt16 = 12
    static let phyMask: UInt16 = 0xC000
    static let phyShift: UInt16 = 14

    /// The flags' PDU type (0x0380 >> 7).
    enum PDUType: UInt16 {
        case unspecified = 0, auxiliaryAdvertising, dataCentralToPeripheral, dataPeripheralToCentral
        case cisCentralToPeripheral, cisPeripheralToCentral, bis, reserved
    }
}

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
