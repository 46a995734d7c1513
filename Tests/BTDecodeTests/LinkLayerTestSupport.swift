import Testing
import BTWire
import BTCapture
import BTDecode
import TestSupport

/// Hex with spaces and line breaks allowed, for annotated byte literals: on each line, two spaces in a row
/// or the first word that is not hex start a comment.
func hexBytes(_ text: String) -> [UInt8] {
    let code = text.split(separator: "\n").map { line in
        let trimmed = line.drop { $0 == " " }
        let bytes = trimmed.range(of: "  ").map { trimmed[..<$0.lowerBound] } ?? trimmed
        return bytes.split(separator: " ").prefix { $0.allSatisfy(\.isHexDigit) }.joined()
    }
    let digits = code.joined()
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(after: i)
        out.append(UInt8(digits[i...j], radix: 16)!)
        i = digits.index(after: j)
    }
    return out
}

/// An LL packet: access address, PDU, and its CRC computed with `crcInit` (unless `crc` is given).
func llPacket(aa: UInt32, _ pdu: [UInt8], crcInit: UInt32 = LLCRC.advertisingInitialValue, crc: UInt32? = nil) -> [UInt8] {
    let value = crc ?? pdu.withUnsafeBytes { LLCRC.compute($0, initialValue: crcInit) }
    return CaptureBytes.le32(aa) + pdu + [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16)]
}

/// PHDR flags as Sniffle writes them: dewhitened, signal, noise, reference AA valid.
let phdrBaseFlags: UInt16 = 0x0013
let phdrCRCGood: UInt16 = 0x0C00
let phdrCentralToPeripheral: UInt16 = 2 << 7
let phdrPeripheralToCentral: UInt16 = 3 << 7

/// A LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR record: RF channel, signal −50 dBm, noise −128, no offenses, the
/// packet's AA as reference, flags, then the packet.
func phdrRecord(rfChannel: UInt8 = 0, flags: UInt16, _ packet: [UInt8]) -> [UInt8] {
    [rfChannel, 0xCE, 0x80, 0] + Array(packet.prefix(4)) + CaptureBytes.le16(flags) + packet
}

/// Unwraps one record of `linktype`; the packet borrows its bytes from `arena`.
func unwrap(_ linktype: Int, _ bytes: [UInt8], originalLength: Int? = nil,
            in arena: ByteArena) -> Result<LLCapturedPacket, LLDecodeError> {
    LLContainer.unwrap(linktype: linktype, arena.hold(bytes), originalLength: originalLength ?? bytes.count)
}

/// What a test keeps of a decoded air record (the frame's bytes are borrowed).
struct LLOutcome {
    var crc: LLCRCStatus
    var direction: LLDirection
    var retransmission: Bool
    var encrypted: Bool
    var connectionKnown: Bool
    var attPDU: [UInt8]?
    var l2capFragments: Int?
    var malformed: Bool
}

/// Feeds air-sniffer records of one linktype through `PacketDecoder` and collects statistics.
final class LLHarness {
    let issues = IssueLog()
    var decoder: PacketDecoder
    var statistics = CaptureStatistics()
    var number = 0
    let linktype: Int

    init(linktype: Int = Linktype.bluetoothLELLWithPHDR) {
        self.linktype = linktype
        decoder = PacketDecoder(issues: issues)
    }

    @discardableResult
    func feed(_ bytes: [UInt8], atMicroseconds us: Int64? = nil) -> LLOutcome? {
        number += 1
        let n = number
        let time = us ?? Int64(n) * 10_000
        return bytes.withUnsafeBytes { raw in
            let record = CaptureRecord(number: n, offset: Int64(n * 100), timestamp: Timestamp(nanoseconds: time * 1000),
                                       direction: .unknown, kind: .linkLayer, controller: 0,
                                       sourceType: UInt32(linktype), originalLength: raw.count, payload: raw)
            let frame = decoder.decode(record)
            statistics.add(frame)
            guard let ll = frame.linkLayer else { return nil }
            return LLOutcome(crc: ll.crc, direction: ll.direction, retransmission: ll.isRetransmission,
                             encrypted: ll.isEncrypted, connectionKnown: ll.connectionKnown,
                             attPDU: frame.attPDU.map(Array.init), l2capFragments: frame.l2cap?.fragments,
                             malformed: frame.isMalformed)
        }
    }
}
