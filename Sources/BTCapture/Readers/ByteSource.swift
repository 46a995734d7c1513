#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Buffered reading from a file descriptor into one reused buffer. Records are handed out as slices of that
/// buffer; `ensure` may move the bytes, so a slice is valid only until the next `ensure`.
/// Memory is the buffer, whatever the file size.
public final class ByteSource {
    public let fd: Int32
    let ownsDescriptor: Bool
    @exclusivity(unchecked) @usableFromInline private(set) var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) private(set) var capacity: Int
    /// Valid bytes are buffer[start..<end].
    @exclusivity(unchecked) @usableFromInline var start = 0
    @exclusivity(unchecked) @usableFromInline var end = 0
    /// File offset of buffer[0].
    @exclusivity(unchecked) @usableFromInline var bufferOrigin: Int64
    @exclusivity(unchecked) public private(set) var reachedEOF = false
    /// When set, `ensure` returns false at end of data instead of marking EOF for good (follow mode).
    @exclusivity(unchecked) public var allowGrowth = false
    /// Waits for bytes that have not arrived yet (a file being written, a pipe), so readers see only whole
    /// records and never mistake "not yet" for the end. nil: end of data is final, as for a finished file.
    public weak var waiter: (any ByteSourceWaiter)?
    /// Where the bytes come from when they are not a descriptor's: a member of an archive or a decompressed
    /// stream (libarchive), read as it is decompressed. nil: `fd`.
    public let input: (any ByteInput)?
    /// Why `input` failed, when a reader that cannot receive the error (libpcap, through a C callback) needs it.
    @exclusivity(unchecked) public var failure: CaptureError?

    public static let defaultCapacity = 1 << 20

    public init(fd: Int32, ownsDescriptor: Bool, capacity: Int = ByteSource.defaultCapacity, startOffset: Int64 = 0) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.capacity = capacity
        self.buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        self.bufferOrigin = startOffset
        self.input = nil
    }

    /// Reads `input` instead of a descriptor (`fd` is -1).
    public init(input: any ByteInput, capacity: Int = ByteSource.defaultCapacity) {
        self.fd = -1
        self.ownsDescriptor = false
        self.capacity = capacity
        self.buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        self.bufferOrigin = 0
        self.input = input
    }

    /// Opens a path read-only; "-" is standard input.
    public convenience init(path: String) throws {
        if path == "-" {
            self.init(fd: 0, ownsDescriptor: false)
            return
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CaptureError(.cannotOpen, String(cString: strerror(errno)))
        }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CaptureError(.cannotOpen, "is a directory")
        }
        self.init(fd: fd, ownsDescriptor: true)
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { close(fd) }
    }

    /// Byte offset of the next unread byte.
    @inlinable public var offset: Int64 { bufferOrigin + Int64(start) }

    @inlinable public var available: Int { end - start }

    /// Makes at least `count` bytes available from the current position. Returns false when the data ends
    /// first (the bytes that exist stay available). Throws on a read error.
    @inlinable @inline(__always)
    public func ensure(_ count: Int) throws -> Bool {
        if end - start >= count { return true }
        return try fill(count)
    }

    @usableFromInline func fill(_ count: Int) throws -> Bool {
        if count > capacity { grow(to: count) }
        if start > 0 {
            // Move the unread tail to the front so the buffer never grows with the file.
            let live = end - start
            if live > 0 { buffer.copyMemory(from: buffer + start, byteCount: live) }
            bufferOrigin += Int64(start)
            start = 0
            end = live
        }
        while end - start < count {
            if reachedEOF && !allowGrowth { return false }
            if let waiter, !waiter.waitUntilReadable(self) { return false }
            let n = try input?.read(into: buffer + end, count: capacity - end) ?? read(fd, buffer + end, capacity - end)
            if n > 0 {
                end += n
            } else if n == 0 {
                if let waiter, waiter.waitForGrowth(self) { continue }
                reachedEOF = true
                return false
            } else if errno == EINTR {
                continue
            } else {
                throw CaptureError(.readFailed, String(cString: strerror(errno)))
            }
        }
        return true
    }

    private func grow(to count: Int) {
        let newCapacity = max(count, capacity * 2)
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        fresh.copyMemory(from: buffer + start, byteCount: end - start)
        buffer.deallocate()
        buffer = fresh
        bufferOrigin += Int64(start)
        end -= start
        start = 0
        capacity = newCapacity
    }

    /// The next `count` bytes (after `ensure(count)` succeeded), not consumed.
    @inlinable @inline(__always)
    public func peek(_ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: buffer + start, count: min(count, end - start))
    }

    @inlinable @inline(__always)
    public func consume(_ count: Int) {
        start += min(count, end - start)
    }

    /// For C read callbacks (libarchive's, libpcap's through CStreamSupport): up to `maximum` bytes, consumed and
    /// valid until the next read; empty at the end; nil when reading failed, the cause kept in `failure` (the C
    /// side can only say that it failed).
    public func takeBlock(maximum: Int) -> UnsafeRawBufferPointer? {
        do {
            guard try ensure(1) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        } catch {
            failure = error as? CaptureError ?? CaptureError(.readFailed, "\(error)")
            return nil
        }
        let bytes = peek(min(maximum, available))
        consume(bytes.count)
        return bytes
    }

    /// Everything still buffered (for handing sniffed bytes on to libpcap).
    public func takeBuffered() -> [UInt8] {
        let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer + start, count: end - start))
        start = end
        return bytes
    }

    /// Clears EOF so a follower can read bytes appended since (live --follow).
    public func resetEOF() { reachedEOF = false }
}

/// Bytes that are not a file descriptor's: what `ByteSource` reads from an archive member or a decompressed
/// stream. Like read(2): returns how many bytes it wrote (at most `count`), 0 at the end; throws a
/// `CaptureError` when the data cannot be had (a corrupt archive, a member refused as a bomb).
public protocol ByteInput: AnyObject {
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
}

/// Lets a `ByteSource` wait for data that arrives over time (btlens live: a growing file, standard input).
/// Both calls happen inside `ensure`, between reads; returning false makes `ensure` report the data as ended
/// for now (the bytes already read stay available).
public protocol ByteSourceWaiter: AnyObject {
    /// Before each read(2): returns once the descriptor has bytes (true), or when reading should stop (false),
    /// so a blocking read on a pipe cannot keep the process from noticing a stop request.
    func waitUntilReadable(_ source: ByteSource) -> Bool
    /// After read(2) returned 0: true to read again (the file may have grown), false for end of data.
    func waitForGrowth(_ source: ByteSource) -> Bool
}
