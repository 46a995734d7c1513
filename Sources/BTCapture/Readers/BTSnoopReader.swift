import BTWire

/// Reads btsnoop files (BlueZ src/shared/btsnoop.c, Wireshark wiretap/btsnoop.c): a 16-byte big-endian file
/// header, then records of a 24-byte big-endian header and `incl_len` bytes. Datalinks 1001 (H1),
/// 1002 (H4, Android) and 2001 (Linux monitor) are decoded; others are counted as opaque records.
public final class BTSnoopReader: RecordSource {
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    public static let fileHeaderLength = 16
    public static let recordHeaderLength = 24
    /// Larger records are corrupt: an HCI packet is at most 4 + 65535 bytes (Wireshark's cap is 262144).
    public static let maximumRecordLength = 262_144

    public let info: CaptureInfo
    public let issues: IssueLog
    public let datalink: UInt32
    @usableFromInline let source: ByteSource
    /// Where reading stands, behind a pointer: updated for every record, it is no class property whose every
    /// access is checked for exclusivity.
    @usableFromInline let position: UnsafeMutablePointer<RecordFraming.Position>
    @usableFromInline var recordNumber: Int { position.pointee.recordNumber }

    deinit { position.deallocate() }

    /// Reads the file header from `source`; throws when it is not btsnoop.
    public init(source: ByteSource, issues: IssueLog = IssueLog()) throws {
        self.source = source
        self.issues = issues
        guard try source.ensure(Self.fileHeaderLength) else {
            throw CaptureError(.notACapture, "btsnoop file header is cut short (\(source.available) of \(Self.fileHeaderLength) bytes)")
        }
        let header = source.peek(Self.fileHeaderLength)
        guard header.prefix(Self.magic.count).elementsEqual(Self.magic) else {
            throw CaptureError(.notACapture, "not a btsnoop file")
        }
        let reader = ByteReader(header)
        let version = reader.get(UInt32.self, at: 8, bigEndian: true) ?? 0
        datalink = reader.get(UInt32.self, at: 12, bigEndian: true) ?? 0
        source.consume(Self.fileHeaderLength)
        info = CaptureInfo(format: .btsnoop(datalink: datalink), timestampDigits: 6)
        // Allocated once nothing can throw: a throwing initialiser does not run `deinit`.
        position = .allocate(capacity: 1)
        position.initialize(to: RecordFraming.Position())
        if version != 1 { issues.notice("btsnoop version \(version) (expected 1); reading as version 1") }
        switch datalink {
        case BTSnoopDatalink.h1, BTSnoopDatalink.h4, BTSnoopDatalink.monitor: break
        default: issues.notice("btsnoop datalink \(datalink) is not decoded; its records are counted only")
        }
    }

    /// Inlined into each reading loop (hence inlinable, with what it reads): called, the record came back
    /// through memory, and the caller's copy of it waited for the callee's stores, about a sixth of `stats`' time.
    @inlinable @inline(__always) public func next() -> CaptureRecord? {
        guard let frame = RecordFraming.next(source, issues: issues, recordNumber: &position.pointee.recordNumber,
                                             stopped: &position.pointee.stopped,
                                             headerLength: Self.recordHeaderLength, totalLength: { h in
            let included = Int(UInt32(bigEndian: h.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
            guard included <= Self.maximumRecordLength else {
                return .failure(.init(message: "record length \(included) exceeds \(Self.maximumRecordLength); rest of file skipped"))
            }
            return .success(Self.recordHeaderLength + included)
        }) else { return nil }
        let h = frame.header
        let originalLength = Int(UInt32(bigEndian: h.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
        let flags = UInt32(bigEndian: h.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        let rawTime = Int64(bigEndian: h.loadUnaligned(fromByteOffset: 16, as: Int64.self))
        var record = makeRecord(data: frame.body, flags: flags, originalLength: originalLength,
                                timestamp: BTSnoopTime.timestamp(fromBTSnoop: rawTime), offset: frame.offset)
        record.length = frame.length
        return record
    }

    @inlinable @inline(__always)
    func makeRecord(data: UnsafeRawBufferPointer, flags: UInt32, originalLength: Int, timestamp: Timestamp,
                    offset: Int64) -> CaptureRecord {
        var record = CaptureRecord(number: recordNumber, offset: offset, timestamp: timestamp, direction: .unknown,
                                   kind: .unknown, controller: 0, sourceType: flags, originalLength: originalLength,
                                   payload: data)
        switch datalink {
        case BTSnoopDatalink.h4:
            guard let indicator = data.first else { break }
            record.kind = H4PacketType.kind(indicator)
            record.sourceType = UInt32(indicator)
            record.direction = flags & 1 == 0 ? .sent : .received
            record.payload = UnsafeRawBufferPointer(rebasing: data[1...])
            record.originalLength = max(0, originalLength - 1)
        case BTSnoopDatalink.h1:
            // bit0 direction, bit1 command/event: 0 ACL TX, 1 ACL RX, 2 command, 3 event.
            record.direction = flags & 1 == 0 ? .sent : .received
            record.kind = flags & 2 == 0 ? .acl : (flags & 1 == 0 ? .command : .event)
        case BTSnoopDatalink.monitor:
            let opcode = UInt16(truncatingIfNeeded: flags)
            (record.kind, record.direction) = MonitorOpcode.classify(opcode)
            record.controller = UInt16(truncatingIfNeeded: flags >> 16)
            record.sourceType = UInt32(opcode)
        default:
            break
        }
        return record
    }
}
