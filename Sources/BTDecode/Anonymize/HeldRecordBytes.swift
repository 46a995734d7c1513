import BTCapture

/// A record's bytes kept past the reader's next record (which reuses its buffer): one buffer, grown to the largest
/// record held, reused for every record. Deallocated by its owner.
struct HeldRecordBytes {
    private(set) var buffer: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(capacity: Int) { buffer = .allocate(byteCount: capacity, alignment: 8) }

    /// The bytes held, writable in place.
    var bytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]) }

    /// Copies `payload` in, growing the buffer when it is larger than any before.
    mutating func hold(_ payload: UnsafeRawBufferPointer) {
        let n = payload.count
        if n > buffer.count {
            buffer.deallocate()
            buffer = .allocate(byteCount: n, alignment: 8)
        }
        if n > 0 { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]).copyMemory(from: payload) }
        count = n
    }

    func deallocate() { buffer.deallocate() }
}
