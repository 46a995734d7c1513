import BTWire

/// Reads Apple PacketLogger files (Wireshark wiretap/packetlogger.c, BlueZ btsnoop.c `pklg_read_hci`):
/// no file header; records of `len u32, ts_secs u32, ts_usecs u32, type u8, payload[len-9]`, all big-endian
/// in old files and all little-endian in newer ones.
public final class PacketLoggerReader: RecordSource {
    public static let recordHeaderLength = 13
    /// `len` counts what follows it: at least the 9 bytes of timestamp and type.
    public static let minimumLength = 9
    public static let maximumLength = 65_536 + 64

    /// PacketLogger record types.
    public enum RecordType {
        public static let command: UInt8 = 0x00
        public static let event: UInt8 = 0x01
        public static let aclSent: UInt8 = 0x02
        public static let aclReceived: UInt8 = 0x03
        public static let scoSent: UInt8 = 0x08
        public static let scoReceived: UInt8 = 0x09
        public static let lmpSent: UInt8 = 0x0A
        public static let lmpReceived: UInt8 = 0x0B
        public static let isoSent: UInt8 = 0x12
        public static let isoReceived: UInt8 = 0x13
        public static let syslog: UInt8 = 0xF7
        public static let kernel: UInt8 = 0xF8
        public static let kernelDebug: UInt8 = 0xF9
        public static let error: UInt8 = 0xFA
        public static let power: UInt8 = 0xFB
        public static let note: UInt8 = 0xFC
        public static let config: UInt8 = 0xFD
        public static let newController: UInt8 = 0xFE

        public static let known: Set<UInt8> = [command, event, aclSent, aclReceived, scoSent, scoReceived,
                                               lmpSent, lmpReceived, isoSent, isoReceived, syslog, kernel,
                                               kernelDebug, error, power, note, config, newController]
    }

    public let info: CaptureInfo
    public let issues: IssueLog
    public let bigEndian: Bool
    @usableFromInline let source: ByteSource
    @exclusivity(unchecked) @usableFromInline var recordNumber = 0
    @exclusivity(unchecked) @usableFromInline var stopped = false

    public init(source: ByteSource, bigEndian: Bool, issues: IssueLog = IssueLog()) {
        self.source = source
        self.bigEndian = bigEndian
        self.issues = issues
        self.info = CaptureInfo(format: .packetLogger(bigEndian: bigEndian), timestampDigits: 6)
    }

    /// Decides whether `bytes` (the start of a file) look like PacketLogger, and in which byte order:
    /// nil when not. Checks up to five records, like Wireshark, so one plausible length is not enough.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        for bigEndian in [false, true] where plausible(bytes, bigEndian: bigEndian) {
            return bigEndian
        }
        return nil
    }

    static func plausible(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) -> Bool {
        let reader = ByteReader(bytes)
        var offset = 0
        var checked = 0
        while checked < 5 {
            guard let length = reader.get(UInt32.self, at: offset, bigEndian: bigEndian),
                  let usecs = reader.get(UInt32.self, at: offset + 8, bigEndian: bigEndian),
                  let type = reader.get(UInt8.self, at: offset + 12)
            else { return checked >= 1 }  // the sniffed bytes ran out after valid records
            guard length >= minimumLength, length < maximumLength, usecs < 1_000_000, RecordType.known.contains(type)
            else { return false }
            offset += 4 + Int(length)
            checked += 1
        }
        return true
    }

    /// Inlined into each reading loop, as `BTSnoopReader.next` is.
    @inlinable @inline(__always) public func next() -> CaptureRecord? {
        let bigEndian = self.bigEndian
        guard let frame = RecordFraming.next(source, issues: issues, recordNumber: &recordNumber, stopped: &stopped,
                                             headerLength: Self.recordHeaderLength, totalLength: { h in
            let length = Int(ByteReader(h).get(UInt32.self, at: 0, bigEndian: bigEndian) ?? 0)
            guard length >= Self.minimumLength, length < Self.maximumLength else {
                return .failure(.init(message: "record length \(length) is outside 9…\(Self.maximumLength); rest of file skipped"))
            }
            return .success(4 + length)  // `len` counts what follows it
        }) else { return nil }
        let h = ByteReader(frame.header)
        let secs = Int64(h.get(UInt32.self, at: 4, bigEndian: bigEndian) ?? 0)
        let usecs = Int64(h.get(UInt32.self, at: 8, bigEndian: bigEndian) ?? 0)
        let type = h.get(UInt8.self, at: 12) ?? 0
        let (kind, direction) = Self.classify(type)
        var record = CaptureRecord(number: recordNumber, offset: frame.offset,
                                   timestamp: Timestamp(seconds: secs, nanoseconds: usecs * 1000),
                                   direction: direction, kind: kind, controller: 0, sourceType: UInt32(type),
                                   originalLength: frame.body.count, payload: frame.body)
        record.length = frame.length
        return record
    }

    @inlinable @inline(__always)
    static func classify(_ type: UInt8) -> (RecordKind, Direction) {
        switch type {
        case RecordType.command: (.command, .sent)
        case RecordType.event: (.event, .received)
        case RecordType.aclSent: (.acl, .sent)
        case RecordType.aclReceived: (.acl, .received)
        case RecordType.scoSent: (.sco, .sent)
        case RecordType.scoReceived: (.sco, .received)
        case RecordType.isoSent: (.iso, .sent)
        case RecordType.isoReceived: (.iso, .received)
        case RecordType.lmpSent: (.vendorDiagnostic, .sent)
        case RecordType.lmpReceived: (.vendorDiagnostic, .received)
        case RecordType.newController: (.controllerAdded, .unknown)
        case RecordType.syslog...RecordType.config: (.note, .unknown)  // the text types, notes included
        default: (.unknown, .unknown)
        }
    }
}
