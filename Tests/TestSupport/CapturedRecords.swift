import BTCapture
import BTWire

/// A record copied out of a reader (whose payloads are only borrowed), for tests that compare whole captures.
public struct CopiedRecord: Equatable, Sendable {
    public var number: Int
    public var timestamp: Timestamp
    public var direction: Direction
    public var kind: RecordKind
    public var controller: UInt16
    public var sourceType: UInt32
    public var payload: [UInt8]

    public init(_ r: CaptureRecord) {
        number = r.number
        timestamp = r.timestamp
        direction = r.direction
        kind = r.kind
        controller = r.controller
        sourceType = r.sourceType
        payload = Array(r.payload)
    }

    /// Microseconds since the Unix epoch.
    public var microseconds: Int64 { timestamp.microseconds }
}

/// Everything in a capture file: what the opener decided, every record, and the problems the reader logged.
public struct LoadedCapture: Sendable {
    public var info: CaptureInfo
    public var records: [CopiedRecord]
    public var issueCount: Int
    public var notices: [String]

    /// HCI packets only (commands, events, ACL, SCO, ISO), in capture order.
    public var hciPackets: [CopiedRecord] { records.filter { $0.kind.isHCIPacket } }

    /// Opens `path` with `OpenedCapture` and reads it through a `RecordSourceVisitor`, so the reader loop is
    /// the specialised one btlens itself uses.
    public static func load(_ path: String) throws -> LoadedCapture {
        let opened = try OpenedCapture.open(path: path)
        var visitor = CopyingVisitor()
        let records = try opened.accept(&visitor)
        return LoadedCapture(info: opened.info, records: records, issueCount: opened.issues.count,
                             notices: opened.issues.notices)
    }
}

struct CopyingVisitor: RecordSourceVisitor {
    mutating func visit<S: RecordSource>(_ source: S) throws -> [CopiedRecord] {
        var out: [CopiedRecord] = []
        while let r = source.next() { out.append(CopiedRecord(r)) }
        return out
    }
}
