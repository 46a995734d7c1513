import BTWire

/// Opens a capture and decides its format from the content, never from the file name (real captures come as
/// .log, .cfa, .cap, and pcapng named .pcap and the reverse).
public enum OpenedCapture {
    case btsnoop(BTSnoopReader)
    case packetLogger(PacketLoggerReader)
    case pcap(PcapReader)
    /// Several captures read as one (rotated logs, a sysdiagnose's PacketLogger files).
    case joined(JoinedCapture)
    /// The btsnooz summary in an Android bug report, or btsnooz records behind a btsnoop header.
    case btsnooz(BTSnoozReader)

    /// Opens `path` ("-" = standard input).
    public static func open(path: String, issues: IssueLog = IssueLog()) throws -> OpenedCapture {
        try open(source: ByteSource(path: path), issues: issues)
    }

    public static func open(source: ByteSource, issues: IssueLog = IssueLog()) throws -> OpenedCapture {
        // Enough bytes to check several PacketLogger records; a short file simply offers what it has.
        _ = try source.ensure(4096)
        let head = source.peek(4096)
        guard head.count >= 4 else {
            if head.isEmpty { throw CaptureError(.empty, "empty file") }
            throw CaptureError(.notACapture, "too short to be a capture (\(head.count) bytes)")
        }
        // Four bytes are enough to choose; a cut-short btsnoop header is for the btsnoop reader to report.
        if head.prefix(4).elementsEqual(BTSnoopReader.magic.prefix(4)) {
            if try isBTSnoopHeadedBTSnooz(source) {
                return .btsnooz(try BTSnoozReader(log: source, issues: issues))
            }
            return .btsnoop(try BTSnoopReader(source: source, issues: issues))
        }
        let word = ByteReader(head).get(UInt32.self, at: 0, bigEndian: true) ?? 0
        if PcapMagic.isPcap(word) {
            return .pcap(try PcapReader(source: source, isPcapng: false, issues: issues))
        }
        if word == PcapMagic.pcapngSection {
            return .pcap(try PcapReader(source: source, isPcapng: true, issues: issues))
        }
        if let bigEndian = PacketLoggerReader.sniff(head) {
            return .packetLogger(PacketLoggerReader(source: source, bigEndian: bigEndian, issues: issues))
        }
        if let kind = ArchiveMagic.kind(head) {
            // Archives are resolved into their captures by `CaptureInputs` (every command but live does); this
            // opener reads one capture as it arrives.
            throw CaptureError(.notACapture, "a \(kind) archive, not a capture as it is written (btlens live reads captures; the other commands open archives)")
        }
        let first = Hex.string(UnsafeRawBufferPointer(rebasing: head.prefix(8)), separator: " ")
        throw CaptureError(.notACapture,
                           "not a Bluetooth capture (btsnoop, pcap, pcapng or PacketLogger); it starts with \(first)")
    }

    /// Whether a btsnoop file holds btsnooz records instead of btsnoop ones (`BTSnoozReader.looksLikeBTSnoopHeadedLog`),
    /// from its first `BTSnoozReader.logSniffLength` bytes, which are read only when its first record cannot be
    /// btsnoop's.
    static func isBTSnoopHeadedBTSnooz(_ source: ByteSource) throws -> Bool {
        guard BTSnoozReader.looksLikeBTSnoopHeadedLog(source.peek(CaptureInputs.sniffLength)) else { return false }
        _ = try source.ensure(BTSnoozReader.logSniffLength)
        return BTSnoozReader.looksLikeBTSnoopHeadedLog(source.peek(BTSnoozReader.logSniffLength))
    }

    /// Whether a file's first bytes announce a capture format btlens reads (not whether every record is sound).
    public static func recognises(_ head: UnsafeRawBufferPointer) -> Bool {
        guard head.count >= 4 else { return false }
        if head.prefix(4).elementsEqual(BTSnoopReader.magic.prefix(4)) { return true }
        let word = ByteReader(head).get(UInt32.self, at: 0, bigEndian: true) ?? 0
        return PcapMagic.isPcap(word) || word == PcapMagic.pcapngSection || PacketLoggerReader.sniff(head) != nil
    }

    public var info: CaptureInfo {
        switch self {
        case .btsnoop(let r): r.info
        case .packetLogger(let r): r.info
        case .pcap(let r): r.info
        case .joined(let r): r.info
        case .btsnooz(let r): r.info
        }
    }

    /// The next record of whichever reader this is (one switch per record: for joining captures, not for the
    /// hot loops, which `accept` specialises).
    public func nextRecord() -> CaptureRecord? {
        switch self {
        case .btsnoop(let r): r.next()
        case .packetLogger(let r): r.next()
        case .pcap(let r): r.next()
        case .joined(let r): r.next()
        case .btsnooz(let r): r.next()
        }
    }

    public var issues: IssueLog {
        switch self {
        case .btsnoop(let r): r.issues
        case .packetLogger(let r): r.issues
        case .pcap(let r): r.issues
        case .joined(let r): r.issues
        case .btsnooz(let r): r.issues
        }
    }

    /// Runs `visitor` with the concrete reader, so its record loop is specialised per format.
    public func accept<V: RecordSourceVisitor>(_ visitor: inout V) throws -> V.Result {
        switch self {
        case .btsnoop(let r): try visitor.visit(r)
        case .packetLogger(let r): try visitor.visit(r)
        case .pcap(let r): try visitor.visit(r)
        case .joined(let r): try visitor.visit(r)
        case .btsnooz(let r): try visitor.visit(r)
        }
    }
}
