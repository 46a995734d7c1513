import BTCapture

/// Copies each HCI packet through the `Anonymizer` into the writer, one reused buffer for all.
///
/// With `byValue` (from `Anonymizer.byValueScanner()` after a first reading by `IdentifierCollector`), every
/// identifier's bytes left after the field pass are replaced too, within a record or across two consecutive
/// ones (each record is written once the next one was scanned). Packets of the controller's debug log
/// (`ControllerDebugLogFilter`) are left out unless `keepVendorLogs`: they repeat names and addresses in
/// layouts nobody documents.
public struct AnonymizingCopier: RecordSourceVisitor {
    /// Called with a record's byte offset every 65,536 records (a progress line).
    public var progress: ((Int64) -> Void)?
    /// What a copy took: records written and dropped, identifiers replaced.
    public struct Result: Sendable {
        public var written = 0
        /// Records that are not HCI packets (notes, monitor records): btsnoop H4 cannot carry them.
        public var leftOut = 0
        /// Packets of the controller's debug log left out.
        public var vendorLogsLeftOut = 0
        public var addresses = 0
        public var names = 0
        /// Identifiers replaced by value (after the field pass).
        public var byValue = 0
    }

    let writer: any HCIRecordWriter
    let anonymizer: Anonymizer
    let byValue: ValueScanner?
    let keepVendorLogs: Bool

    public init(writer: any HCIRecordWriter, anonymizer: Anonymizer = Anonymizer(), byValue: ValueScanner? = nil,
                keepVendorLogs: Bool = false) {
        self.writer = writer
        self.anonymizer = anonymizer
        self.byValue = byValue.flatMap { $0.isEmpty ? nil : $0 }
        self.keepVendorLogs = keepVendorLogs
    }

    /// A record rewritten and not yet written (its end may still change with the next record's scan).
    struct Pending {
        var held = HeldRecordBytes(capacity: BTSnoopReader.maximumRecordLength)
        var kind = RecordKind.command
        var direction = Direction.unknown
        var timestamp = Timestamp(seconds: 0, nanoseconds: 0)

        var buffer: UnsafeMutableRawBufferPointer { held.buffer }
        var count: Int { held.count }
        var bytes: UnsafeMutableRawBufferPointer { held.bytes }

        mutating func hold(_ record: CaptureRecord) {
            held.hold(record.payload)
            kind = record.kind
            direction = record.direction
            timestamp = record.timestamp
        }
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> Result {
        var current = Pending(), previous = Pending()
        var window = ScanWindow()
        defer {
            current.held.deallocate()
            previous.held.deallocate()
            window.deallocate()
        }
        var holding = false
        var result = Result()
        var debugLog = ControllerDebugLogFilter()
        func write(_ p: Pending) throws {
            try writer.write(kind: p.kind, direction: p.direction, timestamp: p.timestamp, controller: 0,
                             monitorOpcode: nil, payload: UnsafeRawBufferPointer(p.bytes))
            result.written += 1
        }
        while let record = source.next() {
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            let isDebugLog = debugLog.isDebugLog(record)
            guard record.kind.isHCIPacket else {
                result.leftOut += 1
                continue
            }
            if isDebugLog && !keepVendorLogs {
                result.vendorLogsLeftOut += 1
                continue
            }
            current.hold(record)
            // The debug log is no L2CAP: the field pass would rewrite its bytes as if it were (kept: by value only).
            if !isDebugLog { anonymizer.anonymize(kind: record.kind, direction: record.direction, payload: current.bytes) }
            guard let byValue else {
                try write(current)
                continue
            }
            let tail = holding ? UnsafeRawBufferPointer(previous.bytes) : UnsafeRawBufferPointer(start: nil, count: 0)
            let skip = ScanWindow.skipped(kind: current.kind, UnsafeRawBufferPointer(current.bytes))
            let scanned = UnsafeMutableRawBufferPointer(rebasing: current.buffer[skip..<current.count])
            let (joined, carried) = window.load(tail: tail, keep: byValue.longest - 1, payload: UnsafeRawBufferPointer(scanned))
            let replaced = byValue.rewrite(joined, endingAfter: carried)
            if replaced > 0 {
                result.byValue += replaced
                if carried > 0 {
                    UnsafeMutableRawBufferPointer(rebasing: previous.buffer[(previous.count - carried)..<previous.count])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: joined[0..<carried]))
                }
                if scanned.count > 0 {
                    scanned.copyMemory(from: UnsafeRawBufferPointer(rebasing: joined[carried...]))
                }
            }
            if holding { try write(previous) }
            swap(&current, &previous)
            holding = true
        }
        if holding { try write(previous) }
        result.addresses = anonymizer.addressesReplaced
        result.names = anonymizer.namesReplaced
        return result
    }
}

/// The first reading of `btlens anonymize` (and of the original for `anonymize --check`): the field pass over a
/// scratch copy of each HCI packet, collecting every identifier it meets (`Anonymizer.collectIdentifiers`). The
/// controller's debug log is not read as L2CAP.
public struct IdentifierCollector: RecordSourceVisitor {
    /// Called with a record's byte offset every 65,536 records (a progress line).
    public var progress: ((Int64) -> Void)?
    let anonymizer: Anonymizer

    public init(anonymizer: Anonymizer) {
        self.anonymizer = anonymizer
        if anonymizer.identifiers == nil { anonymizer.collectIdentifiers() }
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> CapturedIdentifiers {
        var held = HeldRecordBytes(capacity: BTSnoopReader.maximumRecordLength)
        defer { held.deallocate() }
        var debugLog = ControllerDebugLogFilter()
        while let record = source.next() {
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
            guard !debugLog.isDebugLog(record), record.kind.isHCIPacket else { continue }
            held.hold(record.payload)
            let packet = held.bytes
            anonymizer.anonymize(kind: record.kind, direction: record.direction, payload: packet)
        }
        return anonymizer.identifiers ?? CapturedIdentifiers()
    }
}

/// Tells the Qualcomm controller's debug log (ACL header 0x2EDC from the controller: `ACLPacket.isQualcommDebugLog`)
/// from a link's data as `PacketDecoder` does: unless a Connection Complete gave a link handle 0x0EDC on that
/// controller (forgotten at HCI Reset and when the controller comes or goes).
public struct ControllerDebugLogFilter {
    var handleIsLink: Set<UInt16> = []

    public init() {}

    public mutating func isDebugLog(_ record: CaptureRecord) -> Bool {
        let p = record.payload
        switch record.kind {
        case .acl:
            guard p.count >= 2 else { return false }
            let header = UInt16(p[0]) | UInt16(p[1]) << 8
            return header & 0x0FFF == ACLPacket.qualcommDebugLogHandle && header >> 12 & 0x3 == UInt16(ACLPacket.PacketBoundary.firstFlushable.rawValue)
                && record.direction != .sent && !handleIsLink.contains(record.controller)
        case .event:
            guard p.count >= 5 else { return false }
            if p[0] == 0x0E, UInt16(p[3]) | UInt16(p[4]) << 8 == 0x0C03 {  // Command Complete of HCI Reset
                handleIsLink.remove(record.controller)
            } else if p[0] == 0x03 || p[0] == 0x2C, p[2] == 0,
                      (UInt16(p[3]) | UInt16(p[4]) << 8) & 0x0FFF == ACLPacket.qualcommDebugLogHandle {
                handleIsLink.insert(record.controller)
            }
            return false
        case .controllerAdded, .controllerRemoved:
            handleIsLink.remove(record.controller)
            return false
        default:
            return false
        }
    }
}

extension AnonymizingCopier {
    /// `btlens anonymize`'s two readings of a capture: its identifiers from the first (`open()`), then the copy,
    /// field by field and by value, from the second. Returns the copy's counts and the identifiers.
    public static func copy(reading open: () throws -> OpenedCapture, to writer: any HCIRecordWriter,
                            anonymizer: Anonymizer = Anonymizer(),
                            keepVendorLogs: Bool = false) throws -> (result: Result, identifiers: CapturedIdentifiers) {
        var collector = IdentifierCollector(anonymizer: anonymizer)
        let identifiers = try open().accept(&collector)
        var copier = AnonymizingCopier(writer: writer, anonymizer: anonymizer, byValue: anonymizer.byValueScanner(),
                                       keepVendorLogs: keepVendorLogs)
        let result = try open().accept(&copier)
        try writer.finish()
        return (result, identifiers)
    }
}
