import BTWire
import BTCapture

/// Takes the LE link-layer packet out of an air sniffer's record: the container header's metadata, then the
/// packet's access address, PDU and CRC (LINKLAYER.md §1). One file per container format extends this.
public enum LLContainer {
    /// Access address, the PDU header and the CRC [Core Vol 6 Part B §2.1].
    static let accessAddressLength = 4
    static let headerLength = 2
    static let crcLength = 3
    /// A data PDU header's CP bit: a CTEInfo byte follows the Length byte [§2.4].
    static let cteInfoPresent: UInt8 = 0x20

    /// The packet of one record of `linktype` (`CaptureRecord.sourceType` of a `.linkLayer` record).
    public static func unwrap(_ record: CaptureRecord) -> Result<LLCapturedPacket, LLDecodeError> {
        unwrap(linktype: Int(record.sourceType), record.payload, originalLength: record.originalLength)
    }

    public static func unwrap(linktype: Int, _ bytes: UnsafeRawBufferPointer, originalLength: Int)
        -> Result<LLCapturedPacket, LLDecodeError>
    {
        var packet = LLCapturedPacket.none
        if let error = unwrap(linktype: linktype, bytes, originalLength: originalLength, into: &packet) {
            return .failure(error)
        }
        return .success(packet)
    }

    /// As `unwrap`, into `packet` (which must start as `LLCapturedPacket.none`): the decoder fills its frame in
    /// place, as a packet returned and copied along the way costs more than reading it. Nil when it could be read.
    static func unwrap(linktype: Int, _ bytes: UnsafeRawBufferPointer, originalLength: Int,
                       into packet: inout LLCapturedPacket) -> LLDecodeError? {
        switch linktype {
        case Linktype.bluetoothLELL:
            return split(bytes, into: &packet)
        case Linktype.bluetoothLELLWithPHDR:
            return unwrapPseudoHeader(bytes, into: &packet)
        case Linktype.nordicBLE:
            return unwrapNordic(bytes, originalLength: originalLength, into: &packet)
        case Linktype.ppi:
            return unwrapPPI(bytes, into: &packet)
        default:
            return LLDecodeError(.containerNotLinkLayer, "linktype \(linktype) is not an LE link-layer capture")
        }
    }

    /// Splits the LL packet (access address, [CI], header, payload, CRC) into `packet`, whose container
    /// metadata is already set (the PHY decides the CI byte, the class the CTEInfo byte).
    static func split(_ bytes: UnsafeRawBufferPointer, into packet: inout LLCapturedPacket) -> LLDecodeError? {
        guard bytes.count >= accessAddressLength else {
            return LLDecodeError(.packetTooShort, "\(bytes.count) bytes hold no access address")
        }
        packet.accessAddress = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
        var offset = accessAddressLength
        if packet.phy == .coded {
            guard let ci = offset < bytes.count ? bytes[offset] : nil else {
                return LLDecodeError(.packetTooShort, "LE Coded packet ends before its coding indicator")
            }
            packet.codingIndicator = ci & 0x03
            offset += 1
        }
        guard bytes.count >= offset + headerLength else {
            return LLDecodeError(.packetTooShort, "\(bytes.count) bytes end inside the PDU header")
        }
        var header = headerLength
        if !packet.isAdvertising && bytes[offset] & cteInfoPresent != 0 { header += 1 }
        let length = Int(bytes[offset + 1])
        let pduEnd = offset + header + length
        let available = min(bytes.count, pduEnd)
        packet.pdu = UnsafeRawBufferPointer(rebasing: bytes[offset..<max(offset, available)])
        // A packet cut before its CRC keeps the sniffer's CRC flag, which it set on air; without a flag its CRC
        // stays unchecked.
        if bytes.count >= pduEnd + crcLength {
            packet.storedCRC = UInt32(bytes[pduEnd]) | UInt32(bytes[pduEnd + 1]) << 8 | UInt32(bytes[pduEnd + 2]) << 16
        } else {
            packet.isCutShort = true
        }
        return nil
    }

    /// RF channel (0–39, 2402 + 2k MHz) → channel index (37, 38, 39 sit at 2402, 2426, 2480 MHz) [Core Vol 6
    /// Part B §1.4.1].
    static func channelIndex(rfChannel rf: Int) -> UInt8? {
        switch rf {
        case 0: 37
        case 12: 38
        case 39: 39
        case 1...11: UInt8(rf - 1)
        case 13...38: UInt8(rf - 2)
        default: nil
        }
    }
}
