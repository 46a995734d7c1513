/// A source of capture records: a file reader, a stream, or (later) the live monitor socket.
/// Consumers are generic over it, so no record goes through an existential box; across modules the consumer is
/// not specialised, so `next()` is one witness-table call per record (a few instructions, measured).
public protocol RecordSource: AnyObject {
    var info: CaptureInfo { get }
    /// Problems found while reading (truncated records, absurd lengths) and capture-wide notices.
    var issues: IssueLog { get }
    /// The next record, or nil at the end. The record's payload is valid until the next call.
    func next() -> CaptureRecord?
}

/// Visits an opened capture with its concrete reader type (double dispatch without existentials).
public protocol RecordSourceVisitor {
    associatedtype Result
    mutating func visit<S: RecordSource>(_ source: S) throws -> Result
}
