import BTCapture

/// A capture in memory as a `ByteSource` reads it: an optional file header the harness chose, then the fuzzer's
/// bytes, read in place. No file and no copy of the input: the per-input cost of a reader target is the reader's.
final class MemoryInput: ByteInput {
    let header: [UInt8]
    let body: UnsafeRawBufferPointer
    var position = 0

    init(header: [UInt8] = [], _ body: UnsafeRawBufferPointer) {
        self.header = header
        self.body = body
    }

    var count: Int { header.count + body.count }

    func read(into buffer: UnsafeMutableRawPointer, count wanted: Int) throws -> Int {
        var written = 0
        if position < header.count {
            let n = min(wanted, header.count - position)
            header.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + position, byteCount: n) }
            written = n
            position += n
        }
        let n = min(wanted - written, count - position)
        if n > 0 {
            (buffer + written).copyMemory(from: body.baseAddress! + (position - header.count), byteCount: n)
            written += n
            position += n
        }
        return written
    }

    /// A source over the input whose buffer holds all of it at once (no growing, no moving of bytes), and at
    /// least what the capture opener sniffs.
    func source() -> ByteSource {
        ByteSource(input: self, capacity: max(count, 4096))
    }
}
