import BTCapture

/// Rewrites a classic pcap as pcapng, optionally as if several capture interfaces had each recorded it: what
/// Wireshark writes when it merges two adapters' or two sniffers' captures. Interface k sees each packet
/// `k × hostDelayMicroseconds` later, and an nRF Sniffer v3 record's firmware clock on interface k runs
/// `k × firmwareOffsetMicroseconds` ahead (each dongle has its own clock). `merge` puts different captures (an HCI
/// log and an air sniffer's) in one file. Tests and fuzz seeds use it.
public enum PcapngConversion {
    public struct ConversionError: Error, CustomStringConvertible {
        public var description: String
    }

    static let classicHeaderLength = 24
    static let classicRecordHeaderLength = 16
    /// A section header's section length: not given.
    static let unknownSectionLength: UInt64 = .max

    /// A classic pcap read whole: its linktype, snap length and packets (times in nanoseconds since 1970).
    struct Classic {
        var linktype: UInt16
        var snaplen: UInt32
        var packets: [(time: UInt64, data: ArraySlice<UInt8>, original: UInt32)] = []

        init(_ pcap: [UInt8]) throws {
            guard pcap.count >= PcapngConversion.classicHeaderLength else { throw ConversionError(description: "not a classic pcap file") }
            let magic = UInt32(pcap[0]) << 24 | UInt32(pcap[1]) << 16 | UInt32(pcap[2]) << 8 | UInt32(pcap[3])
            guard PcapMagic.isPcap(magic) else { throw ConversionError(description: "not a classic pcap file") }
            let bigEndian = magic == PcapMagic.microseconds || magic == PcapMagic.nanoseconds
            let nanoseconds = PcapMagic.isNanosecondPcap(magic)
            func u32(_ o: Int) -> UInt32 {
                let v = UInt32(pcap[o]) | UInt32(pcap[o + 1]) << 8 | UInt32(pcap[o + 2]) << 16 | UInt32(pcap[o + 3]) << 24
                return bigEndian ? v.byteSwapped : v
            }
            linktype = UInt16(truncatingIfNeeded: u32(20))
            snaplen = u32(16)
            let header = PcapngConversion.classicRecordHeaderLength
            var o = PcapngConversion.classicHeaderLength
            while o + header <= pcap.count {
                let captured = Int(u32(o + 8))
                guard o + header + captured <= pcap.count else { break }
                packets.append((UInt64(u32(o)) * 1_000_000_000 + UInt64(u32(o + 4)) * (nanoseconds ? 1 : 1000),
                                pcap[(o + header)..<(o + header + captured)], u32(o + 12)))
                o += header + captured
            }
        }
    }

    /// A pcapng section being written: one section header, then interface descriptions and packets.
    struct Writer {
        var out: ByteWriter
        private var body = ByteWriter()

        init(capacity: Int) {
            out = ByteWriter(capacity: capacity)
            body.u32(PcapMagic.pcapngByteOrder)
            body.u16(PcapngBlock.majorVersion)
            body.u16(0)
            body.u64(PcapngConversion.unknownSectionLength)
            block(PcapngBlock.sectionHeader)
        }

        /// Type, length, `body` padded to 4 bytes, length again.
        private mutating func block(_ type: UInt32) {
            while body.count % 4 != 0 { body.u8(0) }
            let length = UInt32(12 + body.count)
            out.u32(type)
            out.u32(length)
            out.bytes += body.bytes
            out.u32(length)
            body.reset()
        }

        /// An interface with nanosecond timestamps.
        mutating func interface(linktype: UInt16, snaplen: UInt32) {
            body.u16(linktype)
            body.u16(0)
            body.u32(snaplen)
            body.u16(PcapngBlock.Option.timestampResolution)
            body.u16(1)
            body.u32(UInt32(PcapngBlock.Option.nanosecondResolution))  // the value byte, padded
            body.u32(UInt32(PcapngBlock.Option.endOfOptions))  // code and length 0
            block(PcapngBlock.interfaceDescription)
        }

        mutating func packet(interface: Int, time: UInt64, data: some Collection<UInt8>, original: UInt32) {
            body.u32(UInt32(interface))
            body.u32(UInt32(time >> 32))
            body.u32(UInt32(time & 0xFFFF_FFFF))
            body.u32(UInt32(data.count))
            body.u32(original)
            body.bytes += data
            block(PcapngBlock.enhancedPacket)
        }
    }

    public static func convert(_ pcap: [UInt8], interfaces: Int = 1, hostDelayMicroseconds: UInt64 = 300,
                               firmwareOffsetMicroseconds: UInt32 = 123_456_789) throws -> [UInt8] {
        guard interfaces >= 1 else { throw ConversionError(description: "not a classic pcap file") }
        let classic = try Classic(pcap)
        let linktype = classic.linktype
        var writer = Writer(capacity: pcap.count * interfaces * 2)
        for _ in 0..<interfaces { writer.interface(linktype: linktype, snaplen: classic.snaplen) }
        for packet in classic.packets {
            for k in 0..<interfaces {
                var copy = Array(packet.data)
                if k > 0, Int(linktype) == Linktype.nordicBLE, copy.count >= NordicBLEHeader.packetOffset,
                   copy[NordicBLEHeader.versionOffset] >= NordicBLEHeader.firstAbsoluteTimeVersion {
                    let t = NordicBLEHeader.timeOffset
                    let old = UInt32(copy[t]) | UInt32(copy[t + 1]) << 8 | UInt32(copy[t + 2]) << 16 | UInt32(copy[t + 3]) << 24
                    let clock = old &+ firmwareOffsetMicroseconds &* UInt32(k)
                    for i in 0..<4 { copy[t + i] = UInt8(truncatingIfNeeded: clock >> (8 * UInt32(i))) }
                }
                writer.packet(interface: k, time: packet.time + UInt64(k) * hostDelayMicroseconds * 1000, data: copy,
                              original: packet.original)
            }
        }
        return writer.out.bytes
    }

    /// The packet times (nanoseconds since 1970) of a classic pcap.
    public static func packetTimes(_ pcap: [UInt8]) throws -> [UInt64] {
        try Classic(pcap).packets.map(\.time)
    }

    /// Classic pcaps as one pcapng, each its own interface, their packets in time order: what Wireshark's
    /// mergecap writes (an HCI log beside an air sniffer's capture). Capture k's times move by `shifts[k]`
    /// nanoseconds (none when `shifts` is shorter).
    public static func merge(_ pcaps: [[UInt8]], shiftedBy shifts: [Int64] = []) throws -> [UInt8] {
        let captures = try pcaps.map(Classic.init)
        var writer = Writer(capacity: pcaps.reduce(0) { $0 + $1.count } * 2)
        for c in captures { writer.interface(linktype: c.linktype, snaplen: c.snaplen) }
        var all: [(time: UInt64, interface: Int, packet: Int)] = []
        for (k, c) in captures.enumerated() {
            let shift = k < shifts.count ? shifts[k] : 0
            all += c.packets.indices.map { (UInt64(Int64(bitPattern: c.packets[$0].time) &+ shift), k, $0) }
        }
        all.sort { ($0.time, $0.interface, $0.packet) < ($1.time, $1.interface, $1.packet) }
        for p in all {
            let packet = captures[p.interface].packets[p.packet]
            writer.packet(interface: p.interface, time: p.time, data: packet.data, original: packet.original)
        }
        return writer.out.bytes
    }
}
