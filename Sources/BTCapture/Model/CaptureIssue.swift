/// What went wrong with one record, and where.
public struct CaptureIssue: Sendable, CustomStringConvertible {
    /// A stable, dotted identifier: `capture.truncated`, `hci.short`, `l2cap.orphan-continuation`, …
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file ends inside a record.
        public static let truncatedRecord = Code(rawValue: "capture.truncated")
        /// A record length field beyond any valid record.
        public static let absurdLength = Code(rawValue: "capture.length")
        /// The container's reader reported an error (libpcap).
        public static let readError = Code(rawValue: "capture.read-error")
        /// An HCI packet shorter than its header or its own length field.
        public static let shortPacket = Code(rawValue: "hci.short")
        /// An event whose parameters do not fit its declared layout.
        public static let badParameters = Code(rawValue: "hci.parameters")
        public static let orphanContinuation = Code(rawValue: "l2cap.orphan-continuation")
        public static let interruptedPDU = Code(rawValue: "l2cap.interrupted")
        public static let overlongPDU = Code(rawValue: "l2cap.overlong")
        public static let emptyPDU = Code(rawValue: "att.empty")
        public static let limitReached = Code(rawValue: "limit.reached")
    }

    public var code: Code
    public var recordNumber: Int
    public var byteOffset: Int64
    public var message: String

    public init(code: Code, recordNumber: Int, byteOffset: Int64, message: String) {
        self.code = code
        self.recordNumber = recordNumber
        self.byteOffset = byteOffset
        self.message = message
    }

    public var description: String { "record \(recordNumber) at byte \(byteOffset): \(message)" }
}

/// Malformed records found while reading and decoding. Counts every problem; keeps the first `keepLimit`
/// in detail so a hostile file cannot grow memory without bound.
public final class IssueLog: @unchecked Sendable {
    /// Every problem reported. Held behind a pointer: decoders read it around each packet (to mark the frame
    /// malformed), and a class property read from another module is checked for exclusive access each time.
    public private(set) var count: Int {
        get { counter.pointee }
        set { counter.pointee = newValue }
    }
    private let counter: UnsafeMutablePointer<Int> = {
        let p = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        p.initialize(to: 0)
        return p
    }()
    @exclusivity(unchecked) public private(set) var issues: [CaptureIssue] = []
    /// One-off remarks about the capture as a whole ("link-layer payload not decoded yet").
    @exclusivity(unchecked) public private(set) var notices: [String] = []
    /// Why reading was refused part-way (a decompression bomb inside an archive): the commands report the
    /// input as unreadable with this cause rather than as a capture with a read error.
    @exclusivity(unchecked) public private(set) var refusal: String?
    public let keepLimit: Int

    public init(keepLimit: Int = 1000) { self.keepLimit = keepLimit }

    deinit { counter.deallocate() }

    public func report(_ code: CaptureIssue.Code, record: Int, offset: Int64, _ message: @autoclosure () -> String) {
        count += 1
        if issues.count < keepLimit {
            issues.append(CaptureIssue(code: code, recordNumber: record, byteOffset: offset, message: message()))
        }
    }

    /// Takes in the issues another log found in the same records, as if each had been reported here when its
    /// record was decoded: by record number, this log's first among issues of one record (its issues come from
    /// reading and decoding that record before the other's). Counts add up; the kept issues stay the first
    /// `keepLimit` of that order.
    public func merge(_ other: IssueLog) {
        count += other.count
        guard !other.issues.isEmpty else { return }
        var merged: [CaptureIssue] = []
        merged.reserveCapacity(min(keepLimit, issues.count + other.issues.count))
        var i = 0, j = 0
        while merged.count < keepLimit && (i < issues.count || j < other.issues.count) {
            if j == other.issues.count || (i < issues.count && issues[i].recordNumber <= other.issues[j].recordNumber) {
                merged.append(issues[i])
                i += 1
            } else {
                merged.append(other.issues[j])
                j += 1
            }
        }
        issues = merged
        for text in other.notices { notice(text) }
    }

    /// Records that reading was refused (see `refusal`); the first cause is kept.
    public func refuse(_ cause: String) {
        if refusal == nil { refusal = cause }
    }

    /// Takes in the issues a part of a joined capture found (its own record numbers shifted by the records of the
    /// parts before it), after this log's, naming the part.
    func absorb(_ other: IssueLog, recordShift: Int, part: String) {
        let uncounted = other.count - other.issues.count
        for issue in other.issues {
            report(issue.code, record: issue.recordNumber + recordShift, offset: issue.byteOffset, "in \(part): \(issue.message)")
        }
        count += uncounted
        for text in other.notices { notice(text) }
        if let cause = other.refusal { refuse(cause) }
    }

    public func notice(_ text: String) {
        if !notices.contains(text) { notices.append(text) }
    }
}
