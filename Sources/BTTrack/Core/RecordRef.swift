import BTCapture

/// Where something was seen: the record's number, byte offset and time. Findings and timelines cite these.
public struct RecordRef: Hashable, Sendable, Comparable {
    public var number: Int
    public var offset: Int64
    public var timestamp: Timestamp
    public var controller: UInt16
    /// 32 bits beside `controller`: a record ref is 32 bytes, not 40, and timelines, activity runs and findings
    /// hold many (a record is at most a few hundred kilobytes).
    private var storedLength: UInt32

    /// Bytes the record takes in the file (0 when unknown).
    public var length: Int {
        get { Int(storedLength) }
        set { storedLength = UInt32(clamping: newValue) }
    }

    public init(number: Int, offset: Int64, timestamp: Timestamp, controller: UInt16, length: Int = 0) {
        self.number = number
        self.offset = offset
        self.timestamp = timestamp
        self.controller = controller
        self.storedLength = UInt32(clamping: length)
    }

    public init(_ record: CaptureRecord) {
        self.init(number: record.number, offset: record.offset, timestamp: record.timestamp, controller: record.controller,
                  length: record.length)
    }

    public static func < (a: RecordRef, b: RecordRef) -> Bool { a.number < b.number }
}
