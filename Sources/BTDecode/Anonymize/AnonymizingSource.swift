import BTCapture

/// A record source whose HCI packets pass through an `Anonymizer` before anyone reads them: what `--anonymize`
/// puts in front of every command, so every report (text, JSON, HTML, …) is made from rewritten bytes. One
/// reused buffer; a payload is valid until the next record, as for any source.
public final class AnonymizingSource<Source: RecordSource>: RecordSource {
    let source: Source
    let anonymizer: Anonymizer
    @exclusivity(unchecked) var buffer: UnsafeMutableRawBufferPointer

    public init(_ source: Source, anonymizer: Anonymizer) {
        self.source = source
        self.anonymizer = anonymizer
        buffer = .allocate(byteCount: 1 << 16, alignment: 8)
    }

    deinit { buffer.deallocate() }

    public var info: CaptureInfo { source.info }
    public var issues: IssueLog { source.issues }

    public func next() -> CaptureRecord? {
        guard var record = source.next() else { return nil }
        guard record.kind.isHCIPacket else { return record }
        let count = record.payload.count
        if count > buffer.count {
            buffer.deallocate()
            buffer = .allocate(byteCount: count, alignment: 8)
        }
        let packet = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        if count > 0 { packet.copyMemory(from: record.payload) }
        anonymizer.anonymize(kind: record.kind, payload: packet)
        record.payload = UnsafeRawBufferPointer(packet)
        return record
    }
}

/// Visits a capture through `AnonymizingSource`.
public struct AnonymizingVisitor<Inner: RecordSourceVisitor>: RecordSourceVisitor {
    public var inner: Inner
    let anonymizer: Anonymizer

    public init(_ inner: Inner, anonymizer: Anonymizer) {
        self.inner = inner
        self.anonymizer = anonymizer
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> Inner.Result {
        try inner.visit(AnonymizingSource(source, anonymizer: anonymizer))
    }
}

extension OpenedCapture {
    /// `accept`, through the anonymizer when there is one.
    public func accept<V: RecordSourceVisitor>(_ visitor: inout V, anonymizer: Anonymizer?) throws -> V.Result {
        guard let anonymizer else { return try accept(&visitor) }
        var wrapped = AnonymizingVisitor(visitor, anonymizer: anonymizer)
        defer { visitor = wrapped.inner }
        return try accept(&wrapped)
    }
}
