import BTCapture

/// Where something was seen: the record's number, byte offset and time. Findings and timelines cite these.
public struct RecordRef: Hashable, Sendable, Comparable {
    public var number: Int
    public var offset: Int64
    public var timestamp: Timestamp
    public var controller: UInt16
    /// Bytes the record takes in the file (0 when unknown).
    public var length: Int

    public init(number: Int, offset: Int64, timestamp: Timestamp, controller: UInt16, length: Int = 0) {
        self.number = number
        self.offset = offset
        self.timestamp = timestamp
        self.controller = controller
        self.length = length
    }

    public init(_ record: CaptureRecord) {
        self.init(number: record.number, offset: record.offset, timestamp: record.timestamp, controller: record.controller,
                  length: record.length)
    }

    public static func < (a: RecordRef, b: RecordRef) -> Bool { a.number < b.number }
}
