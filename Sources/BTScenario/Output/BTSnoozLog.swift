import BTCapture

/// Android's binary btsnooz log, made from a scenario's H4 btsnoop file the way Android 12 and later make it
/// while the full snoop log is off (AOSP system/gd/hal/snoop_logger.cc): every HCI packet goes into an in-memory
/// ring as a btsnoop record cut short, and each bug report dumps the whole ring to `btsnooz_hci.log` after
/// renaming the dump before to `btsnooz_hci.log.last`. So the file is btsnoop (header, datalink H4), its records
/// keep their original length and time, and two dumps overlap.
///
/// What a record keeps (`get_btsnooz_packet_length_to_write`): commands and events whole; ACL the ACL and L2CAP
/// headers and 6 bytes more (14 in all), or the whole packet on the signalling channel (CID 1); SCO and ISO only
/// their type byte; nothing past 150 bytes a record, its 25-byte header (btsnoop's 24 and the type) included.
///
/// Some phones write the log in another layout (`Layout.btsnoozRecords`, seen in a real bug report): the same
/// btsnoop file header, then the btsnooz summary's version 2 records, uncompressed, with no time but each
/// record's delta from the one before.
public enum BTSnoozLog {
    /// How a dump is laid out.
    public enum Layout: String, CaseIterable, Sendable {
        /// btsnoop H4 records cut short (AOSP snoop_logger.cc).
        case btsnoop
        /// A btsnoop file header, then btsnooz version 2 records (what some phones write).
        case btsnoozRecords = "btsnooz-records"
    }

    /// Packets the ring holds on a user build: 256 KiB over 150 bytes a packet (AOSP `GetMaxPacketsPerBuffer`).
    public static let userBuildRing = 256 * 1024 / maximumRecordBytes
    public static let maximumRecordBytes = 150
    /// The btsnoop record header and the H4 type byte.
    static let recordHeaderBytes = BTSnoopReader.recordHeaderLength + 1
    /// ACL bytes kept of a packet not on the signalling channel: ACL header, L2CAP header and 6 more.
    public static let aclKept = 14
    static let aclAndL2CAPHeaders = 8
    static let signalingCID: UInt16 = 0x0001
    /// Where the L2CAP channel id is in an ACL packet: after the ACL header and the L2CAP length.
    static let cidOffset = 6

    /// One record of a btsnoop file, as found in its bytes.
    struct Record {
        var originalLength: UInt32
        var flags: UInt32
        var time: UInt64
        var data: ArraySlice<UInt8>
    }

    static func records(_ bytes: [UInt8]) -> [Record] {
        func be32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        var out: [Record] = []
        var at = BTSnoopReader.fileHeaderLength
        while at + BTSnoopReader.recordHeaderLength <= bytes.count {
            let included = Int(be32(at + 4))
            let end = at + BTSnoopReader.recordHeaderLength + included
            guard end <= bytes.count else { break }
            out.append(Record(originalLength: be32(at), flags: be32(at + 8),
                              time: UInt64(be32(at + 16)) << 32 | UInt64(be32(at + 20)),
                              data: bytes[(at + BTSnoopReader.recordHeaderLength)..<end]))
            at = end
        }
        return out
    }

    /// The packets of a btsnoop file.
    public static func packetCount(_ btsnoop: [UInt8]) -> Int { records(btsnoop).count }

    /// How many bytes of an H4 packet (its type byte first) the ring keeps, type byte excluded.
    public static func kept(_ h4: ArraySlice<UInt8>) -> Int {
        guard let type = h4.first else { return 0 }
        let packet = h4.dropFirst()
        let kept: Int
        switch type {
        case H4PacketType.command, H4PacketType.event:
            kept = packet.count
        case H4PacketType.acl:
            if packet.count > aclAndL2CAPHeaders {
                let cidAt = packet.startIndex + cidOffset
                let cid = UInt16(packet[cidAt]) | UInt16(packet[cidAt + 1]) << 8
                kept = cid == signalingCID ? packet.count : min(aclKept, packet.count)
            } else {
                kept = packet.count
            }
        default:
            kept = 0  // SCO and ISO: never kept, as they may carry voice
        }
        return min(kept, maximumRecordBytes - recordHeaderBytes)
    }

    /// The ring dumped after the first `through` packets of `btsnoop` (all by default): its last `ring` packets.
    public static func dump(fromBTSnoop btsnoop: [UInt8], through: Int? = nil, ring: Int = userBuildRing,
                            layout: Layout = .btsnoop) -> [UInt8] {
        let all = records(btsnoop)
        let end = min(through ?? all.count, all.count)
        let start = max(0, end - ring)
        var out = ByteWriter(capacity: btsnoop.count)
        out.append(btsnoop.prefix(BTSnoopReader.fileHeaderLength))
        for (i, r) in all[start..<end].enumerated() {
            let keep = kept(r.data)
            switch layout {
            case .btsnoop:
                out.u32BE(r.originalLength)
                out.u32BE(UInt32(keep + 1))
                out.u32BE(r.flags)
                out.u32BE(0)  // dropped packets
                out.u64BE(r.time)
                out.append(r.data.prefix(keep + 1))
            case .btsnoozRecords:
                guard let indicator = r.data.first, let type = btsnoozType(h4: indicator, received: r.flags & 1 == 1)
                else { continue }
                // The first record's delta reaches back to the packet before it, which the ring no longer holds.
                let previous = all[start + i - (start + i > 0 ? 1 : 0)].time
                out.append(btsnoozRecord(type: type, kept: r.data.dropFirst().prefix(keep), packetLength: r.data.count - 1,
                                         deltaMicroseconds: r.time &- previous, version: 2))
            }
        }
        return out.bytes
    }

    /// The btsnooz record type (AOSP btsnoop_mem.h) of an H4 packet by its type byte and direction; nil for a
    /// type btsnooz has none for.
    public static func btsnoozType(h4 indicator: UInt8, received: Bool) -> UInt8? {
        typealias T = BTSnoozReader.PacketType
        switch indicator {
        case H4PacketType.command: return T.outCommand
        case H4PacketType.event: return T.inEvent
        case H4PacketType.acl: return received ? T.inACL : T.outACL
        case H4PacketType.sco: return received ? T.inSCO : T.outSCO
        case H4PacketType.iso: return received ? T.inISO : T.outISO
        default: return nil
        }
    }

    /// One btsnooz record, little-endian: the length of the type and the kept bytes (u16), in version 2 the
    /// packet's length on the wire with its type (u16), the time since the record before (u32; AOSP names it
    /// milliseconds but writes microseconds), the type, the kept bytes.
    public static func btsnoozRecord(type: UInt8, kept: ArraySlice<UInt8>, packetLength: Int, deltaMicroseconds: UInt64,
                                     version: Int) -> [UInt8] {
        var out = ByteWriter(capacity: BTSnoozReader.version2RecordHeaderLength + kept.count)
        out.u16(UInt16(clamping: kept.count + 1))
        if version == 2 { out.u16(UInt16(clamping: packetLength + 1)) }
        out.u32(UInt32(clamping: deltaMicroseconds))
        out.u8(type)
        out.append(kept)
        return out.bytes
    }

    /// The two files a phone holds after two bug reports: `.last`, dumped after the first `lastDumpAt` packets,
    /// and the current log, dumped at the end. With fewer packets between them than the ring holds, they overlap.
    public static func files(fromBTSnoop btsnoop: [UInt8], lastDumpAt: Int, ring: Int = userBuildRing,
                             layout: Layout = .btsnoop) -> (last: [UInt8], current: [UInt8]) {
        (dump(fromBTSnoop: btsnoop, through: lastDumpAt, ring: ring, layout: layout),
         dump(fromBTSnoop: btsnoop, ring: ring, layout: layout))
    }

    /// Where each record of a dump starts.
    public static func recordStarts(_ log: [UInt8], layout: Layout = .btsnoop) -> [Int] {
        var at = BTSnoopReader.fileHeaderLength
        var starts: [Int] = []
        switch layout {
        case .btsnoop:
            while at + BTSnoopReader.recordHeaderLength <= log.count {
                starts.append(at)
                let included = log[(at + 4)..<(at + 8)].reduce(0) { $0 << 8 | Int($1) }
                at += BTSnoopReader.recordHeaderLength + included
            }
        case .btsnoozRecords:
            while at + BTSnoozReader.version2RecordHeaderLength <= log.count {
                starts.append(at)
                at += BTSnoozReader.version2RecordHeaderLength + max(1, Int(log[at]) | Int(log[at + 1]) << 8) - 1
            }
        }
        return starts
    }

    /// `log` cut inside a record, as a copy or an upload interrupted: `share` (0–1) of its records whole, then
    /// half of the next one.
    public static func truncated(_ log: [UInt8], share: Double, layout: Layout = .btsnoop) -> [UInt8] {
        let starts = recordStarts(log, layout: layout)
        guard !starts.isEmpty else { return log }
        let index = min(starts.count - 1, Int(Double(starts.count) * max(0, min(1, share))))
        let next = index + 1 < starts.count ? starts[index + 1] : log.count
        return Array(log.prefix(starts[index] + (next - starts[index]) / 2))
    }
}
