import BTWire
import CPcap
import CStreamSupport
#if canImport(Glibc)
import Glibc
#endif

/// Reads pcap and pcapng through libpcap (which handles both byte orders, µs/ns resolution and pcapng blocks).
/// Bluetooth linktypes 187, 201 and 254 are decoded; LE air-sniffer records (251, 256, 272, PPI) are handed
/// on whole for BTDecode's link-layer decoder; other air captures are counted with a notice.
public final class PcapReader: RecordSource {
    public let info: CaptureInfo
    public let issues: IssueLog
    public let linktype: Int
    let handle: OpaquePointer
    var recordNumber = 0
    var stopped = false
    /// Where the previous record ended (start of the next block) in the stream.
    var lastEnd: Int64
    let file: UnsafeMutablePointer<FILE>
    /// Kept alive: libpcap reads its descriptor through the stream.
    let source: ByteSource
    /// Classic pcap with the standard record header (16 bytes): a record shorter than libpcap's snapshot length
    /// was not cut by it, so it ends 16 + caplen bytes after it starts and `ftell` (a seek through the stream's
    /// cookie on every record) is not needed to know where.
    let classicRecordHeader: Bool
    let snapshot: Int
    static let classicRecordHeaderLength: Int64 = 16

    /// - Parameters:
    ///   - source: the stream positioned at its start; bytes it already buffered (sniffing) are replayed.
    public init(source: ByteSource, isPcapng: Bool, issues: IssueLog = IssueLog()) throws {
        self.issues = issues
        let startOffset = source.offset
        let prefix: [UInt8]
        let opened: UnsafeMutablePointer<FILE>?
        if source.input != nil {
            // An archive member has no descriptor: libpcap reads through the source itself, sniffed bytes first.
            prefix = [UInt8](source.peek(source.available))
            opened = btlens_callback_stream(Unmanaged.passUnretained(source).toOpaque(), Self.readFromSource, startOffset)
        } else {
            prefix = source.takeBuffered()
            opened = prefix.withUnsafeBytes({
                btlens_prefixed_stream(source.fd, $0.baseAddress, $0.count, startOffset)
            })
        }
        guard let stream = opened else {
            throw CaptureError(.cannotOpen, "cannot allocate a stream for libpcap")
        }
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let pcap = pcap_fopen_offline_with_tstamp_precision(stream, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errbuf)
        else {
            fclose(stream)
            let message = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw CaptureError(.notACapture, "libpcap: \(message)")
        }
        let linktype = Int(pcap_datalink(pcap))
        // Refuse foreign linktypes before `self` is complete, so deinit does not close the handle twice.
        let bluetooth = [Linktype.bluetoothHCIH4, Linktype.bluetoothHCIH4WithPHDR, Linktype.bluetoothLinuxMonitor]
        guard bluetooth.contains(linktype) || Linktype.isLinkLayerSniffer(linktype) else {
            pcap_close(pcap)  // also closes the stream
            throw CaptureError(.unsupportedLinktype,
                               "\(isPcapng ? "pcapng" : "pcap") with \(Linktype.name(linktype)) (linktype \(linktype)) is not a Bluetooth capture")
        }
        self.file = stream
        self.source = source
        self.handle = pcap
        self.linktype = linktype
        self.lastEnd = Int64(ftell(stream))
        self.snapshot = Int(pcap_snapshot(pcap))
        self.classicRecordHeader = !isPcapng && prefix.count >= 4
            && PcapMagic.isPcap(UInt32(prefix[0]) << 24 | UInt32(prefix[1]) << 16 | UInt32(prefix[2]) << 8 | UInt32(prefix[3]))
        let format: CaptureFormat = isPcapng ? .pcapng(linktype: linktype) : .pcap(linktype: linktype)
        // libpcap scales every file to ns; a µs file shows 6 digits, as Wireshark does.
        info = CaptureInfo(format: format, timestampDigits: Self.sourceIsNano(prefix, isPcapng) ? 9 : 6)
        if Linktype.isLELinkLayer(linktype) {
            issues.notice("\(Linktype.name(linktype)) (linktype \(linktype)) is an air capture: stats and decode read its link layer; connections, scans and GATT are not followed from air captures yet")
        } else if Linktype.isLinkLayerSniffer(linktype) {
            issues.notice("\(Linktype.name(linktype)) (linktype \(linktype)) is an air capture: records and timestamps are counted, its link-layer payload is not decoded yet")
        }
    }

    deinit { pcap_close(handle) }

    /// libpcap's read of an archive member: the `ByteSource` (kept alive by the reader) hands out what it has.
    static let readFromSource: btlens_read_callback = { context, buffer, count in
        guard let context, let buffer else { return -1 }
        let source = Unmanaged<ByteSource>.fromOpaque(context).takeUnretainedValue()
        guard let bytes = source.takeBlock(maximum: count) else { return -1 }
        if let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
        return bytes.count
    }

    /// pcapng: the Interface Description Block type, its if_tsresol option, the end of an option list, and
    /// the if_tsresol value for nanoseconds (10^-9).
    static let interfaceDescriptionBlock: UInt32 = 1
    static let timestampResolutionOption: UInt16 = 9
    static let endOfOptions: UInt16 = 0
    static let nanosecondResolution: UInt8 = 9
    /// A pcapng block's type, length and trailing length.
    static let minimumBlockLength = 12
    /// Blocks looked at for the first interface description.
    static let blocksSearched = 8

    /// Whether the file itself carries nanoseconds: the nanosecond pcap magic, or a pcapng if_tsresol of 9
    /// in the first interface block (libpcap does not expose the file's own resolution).
    static func sourceIsNano(_ prefix: [UInt8], _ isPcapng: Bool) -> Bool {
        prefix.withUnsafeBytes { bytes in
            let reader = ByteReader(bytes)
            if isPcapng { return pcapngHasNanoResolution(reader) }
            guard let magic = reader.get(UInt32.self, at: 0, bigEndian: true) else { return false }
            return PcapMagic.isNanosecondPcap(magic)
        }
    }

    /// Looks for an IDB with `if_tsresol` of 9 in the first bytes.
    static func pcapngHasNanoResolution(_ b: ByteReader) -> Bool {
        // Block type, block length, then the section header's byte-order magic.
        guard let order = b.get(UInt32.self, at: 8) else { return false }
        let bigEndian = order != PcapMagic.pcapngByteOrder
        var offset = 0
        for _ in 0..<blocksSearched {
            guard let type = b.get(UInt32.self, at: offset, bigEndian: bigEndian),
                  let length = b.get(UInt32.self, at: offset + 4, bigEndian: bigEndian).map(Int.init),
                  length >= minimumBlockLength
            else { return false }
            if type == interfaceDescriptionBlock {  // linktype u16, reserved u16, snaplen u32, options
                var o = offset + 16
                let end = offset + length - 4
                while o + 4 <= end, let code = b.get(UInt16.self, at: o, bigEndian: bigEndian),
                      let len = b.get(UInt16.self, at: o + 2, bigEndian: bigEndian).map(Int.init) {
                    if code == endOfOptions { break }
                    if code == timestampResolutionOption, let resolution = b.get(UInt8.self, at: o + 4) {
                        return resolution == nanosecondResolution
                    }
                    o += 4 + (len + 3) & ~3
                }
                return false
            }
            offset += length
        }
        return false
    }

    public func next() -> CaptureRecord? {
        guard !stopped else { return nil }
        var headerPointer: UnsafeMutablePointer<pcap_pkthdr>?
        var dataPointer: UnsafePointer<UInt8>?
        let startOffset = lastEnd
        let status = pcap_next_ex(handle, &headerPointer, &dataPointer)
        let endOffset: Int64
        if status == 1, classicRecordHeader, let caplen = headerPointer?.pointee.caplen, Int(caplen) < snapshot {
            endOffset = startOffset + Self.classicRecordHeaderLength + Int64(caplen)
        } else {
            endOffset = Int64(ftell(file))
        }
        lastEnd = endOffset
        switch status {
        case 1:
            break
        case PCAP_ERROR_BREAK:  // -2: end of file
            stopped = true
            return nil
        default:
            // libpcap returns the same error for a file that ends inside a record and for a read error or a
            // header it refuses; only its wording tells them apart. The stream does not depend on wording: it is
            // at end of file only when the data ran out before the record did.
            if let failure = source.failure {
                // The archive member under libpcap failed (damaged, or refused as a bomb): its cause, not EIO.
                if failure.code == .refused { issues.refuse(failure.message) }
                issues.report(.readError, record: recordNumber + 1, offset: startOffset, failure.message)
                stopped = true
                return nil
            }
            let message = String(cString: pcap_geterr(handle))
            let code: CaptureIssue.Code = feof(file) != 0 ? .truncatedRecord : .readError
            issues.report(code, record: recordNumber + 1, offset: startOffset, "libpcap: \(message)")
            stopped = true
            return nil
        }
        guard let header = headerPointer?.pointee, let data = dataPointer else { return nil }
        recordNumber += 1
        let captured = Int(header.caplen)
        // A record (pcap header and data, pcapng block) starts where the last one ended. Not worked back from
        // caplen: libpcap lowers caplen to the file's snaplen and skips the bytes past it.
        let offset = startOffset
        let bytes = UnsafeRawBufferPointer(start: data, count: captured)
        let timestamp = Timestamp(seconds: Int64(header.ts.tv_sec), nanoseconds: Int64(header.ts.tv_usec))
        var record = CaptureRecord(number: recordNumber, offset: offset, timestamp: timestamp, direction: .unknown,
                                   kind: .unknown, controller: 0, sourceType: UInt32(linktype),
                                   originalLength: Int(header.len), payload: bytes)
        record.length = Int(endOffset - offset)
        switch linktype {
        case Linktype.bluetoothHCIH4:
            guard let indicator = bytes.first else { break }
            record.kind = H4PacketType.kind(indicator)
            record.direction = H4PacketType.impliedDirection(record.kind)
            record.sourceType = UInt32(indicator)
            record.payload = UnsafeRawBufferPointer(rebasing: bytes[1...])
        case Linktype.bluetoothHCIH4WithPHDR:
            // direction u32 BE: bit0 set = received (libpcap htonl(in != 0)), then H4.
            guard bytes.count >= 5 else { break }
            let direction = UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))
            let indicator = bytes[4]
            record.kind = H4PacketType.kind(indicator)
            record.direction = direction & 1 == 1 ? .received : .sent
            record.sourceType = UInt32(indicator)
            record.payload = UnsafeRawBufferPointer(rebasing: bytes[5...])
        case Linktype.bluetoothLinuxMonitor:
            // adapter_id u16 BE, opcode u16 BE, then the monitor payload.
            guard bytes.count >= 4 else { break }
            let adapter = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            let opcode = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
            (record.kind, record.direction) = MonitorOpcode.classify(opcode)
            record.controller = adapter
            record.sourceType = UInt32(opcode)
            record.payload = UnsafeRawBufferPointer(rebasing: bytes[4...])
        default:
            record.kind = .linkLayer
        }
        // The original length leaves out the pseudo-header and H4 byte the payload starts after; at least 0, as a
        // corrupt header's len may be smaller than what it says was captured.
        record.originalLength = max(0, record.originalLength - (captured - record.payload.count))
        return record
    }
}
