import BTCapture

/// Rewrites a classic pcap as pcapng, optionally as if several capture interfaces had each recorded it: what
/// Wireshark writes when it merges two adapters' or two sniffers' captures. Interface k sees each packet
/// `k × hostDelayMicroseconds` later, and an nRF Sniffer v3 record's firmware clock on interface k runs
/// `k × firmwareOffsetMicroseconds` ahead (each dongle has its own clock). Tests and fuzz seeds use it.
public enum PcapngConversion {
    public struct ConversionError: Error, CustomStringConvertible {
        public var description: String
    }

    static let classicHeaderLength = 24
    static let classicRecordHeaderLength = 16
    /// A section header's section length: not given.
    static let unknownSectionLength: UInt64 = .max

    public static func convert(_ pcap: [UInt8], interfaces: Int = 1, hostDelayMicroseconds: UInt64 = 300,
                               firmwareOffsetMicroseconds: UInt32 = 123_456_789) throws -> [UInt8] {
        guard pcap.count >= classicHeaderLength, interfaces >= 1 else { throw ConversionError(description: "not a classic pcap file") }
        let magic = UInt32(pcap[0]) << 24 | UInt32(pcap[1]) << 16 | UInt32(pcap[2]) << 8 | UInt32(pcap[3])
        guard PcapMagic.isPcap(magic) else { throw ConversionError(description: "not a classic pcap file") }
        let bigEndian = magic == PcapMagic.microseconds || magic == PcapMagic.nanoseconds
        let nanoseconds = PcapMagic.isNanosecondPcap(magic)
        func u32(_ bytes: [UInt8], _ o: Int, bigEndian: Bool) -> UInt32 {
            let v = UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24
            return bigEndian ? v.byteSwapped : v
        }
        let linktype = UInt16(truncatingIfNeeded: u32(pcap, 20, bigEndian: bigEndian))
        var out = ByteWriter(capacity: pcap.count * interfaces * 2)
        var body = ByteWriter()
        /// Type, length, `body` padded to 4 bytes, length again.
        func block(_ type: UInt32) {
            while body.count % 4 != 0 { body.u8(0) }
            let length = UInt32(12 + body.count)
            out.u32(type)
            out.u32(length)
            out.bytes += body.bytes
            out.u32(length)
            body.reset()
        }
        body.u32(PcapMagic.pcapngByteOrder)
        body.u16(PcapngBlock.majorVersion)
        body.u16(0)
        body.u64(unknownSectionLength)
        block(PcapngBlock.sectionHeader)
        for _ in 0..<interfaces {
            body.u16(linktype)
            body.u16(0)
            body.u32(u32(pcap, 16, bigEndian: bigEndian))  // snaplen
            body.u16(PcapngBlock.Option.timestampResolution)
            body.u16(1)
            body.u32(UInt32(PcapngBlock.Option.nanosecondResolution))  // the value byte, padded
            body.u32(UInt32(PcapngBlock.Option.endOfOptions))  // code and length 0
            block(PcapngBlock.interfaceDescription)
        }
        var o = classicHeaderLength
        while o + classicRecordHeaderLength <= pcap.count {
            let captured = Int(u32(pcap, o + 8, bigEndian: bigEndian)), original = u32(pcap, o + 12, bigEndian: bigEndian)
            guard o + classicRecordHeaderLength + captured <= pcap.count else { break }
            let time = UInt64(u32(pcap, o, bigEndian: bigEndian)) * 1_000_000_000
                + UInt64(u32(pcap, o + 4, bigEndian: bigEndian)) * (nanoseconds ? 1 : 1000)
            let data = Array(pcap[(o + classicRecordHeaderLength)..<(o + classicRecordHeaderLength + captured)])
            for k in 0..<interfaces {
                var copy = data
                if k > 0, Int(linktype) == Linktype.nordicBLE, copy.count >= NordicBLEHeader.packetOffset,
                   copy[NordicBLEHeader.versionOffset] >= NordicBLEHeader.firstAbsoluteTimeVersion {
                    let t = NordicBLEHeader.timeOffset
                    let clock = u32(copy, t, bigEndian: false) &+ firmwareOffsetMicroseconds &* UInt32(k)
                    for i in 0..<4 { copy[t + i] = UInt8(truncatingIfNeeded: clock >> (8 * UInt32(i))) }
                }
                let at = time + UInt64(k) * hostDelayMicroseconds * 1000
                body.u32(UInt32(k))
                body.u32(UInt32(at >> 32))
                body.u32(UInt32(at & 0xFFFF_FFFF))
                body.u32(UInt32(captured))
                body.u32(original)
                body.bytes += copy
                block(PcapngBlock.enhancedPacket)
            }
            o += classicRecordHeaderLength + captured
        }
        return out.bytes
    }
}
