/// The framing btsnoop and PacketLogger share: a fixed header that says how long the record is. One place
/// decides what a short read, an impossible length or a read error means, so every reader reports them alike:
/// the records before the problem are kept, the problem is counted with its record number and byte offset,
/// and reading stops (a bad length leaves no way to find the next record).
@usableFromInline enum RecordFraming {
    /// A reader's place: the records read so far, and whether reading stopped (the end, or a problem).
    @usableFromInline struct Position {
        @usableFromInline var recordNumber = 0
        @usableFromInline var stopped = false
        @usableFromInline init() {}
    }

    /// One record, borrowed from the source's buffer until its next read.
    @usableFromInline struct Frame {
        @usableFromInline var header: UnsafeRawBufferPointer
        @usableFromInline var body: UnsafeRawBufferPointer
        @usableFromInline var offset: Int64
        /// Header and body.
        @usableFromInline var length: Int

        @usableFromInline init(header: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, offset: Int64, length: Int) {
            (self.header, self.body, self.offset, self.length) = (header, body, offset, length)
        }
    }

    /// Why a header cannot be right.
    @usableFromInline struct ImpossibleLength: Error {
        @usableFromInline var message: String
        @usableFromInline init(message: String) { self.message = message }
    }

    /// The next record, or nil at the end of the data or after a problem (reported to `issues`). Inlined so the
    /// reader's length closure folds into its loop.
    /// - Parameter totalLength: the whole record's length from its header, or why the header is impossible.
    @inlinable @inline(__always)
    static func next(_ source: ByteSource, issues: IssueLog, recordNumber: inout Int, stopped: inout Bool,
                     headerLength: Int, totalLength: (UnsafeRawBufferPointer) -> Result<Int, ImpossibleLength>)
        -> Frame?
    {
        guard !stopped else { return nil }
        let offset = source.offset
        // The record a read error falls in: the next one until its header is read, then that one.
        let before = recordNumber
        do {
            guard try source.ensure(headerLength) else {
                if source.available > 0 {
                    issues.report(.truncatedRecord, record: recordNumber + 1, offset: offset,
                                  "file ends inside a record header (\(source.available) of \(headerLength) bytes)")
                }
                stopped = true
                return nil
            }
            recordNumber += 1
            let total: Int
            switch totalLength(source.peek(headerLength)) {
            case .success(let length):
                total = length
            case .failure(let impossible):
                issues.report(.absurdLength, record: recordNumber, offset: offset, impossible.message)
                stopped = true
                return nil
            }
            guard try source.ensure(total) else {
                issues.report(.truncatedRecord, record: recordNumber, offset: offset,
                              "file ends inside the record (\(source.available) of \(total) bytes)")
                stopped = true
                return nil
            }
            let bytes = source.peek(total)
            source.consume(total)
            return Frame(header: UnsafeRawBufferPointer(rebasing: bytes[..<headerLength]),
                         body: UnsafeRawBufferPointer(rebasing: bytes[headerLength...]), offset: offset, length: total)
        } catch {
            if let refused = error as? CaptureError, refused.code == .refused { issues.refuse(refused.message) }
            issues.report(.readError, record: before + 1, offset: offset, "\(error)")
            stopped = true
            return nil
        }
    }
}
