#if canImport(Glibc)
import Glibc
#endif

/// Bytes collected in one reused buffer and written to a file descriptor in large chunks: the output of the
/// btsnoop and PacketLogger writers. Callers append whole records, then `flushIfFull()`, so the descriptor
/// only ever receives whole records (unless a write fails part-way). The buffer is flushed when the writer
/// goes away, and the descriptor closed if it is owned.
///
/// A failed write drops the bytes that did reach the descriptor before throwing, so a later `flush()` (or the
/// one at deinit) continues after them instead of writing them a second time.
public final class BufferedDescriptorWriter {
    public let fd: Int32
    public let ownsDescriptor: Bool
    /// `flushIfFull()` writes once this many bytes are buffered; 0 writes every record through.
    public let flushThreshold: Int
    /// Bytes not written yet.
    @exclusivity(unchecked) public private(set) var buffer: [UInt8] = []

    /// Room for a full buffer plus the largest record (an HCI packet with its headers), so appending the
    /// record that crosses the threshold does not reallocate.
    static let recordAllowance = 65_600

    public init(fd: Int32, ownsDescriptor: Bool = false, flushThreshold: Int = 1 << 20) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.flushThreshold = flushThreshold
        buffer.reserveCapacity(flushThreshold + Self.recordAllowance)
    }

    /// Creates (truncates) `path`. The error gives only the cause: the caller names the file.
    public convenience init(path: String, flushThreshold: Int = 1 << 20) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError(.cannotOpen, String(cString: strerror(errno))) }
        self.init(fd: fd, ownsDescriptor: true, flushThreshold: flushThreshold)
    }

    deinit {
        try? flush()
        if ownsDescriptor { close(fd) }
    }

    @inline(__always) public func append(_ byte: UInt8) {
        buffer.append(byte)
    }

    @inline(__always) public func append(contentsOf bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    @inline(__always) public func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    @inline(__always) public func append32(_ v: UInt32, bigEndian: Bool) {
        if bigEndian {
            buffer.append(UInt8(truncatingIfNeeded: v >> 24))
            buffer.append(UInt8(truncatingIfNeeded: v >> 16))
            buffer.append(UInt8(truncatingIfNeeded: v >> 8))
            buffer.append(UInt8(truncatingIfNeeded: v))
        } else {
            buffer.append(UInt8(truncatingIfNeeded: v))
            buffer.append(UInt8(truncatingIfNeeded: v >> 8))
            buffer.append(UInt8(truncatingIfNeeded: v >> 16))
            buffer.append(UInt8(truncatingIfNeeded: v >> 24))
        }
    }

    /// Flushes once `flushThreshold` bytes are buffered; call after each whole record.
    @inline(__always) public func flushIfFull() throws {
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Writes everything buffered. On failure the bytes already written are gone from the buffer and the
    /// rest stay, so calling again resumes where the descriptor stopped.
    public func flush() throws {
        var written = 0
        defer {
            if written == buffer.count { buffer.removeAll(keepingCapacity: true) } else { buffer.removeFirst(written) }
        }
        try buffer.withUnsafeBytes { try Self.write(fd, $0, written: &written) }
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR. `written` counts the bytes that reached
    /// the descriptor, also when this throws, so the caller can drop exactly those.
    /// - Throws: `CaptureError(.writeFailed, …)` with the cause only; the caller names the file.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, written: inout Int) throws {
        while written < bytes.count, let base = bytes.baseAddress {
            let n = Glibc.write(fd, base + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                throw CaptureError(.writeFailed, "write failed: \(String(cString: strerror(errno)))")
            }
            written += n
        }
    }
}
