import BTWire
import CPcap
import CStreamSupport
#if canImport(Glibc)
import Glibc
#endif

/// Reads pcap and pcapng. Bluetooth linktypes 187, 201 and 254 are decoded; LE air-sniffer records (251, 256,
/// 272, PPI) are handed on whole for BTDecode's link-layer decoder; other air captures are counted with a notice.
///
/// pcapng is framed here too (`PcapngFraming`), for what libpcap does not give: the interface of each packet, each
/// with its own linktype and time base; a pcapng this framing does not recognise at its start goes to libpcap.
/// pcapng that libpcap reads, and pcap files of a variant (the modified formats, FCS bits or reserved bits in the linktype, a
/// version other than 2.4), go through libpcap (both byte orders, µs/ns resolution, pcapng blocks). A classic pcap
/// file of a linktype btlens reads is framed here, as btsnoop is, straight from the `ByteSource`'s buffer:
/// libpcap's two `fread`s per record through a stdio stream, and `ftell` for each record's offset, cost more
/// than decoding an air sniffer's record. It does what libpcap's sf-pcap.c does with such a file: records are
/// cut to the snapshot length (the header's snaplen, or 262 144 when that is 0 or larger) and the rest skipped, and
/// a caplen above 262 144 stops reading (reported as an impossible length, as in btsnoop, where libpcap's error
/// was a read error); a file that ends inside a record is a truncated record.
public final class PcapReader: RecordSource {
    public let info: CaptureInfo
    public let issues: IssueLog
    public let linktype: Int
    /// libpcap's handle and stream; nil when this reader frames classic pcap itself.
    let handle: OpaquePointer?
    let file: UnsafeMutablePointer<FILE>?
    @exclusivity(unchecked) var recordNumber = 0
    @exclusivity(unchecked) var stopped = false
    /// Where the previous record ended (start of the next block) in the stream.
    @exclusivity(unchecked) var lastEnd: Int64
    /// Kept alive: libpcap reads its descriptor through the stream.
    let source: ByteSource
    /// Classic pcap read by libpcap with the standard record header (16 bytes): a record shorter than libpcap's
    /// snapshot length was not cut by it, so it ends 16 + caplen bytes after it starts and `ftell` (a seek
    /// through the stream's cookie on every record) is not needed to know where.
    let classicRecordHeader: Bool
    let snapshot: Int
    /// Classic pcap framed here: the file's byte order and resolution.
    let native: NativeFraming?
    /// pcapng framed here (`PcapngFraming`): its sections' byte order and interfaces.
    @exclusivity(unchecked) var pcapng: PcapngFraming?
    static let classicRecordHeaderLength: Int64 = 16
    static let classicFileHeaderLength = 24
    /// libpcap's MAXIMUM_SNAPLEN, its max_snaplen_for_dlt for every linktype read here.
    static let maximumSnapshot = 262_144
    static let supportedMajorVersion = 2
    static let supportedMinorVersion = 4

    struct NativeFraming {
        var bigEndian: Bool
        var nanoseconds: Bool
    }

    /// The linktypes btlens reads from pcap files.
    static func accepts(_ linktype: Int) -> Bool {
        linktype == Linktype.bluetoothHCIH4 || linktype == Linktype.bluetoothHCIH4WithPHDR
            || linktype == Linktype.bluetoothLinuxMonitor || Linktype.isLinkLayerSniffer(linktype)
    }

    /// - Parameters:
    ///   - source: the stream positioned at its start; bytes it already buffered (sniffing) are replayed.
    public init(source: ByteSource, isPcapng: Bool, issues: IssueLog = IssueLog()) throws {
        self.issues = issues
        if !isPcapng, let (framing, linktype, snaplen) = try Self.classicHeader(source) {
            source.consume(Self.classicFileHeaderLength)
            self.source = source
            self.native = framing
            self.pcapng = nil
            self.handle = nil
            self.file = nil
            self.linktype = linktype
            self.snapshot = snaplen == 0 || snaplen > Self.maximumSnapshot ? Self.maximumSnapshot : snaplen
            self.classicRecordHeader = true
            self.lastEnd = source.offset
            info = CaptureInfo(format: .pcap(linktype: linktype), timestampDigits: framing.nanoseconds ? 9 : 6)
            Self.notice(linktype: linktype, issues: issues)
            return
        }
        if isPcapng, let first = try PcapngFraming.firstInterface(source) {
            guard first.accepted else {
                throw CaptureError(.unsupportedLinktype,
                                   "pcapng with \(Linktype.name(first.linktype)) (linktype \(first.linktype)) is not a Bluetooth capture")
            }
            self.source = source
            self.native = nil
            self.pcapng = PcapngFraming()
            self.handle = nil
            self.file = nil
            self.linktype = first.linktype
            self.snapshot = first.snapshot
            self.classicRecordHeader = false
            self.lastEnd = source.offset
            info = CaptureInfo(format: .pcapng(linktype: first.linktype),
                               timestampDigits: first.unitsPerSecond >= PcapngFraming.nanosecondsPerSecond ? 9 : 6)
            Self.notice(linktype: first.linktype, issues: issues)
            return
        }
        self.native = nil
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
        guard Self.accepts(linktype) else {
            pcap_close(pcap)  // also closes the stream
            throw CaptureError(.unsupportedLinktype,
                               "\(isPcapng ? "pcapng" : "pcap") with \(Linktype.name(linktype)) (linktype \(linktype)) is not a Bluetooth capture")
        }
        self.file = stream
        self.source = source
        self.pcapng = nil
        self.handle = pcap
        self.linktype = linktype
        self.lastEnd = Int64(ftell(stream))
        self.snapshot = Int(pcap_snapshot(pcap))
        self.classicRecordHeader = !isPcapng && prefix.count >= 4
            && PcapMagic.isPcap(UInt32(prefix[0]) << 24 | UInt32(prefix[1]) << 16 | UInt32(prefix[2]) << 8 | UInt32(prefix[3]))
        let format: CaptureFormat = isPcapng ? .pcapng(linktype: linktype) : .pcap(linktype: linktype)
        // libpcap scales every file to ns; a µs file shows 6 digits, as Wireshark does.
        info = CaptureInfo(format: format, timestampDigits: Self.sourceIsNano(prefix, isPcapng) ? 9 : 6)
        Self.notice(linktype: linktype, issues: issues)
    }

    static func notice(linktype: Int, issues: IssueLog) {
        if Linktype.isLELinkLayer(linktype) {
            issues.notice("\(Linktype.name(linktype)) (linktype \(linktype)) is an air capture: links are followed on the air, each seen from its central; the host's scanning is not on the air")
        } else if Linktype.isLinkLayerSniffer(linktype) {
            issues.notice("\(Linktype.name(linktype)) (linktype \(linktype)) is an air capture: records and timestamps are counted, its link-layer payload is not decoded yet")
        }
    }

    /// A classic pcap file header this reader frames itself: the standard µs or ns magic in either byte order,
    /// major version 2, a linktype btlens reads with no FCS or reserved bits. Nil for anything else (libpcap
    /// reads it, and refuses what it refuses).
    static func classicHeader(_ source: ByteSource) throws -> (NativeFraming, linktype: Int, snaplen: Int)? {
        guard try source.ensure(classicFileHeaderLength) else { return nil }
        let h = source.peek(classicFileHeaderLength)
        let magic = UInt32(bigEndian: h.loadUnaligned(as: UInt32.self))
        let bigEndian: Bool
        switch magic {
        case PcapMagic.microseconds, PcapMagic.nanoseconds: bigEndian = true
        case PcapMagic.microseconds.byteSwapped, PcapMagic.nanoseconds.byteSwapped: bigEndian = false
        default: return nil
        }
        let nanoseconds = magic == PcapMagic.nanoseconds || magic == PcapMagic.nanoseconds.byteSwapped
        func u16(_ o: Int) -> Int {
            let v = h.loadUnaligned(fromByteOffset: o, as: UInt16.self)
            return Int(bigEndian ? UInt16(bigEndian: v) : UInt16(littleEndian: v))
        }
        func u32(_ o: Int) -> Int {
            let v = h.loadUnaligned(fromByteOffset: o, as: UInt32.self)
            return Int(bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v))
        }
        let linktype = u32(20)
        // Versions 2.0–2.3 may have caplen and len swapped, which libpcap sorts out.
        guard u16(4) == supportedMajorVersion, u16(6) == supportedMinorVersion, linktype & 0xFFFF_0000 == 0,
              accepts(linktype) else { return nil }
        return (NativeFraming(bigEndian: bigEndian, nanoseconds: nanoseconds), linktype, u32(16))
    }

    deinit { if let handle { pcap_close(handle) } }

    /// libpcap's read of an archive member: the `ByteSource` (kept alive by the reader) hands out what it has.
    static let readFromSource: btlens_read_callback = { context, buffer, count in
        guard let context, let buffer else { return -1 }
        let source = Unmanaged<ByteSource>.fromOpaque(context).takeUnretainedValue()
        guard let bytes = source.takeBlock(maximum: count) else { return -1 }
        if let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
        return bytes.count
    }

    /// Whether the file itself carries nanoseconds: the nanosecond pcap magic, or a pcapng whose first interface
    /// counts in ns or finer (libpcap does not expose the file's own resolution).
    static func sourceIsNano(_ prefix: [UInt8], _ isPcapng: Bool) -> Bool {
        prefix.withUnsafeBytes { bytes in
            if isPcapng {
                return (PcapngFraming.firstInterface(in: bytes)?.unitsPerSecond ?? 0) >= PcapngFraming.nanosecondsPerSecond
            }
            guard let magic = ByteReader(bytes).get(UInt32.self, at: 0, bigEndian: true) else { return false }
            return PcapMagic.isNanosecondPcap(magic)
        }
    }

    public func next() -> CaptureRecord? {
        guard !stopped else { return nil }
        if let native { return nextFramed(native) }
        if pcapng != nil { return nextBlock() }
        guard let handle, let file else { return nil }
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
        classify(&record, bytes, linktype: linktype)
        return record
    }

    /// The next record of a classic pcap file framed here (see the type's comment), through the framing btsnoop
    /// and PacketLogger share: a caplen above 262 144 is an impossible length, a file that ends inside a record a
    /// truncated record.
    @inline(__always)
    func nextFramed(_ framing: NativeFraming) -> CaptureRecord? {
        @inline(__always) func u32(_ h: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
            let v = h.loadUnaligned(fromByteOffset: o, as: UInt32.self)
            return framing.bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
        }
        let headerLength = Int(Self.classicRecordHeaderLength)
        guard let frame = RecordFraming.next(source, issues: issues, recordNumber: &recordNumber, stopped: &stopped,
                                             headerLength: headerLength, totalLength: { h in
            let captured = Int(u32(h, 8))
            guard captured <= Self.maximumSnapshot else {
                return .failure(.init(message: "invalid packet capture length \(captured), bigger than maximum of \(Self.maximumSnapshot); rest of file skipped"))
            }
            return .success(headerLength + captured)
        }) else { return nil }
        let h = frame.header
        // Signed, as libpcap reads them (its pcap_timeval holds two bpf_int32).
        let seconds = Int64(Int32(bitPattern: u32(h, 0))), fraction = Int64(Int32(bitPattern: u32(h, 4)))
        let bytes = UnsafeRawBufferPointer(rebasing: frame.body.prefix(snapshot))
        lastEnd = frame.offset + Int64(frame.length)
        let timestamp = Timestamp(seconds: seconds, nanoseconds: framing.nanoseconds ? fraction : fraction * 1000)
        var record = CaptureRecord(number: recordNumber, offset: frame.offset, timestamp: timestamp, direction: .unknown,
                                   kind: .unknown, controller: 0, sourceType: UInt32(linktype),
                                   originalLength: Int(u32(h, 12)), payload: bytes)
        record.length = frame.length
        classify(&record, bytes, linktype: linktype)
        return record
    }

    /// Kind, direction, controller and payload from the linktype's pseudo-header.
    @inline(__always)
    func classify(_ record: inout CaptureRecord, _ bytes: UnsafeRawBufferPointer, linktype: Int) {
        let captured = bytes.count
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
    }
}
