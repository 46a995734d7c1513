import BTCapture

/// Rewrites a classic pcap as pcapng, optionally as if several capture interfaces had each recorded it: what
/// Wireshark writes when it merges two adapters' or two sniffers' captures. Interface k sees each packet
/// `k × hostDelayMicroseconds` later, and an nRF Sniffer v3 record's firmware clock on interface k runs
/// `k × firmwareOffsetMicroseconds` ahead (each dongle has its own clock). Tests and fuzz seeds use it.
public enum PcapngConversion {
    public struct ConversionError: Error, CustomStringConvertible {
        public var description: String
    }

    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 1
    static let enhancedPacket: UInt32 = 6
    static let classicHeaderLength = 24
    static let classicRecordHeaderLength = 16
    /// if_tsresol: 10^-9 s.
    static let nanosecondResolution: UInt8 = 9
    static let timestampResolutionOption: UInt16 = 9

    public static func convert(_ pcap: [UInt8], interfaces: Int = 1, hostDelayMicroseconds: UInt64 = 300,
                               firmwareOffsetMicroseconds: UInt32 = 123_456_789) throws -> [UInt8] {
        guard pcap.count >= classicHeaderLength, interfaces >= 1 else { throw ConversionError(description: "not a classic pcap file") }
        let magic = UInt32(pcap[0]) << 24 | UInt32(pcap[1]) << 16 | UInt32(pcap[2]) << 8 | UInt32(pcap[3])
        guard PcapMagic.isPcap(magic) else { throw ConversionError(description: "not a classic pcap file") }
        let bigEndian = magic == PcapMagic.microseconds || magic == PcapMagic.nanoseconds
        let nanoseconds = PcapMagic.isNanosecondPcap(magic)
        func u32(_ o: Int) -> UInt32 {
            let v = UInt32(pcap[o]) | UInt32(pcap[o + 1]) << 8 | UInt32(pcap[o + 2]) << 16 | UInt32(pcap[o + 3]) << 24
            return bigEndian ? v.byteSwapped : v
        }
        let linktype = UInt16(truncatingIfNeeded: u32(20))
        var out = block(sectionHeader, le32(PcapMagic.pcapngByteOrder) + le16(1) + le16(0) + [UInt8](repeating: 0xFF, count: 8))
        for _ in 0..<interfaces {
            out += block(interfaceDescription, le16(linktype) + le16(0) + le32(u32(16))
                         + le16(timestampResolutionOption) + le16(1) + [nanosecondResolution, 0, 0, 0] + le32(0))
        }
        var o = classicHeaderLength
        while o + classicRecordHeaderLength <= pcap.count {
            let captured = Int(u32(o + 8)), original = u32(o + 12)
            guard o + classicRecordHeaderLength + captured <= pcap.count else { break }
            let time = UInt64(u32(o)) * 1_000_000_000 + UInt64(u32(o + 4)) * (nanoseconds ? 1 : 1000)
            let data = Array(pcap[(o + classicRecordHeaderLength)..<(o + classicRecordHeaderLength + captured)])
            for k in 0..<interfaces {
                var copy = data
                if k > 0, Int(linktype) == Linktype.nordicBLE, copy.count >= NordicBLEHeader.packetOffset,
                   copy[NordicBLEHeader.versionOffset] >= NordicBLEHeader.firstAbsoluteTimeVersion {
                    let t = NordicBLEHeader.timeOffset
                    var clock = UInt32(copy[t]) | UInt32(copy[t + 1]) << 8 | UInt32(copy[t + 2]) << 16 | UInt32(copy[t + 3]) << 24
                    clock &+= firmwareOffsetMicroseconds &* UInt32(k)
                    for i in 0..<4 { copy[t + i] = UInt8(truncatingIfNeeded: clock >> (8 * UInt32(i))) }
                }
                let at = time + UInt64(k) * hostDelayMicroseconds * 1000
                out += block(enhancedPacket, le32(UInt32(k)) + le32(UInt32(at >> 32)) + le32(UInt32(at & 0xFFFF_FFFF))
                             + le32(UInt32(captured)) + le32(original) + copy)
            }
            o += classicRecordHeaderLength + captured
        }
        return out
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }

    static func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
        var body = body
        while body.count % 4 != 0 { body.append(0) }
        let length = le32(UInt32(12 + body.count))
        return le32(type) + length + body + length
    }
}
