import BTWire
import CZlib

/// Reads the btsnooz summary Android's Bluetooth service writes into a bug report's text when no full snoop log
/// was enabled: between `--- BEGIN:BTSNOOP_LOG_SUMMARY` and `--- END:BTSNOOP_LOG_SUMMARY`, base64 of a 9-byte
/// header (version, the last packet's time) and a zlib stream of packet records (AOSP
/// system/tools/scripts/btsnooz.py reads it the same way).
///
/// Record format, little-endian: version 1 `length:u16, delta:u32, type:u8, data[length-1]`; version 2
/// `length:u16, packet_length:u16, delta:u32, type:u8, data[length-1]`, where `packet_length` is the length on
/// the wire (ACL payloads are cut). The header's time and the deltas are named milliseconds in AOSP but hold
/// microseconds since the Unix epoch (btsnooz.py adds the btsnoop epoch offset, in µs, to them); each delta is
/// the time since the packet before, so the first packet's time is the last's minus the sum of all deltas.
///
/// The summary is small by design (the last few hundred packets), so it is decompressed whole, within
/// `maximumDecompressed`.
///
/// The same version 2 records also come behind a btsnoop file header, uncompressed: a `btsnooz_hci.log` found in
/// real bug reports is "btsnoop\0", version 1, datalink 1002, then btsnooz records to the end of the file. That
/// file has no header time, so it has no absolute time base: its first record is read at time 0 (the Unix epoch)
/// and the others at the deltas after it. `looksLikeBTSnoopHeadedLog` recognises it by content; `init(log:)`
/// reads it as a stream, framed like btsnoop (`RecordFraming`), each record decoded as the summary's are.
public final class BTSnoozReader: RecordSource {
    public static let beginMarker = Array("--- BEGIN:BTSNOOP_LOG_SUMMARY".utf8)
    public static let endMarker = Array("--- END:BTSNOOP_LOG_SUMMARY".utf8)
    /// Bounds on a summary (real ones are tens of kilobytes): beyond them it is refused, not read.
    public static let maximumBase64 = 48 << 20
    public static let maximumDecompressed = 64 << 20
    static let headerLength = 9

    /// btsnooz packet types (AOSP btsnoop_mem.h): direction and HCI packet kind.
    public enum PacketType {
        public static let inEvent: UInt8 = 0x10
        public static let inACL: UInt8 = 0x11
        public static let inSCO: UInt8 = 0x12
        public static let inISO: UInt8 = 0x17
        public static let outCommand: UInt8 = 0x20
        public static let outACL: UInt8 = 0x21
        public static let outSCO: UInt8 = 0x22
        public static let outISO: UInt8 = 0x2D
    }
    /// The record header of version 2 (version 1's lacks the packet length): length, packet length, delta, type.
    public static let version2RecordHeaderLength = 9

    /// The record types btsnooz writes: what the reader classifies, and what recognising the log accepts.
    static let knownTypes: Set<UInt8> = [PacketType.inEvent, PacketType.inACL, PacketType.inSCO, PacketType.inISO,
                                         PacketType.outCommand, PacketType.outACL, PacketType.outSCO, PacketType.outISO]

    public let info: CaptureInfo
    public let issues: IssueLog
    public let version: Int
    /// The summary, decompressed (nil for a log read from `source`).
    private let storage: UnsafeMutableRawBufferPointer?
    /// The log behind a btsnoop header, read as it comes (nil for a summary).
    private let source: ByteSource?
    @exclusivity(unchecked) private var cursor = 0
    @exclusivity(unchecked) private var recordNumber = 0
    @exclusivity(unchecked) private var time: Timestamp
    private let recordHeaderLength: Int
    @exclusivity(unchecked) private var stopped = false

    /// Decodes `summary` (the base64-decoded section).
    public init(summary: [UInt8], issues: IssueLog = IssueLog()) throws {
        self.issues = issues
        guard summary.count >= Self.headerLength else {
            throw CaptureError(.notACapture, "btsnooz summary is cut short (\(summary.count) bytes)")
        }
        version = Int(summary[0])
        guard version == 1 || version == 2 else {
            throw CaptureError(.notACapture, "btsnooz version \(version) is not known (1 and 2 are)")
        }
        var last: UInt64 = 0
        for i in (1...8).reversed() { last = last << 8 | UInt64(summary[i]) }
        let data = try Self.inflate(summary[Self.headerLength...])
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 8)
        data.withUnsafeBytes { storage.copyMemory(from: $0) }
        self.storage = storage
        let recordHeaderLength = version == 1 ? 7 : Self.version2RecordHeaderLength
        self.recordHeaderLength = recordHeaderLength
        // First pass: the sum of the deltas, for the first packet's time.
        var sum: Int64 = 0
        var at = 0
        while at + recordHeaderLength <= data.count {
            let length = Int(data[at]) | Int(data[at + 1]) << 8
            let deltaAt = at + (recordHeaderLength == 7 ? 2 : 4)
            let delta = (0..<4).reduce(UInt32(0)) { $0 | UInt32(data[deltaAt + $1]) << (8 * $1) }
            sum += Int64(delta)
            guard length >= 1 else { break }
            at += recordHeaderLength + length - 1
        }
        time = Timestamp(unixMicroseconds: Int64(bitPattern: min(last, UInt64(Int64.max))) &- sum)
        self.count = data.count
        source = nil
        info = CaptureInfo(format: .btsnooz(version: version), timestampDigits: 6)
    }

    /// Reads the version 2 records that follow a btsnoop file header in `source` (see `looksLikeBTSnoopHeadedLog`),
    /// as they come. Says on `issues` that the capture has no absolute time base and, unless a notice already
    /// gave it (the file's name is Android's), what a btsnooz capture holds.
    public init(log source: ByteSource, issues: IssueLog = IssueLog()) throws {
        guard try source.ensure(BTSnoopReader.fileHeaderLength),
              source.peek(BTSnoopReader.magic.count).elementsEqual(BTSnoopReader.magic)
        else { throw CaptureError(.notACapture, "not a btsnoop file") }
        source.consume(BTSnoopReader.fileHeaderLength)
        self.source = source
        self.issues = issues
        version = 2
        recordHeaderLength = Self.version2RecordHeaderLength
        storage = nil
        count = 0
        time = Timestamp(nanoseconds: 0)
        info = CaptureInfo(format: .btsnoozLog, timestampDigits: 6)
        if !issues.notices.contains(where: { $0.contains(CaptureInputs.btsnoozCaveat) }) {
            issues.notice("no full snoop log here: read Android's btsnooz log, " + CaptureInputs.btsnoozCaveat)
        }
        issues.notice(Self.logNotice)
    }

    /// What reading a btsnoop-headed btsnooz log says first.
    public static let logNotice = "btsnooz records behind a btsnoop header (Android's btsnooz log): no absolute time "
        + "base, so times count from the first record, shown at 1970-01-01 00:00:00 UTC"

    private let count: Int

    deinit { storage?.deallocate() }

    public func next() -> CaptureRecord? {
        if let source { return nextInLog(source) }
        guard !stopped, cursor < count, let storage else { return nil }
        let offset = Int64(cursor)
        guard cursor + recordHeaderLength <= count else {
            issues.report(.truncatedRecord, record: recordNumber + 1, offset: offset,
                          "btsnooz summary ends inside a record header (\(count - cursor) of \(recordHeaderLength) bytes)")
            stopped = true
            return nil
        }
        let base = storage.baseAddress! + cursor
        let length = Int(UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)))
        recordNumber += 1
        guard length >= 1 else {
            issues.report(.absurdLength, record: recordNumber, offset: offset, "btsnooz record length 0; rest of summary skipped")
            stopped = true
            return nil
        }
        guard cursor + recordHeaderLength + length - 1 <= count else {
            issues.report(.truncatedRecord, record: recordNumber, offset: offset,
                          "btsnooz summary ends inside the record (\(count - cursor - recordHeaderLength) of \(length - 1) bytes)")
            stopped = true
            return nil
        }
        let payload = UnsafeRawBufferPointer(start: base + recordHeaderLength, count: length - 1)
        cursor += recordHeaderLength + length - 1
        return record(header: UnsafeRawPointer(base), payload: payload, offset: offset, countingDelta: true)
    }

    /// The next record of a btsnoop-headed log: framed as btsnoop's are (a cut or impossible record is reported
    /// with its number and offset, and ends the reading), decoded as the summary's.
    private func nextInLog(_ source: ByteSource) -> CaptureRecord? {
        let headerLength = recordHeaderLength
        guard let frame = RecordFraming.next(source, issues: issues, recordNumber: &recordNumber, stopped: &stopped,
                                             headerLength: headerLength, totalLength: { h in
            let length = Int(UInt16(littleEndian: h.loadUnaligned(as: UInt16.self)))
            guard length >= 1 else { return .failure(.init(message: "btsnooz record length 0; rest of file skipped")) }
            return .success(headerLength + length - 1)
        }) else { return nil }
        // The first record's delta reaches back to a packet the ring no longer holds: the log starts at 0.
        return record(header: frame.header.baseAddress!, payload: frame.body, offset: frame.offset,
                      countingDelta: recordNumber > 1)
    }

    /// One record from its header (whose length the caller has checked) and payload: the decoding the summary
    /// and the log share.
    @inline(__always)
    private func record(header base: UnsafeRawPointer, payload: UnsafeRawBufferPointer, offset: Int64,
                        countingDelta: Bool) -> CaptureRecord {
        let length = Int(UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)))
        let packetLength = version == 2 ? Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) : length
        let delta = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: version == 1 ? 2 : 4, as: UInt32.self))
        let type = base.load(fromByteOffset: recordHeaderLength - 1, as: UInt8.self)
        if countingDelta { time = time.adding(nanoseconds: Int64(delta) * 1000) }
        let (kind, direction) = Self.classify(type)
        var original = max(packetLength - 1, payload.count)
        // Version 1 does not say how long a cut ACL packet was; its own header does.
        if kind == .acl, payload.count >= 4 {
            original = max(original, 4 + Int(payload[2]) | Int(payload[3]) << 8)
        }
        var record = CaptureRecord(number: recordNumber, offset: offset, timestamp: time, direction: direction, kind: kind,
                                   controller: 0, sourceType: UInt32(type), originalLength: original, payload: payload)
        record.length = recordHeaderLength + length - 1
        return record
    }

    // MARK: - Recognising the btsnoop-headed log

    /// Bytes of a file looked at to recognise a btsnoop-headed log (its records must parse to the end of them).
    public static let logSniffLength = 64 << 10
    /// Records that must parse before damage for a file to be taken as a btsnoop-headed log all the same.
    static let logRecordsBeforeDamage = 8

    /// Whether `head`, a file's first bytes, is a btsnoop header followed by btsnooz records rather than btsnoop
    /// records: the first record is impossible as btsnoop (a length beyond any record, the included length more
    /// than the original, or none at all in H4), and from there the bytes parse as btsnooz version 2 records (a
    /// known type, a length of at least 1) to the end of `head`, the last one perhaps cut by it, or for
    /// `logRecordsBeforeDamage` records before a damaged one. An ordinary btsnoop file never passes the first
    /// test; a damaged one does not parse as btsnooz.
    public static func looksLikeBTSnoopHeadedLog(_ head: UnsafeRawBufferPointer) -> Bool {
        let start = BTSnoopReader.fileHeaderLength
        guard head.count >= start + version2RecordHeaderLength, head.prefix(BTSnoopReader.magic.count).elementsEqual(BTSnoopReader.magic)
        else { return false }
        if head.count >= start + BTSnoopReader.recordHeaderLength {
            let reader = ByteReader(head)
            let original = Int(reader.get(UInt32.self, at: start, bigEndian: true) ?? 0)
            let included = Int(reader.get(UInt32.self, at: start + 4, bigEndian: true) ?? 0)
            let datalink = reader.get(UInt32.self, at: 12, bigEndian: true) ?? 0
            let limit = BTSnoopReader.maximumRecordLength
            // An H4 record holds at least its type byte.
            let empty = included == 0 && datalink == BTSnoopDatalink.h4
            guard original > limit || included > limit || included > original || empty else { return false }
        }
        var at = start
        var records = 0
        while at < head.count {
            guard at + version2RecordHeaderLength <= head.count else { return records > 0 }  // a header cut by the window or the end
            let length = Int(head[at]) | Int(head[at + 1]) << 8
            guard length >= 1, knownTypes.contains(head[at + version2RecordHeaderLength - 1]) else {
                return records >= logRecordsBeforeDamage
            }
            at += version2RecordHeaderLength + length - 1
            guard at <= head.count else { return records > 0 }  // a record cut by the window or the end
            records += 1
        }
        return records > 0
    }

    static func classify(_ type: UInt8) -> (RecordKind, Direction) {
        switch type {
        case PacketType.inEvent: (.event, .received)
        case PacketType.inACL: (.acl, .received)
        case PacketType.inSCO: (.sco, .received)
        case PacketType.inISO: (.iso, .received)
        case PacketType.outCommand: (.command, .sent)
        case PacketType.outACL: (.acl, .sent)
        case PacketType.outSCO: (.sco, .sent)
        case PacketType.outISO: (.iso, .sent)
        default: (.unknown, .unknown)
        }
    }

    /// zlib-inflates `compressed`, refusing more than `maximumDecompressed` bytes.
    static func inflate(_ compressed: ArraySlice<UInt8>) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CaptureError(.cannotOpen, "cannot start zlib")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = Array(compressed)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    output.append(contentsOf: out[0..<(out.count - Int(stream.avail_out))])
                }
            } while status == Z_OK && output.count <= maximumDecompressed && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        if output.count > maximumDecompressed {
            throw CaptureError(.refused, "btsnooz summary expands beyond \(maximumDecompressed >> 20) MiB: refused as a decompression bomb")
        }
        if status != Z_STREAM_END {
            if output.isEmpty {
                let reason = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                throw CaptureError(.notACapture, "btsnooz summary does not decompress: \(reason)")
            }
            // A cut summary still holds its first packets; the reader reports where they end.
        }
        return output
    }

    /// Finds the summary in a bug report's text and base64-decodes it; nil when the text holds none.
    /// Reads line by line from `source`; only the section itself is kept.
    public static func extractSummary(from source: ByteSource) throws -> [UInt8]? {
        var inside = false
        var base64: [UInt8] = []
        var lineBase64: [UInt8] = []
        var line: [UInt8] = []
        // Markers stand at the start of their line; the rest of a long line is not looked at for them.
        let markerWindow = 128
        /// True when the line just ended closes the section.
        func endOfLine() -> Bool {
            defer { line.removeAll(keepingCapacity: true); lineBase64.removeAll(keepingCapacity: true) }
            if !inside {
                if contains(line, beginMarker) { inside = true }
                return false
            }
            if contains(line, endMarker) { return true }
            base64 += lineBase64
            return false
        }
        while try source.ensure(1) {
            let bytes = source.peek(source.available)
            for (i, b) in bytes.enumerated() {
                if b == 0x0A {
                    if endOfLine() {
                        source.consume(i + 1)
                        return try decodeBase64(base64)
                    }
                    continue
                }
                if line.count < markerWindow { line.append(b) }
                if inside, Base64.value(b) != nil || b == UInt8(ascii: "=") {
                    lineBase64.append(b)
                    if base64.count + lineBase64.count > maximumBase64 {
                        throw CaptureError(.refused, "btsnooz section longer than \(maximumBase64 >> 20) MiB: refused")
                    }
                }
            }
            source.consume(bytes.count)
        }
        if endOfLine() || inside {
            // A section cut by the end of the text: what arrived is decoded, the reader reports where it ends.
            return try decodeBase64(base64)
        }
        return nil
    }

    static func contains(_ line: [UInt8], _ marker: [UInt8]) -> Bool {
        guard line.count >= marker.count else { return false }
        for start in 0...(line.count - marker.count) where line[start] == marker[0] {
            if line[start..<start + marker.count].elementsEqual(marker) { return true }
        }
        return false
    }

    /// The text inside the section contains only base64 and `=`; the base64 of a marker line's own text
    /// ("BEGIN", "BTSNOOP") is not collected since collecting starts on the line after it.
    static func decodeBase64(_ text: [UInt8]) throws -> [UInt8] {
        guard let bytes = Base64.decode(text) else {
            throw CaptureError(.notACapture, "btsnooz section is not base64")
        }
        return bytes
    }
}

/// RFC 4648 base64 (standard alphabet), for the btsnooz section.
enum Base64 {
    @inline(__always)
    static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// Decodes, ignoring `=` padding; nil when a character is not base64.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in text where c != UInt8(ascii: "=") {
            guard let v = value(c) else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
