#if canImport(Glibc)
import Glibc
#endif
import BTWire
import BTCapture

/// Reads HCI monitor frames (`hci_mon_hdr` + payload) from any file descriptor: the monitor socket, where each
/// recvmsg(2) returns one frame with its SO_TIMESTAMP, or a byte stream (pipe, stream socketpair, file) where
/// frames follow each other and may arrive in pieces — so tests can drive it without Bluetooth or root.
/// One reused buffer; a frame's payload is valid until the next call.
public final class MonitorFrameReader {
    public enum Event {
        case frame(MonitorFrame)
        /// Nothing arrived within the wait.
        case timedOut
        /// The writer closed the stream (never for the monitor socket).
        case end
        /// `LiveStop` was requested.
        case stopped
    }

    public let fd: Int32
    let ownsDescriptor: Bool
    /// Datagram semantics (the monitor socket is SOCK_RAW): one read is one frame.
    public let isDatagram: Bool
    /// A zero-byte read means the writer is gone (streams, pipes, SOCK_SEQPACKET), not an empty datagram.
    let zeroReadEnds: Bool
    let isSocket: Bool
    public let issues: IssueLog
    let buffer: UnsafeMutableRawPointer
    let capacity: Int
    var start = 0
    var end = 0
    /// Stream position of buffer[start].
    var position: Int64 = 0
    /// Time of the read that brought the bytes being parsed.
    var readTime = Timestamp(nanoseconds: 0)
    let control: UnsafeMutableRawPointer
    static let controlCapacity = 128
    var frameCount = 0

    public init(fd: Int32, ownsDescriptor: Bool, issues: IssueLog = IssueLog()) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.issues = issues
        var st = stat()
        isSocket = fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
        var type: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        if isSocket, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 {
            isDatagram = type != Int32(SOCK_STREAM.rawValue)
            zeroReadEnds = type == Int32(SOCK_STREAM.rawValue) || type == Int32(SOCK_SEQPACKET.rawValue)
        } else {
            isDatagram = false
            zeroReadEnds = true
        }
        // Room for a few maximal frames, so a stream rarely moves bytes; a datagram always fits whole.
        capacity = 4 * MonitorHeader.maximumFrameLength
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        control = UnsafeMutableRawPointer.allocate(byteCount: Self.controlCapacity, alignment: 16)
    }

    deinit {
        buffer.deallocate()
        control.deallocate()
        if ownsDescriptor { close(fd) }
    }

    /// The next frame, waiting up to `milliseconds` (0: only what is already there; -1: no limit) for data.
    public func next(stop: LiveStop?, milliseconds: Int32) throws(LiveError) -> Event {
        while true {
            if let frame = parseBuffered() { return .frame(frame) }
            if isSocket {
                // A busy channel has the next frame waiting: take it without a poll(2) first, so a burst costs
                // one system call per frame. (The caller checks for a stop between records.)
                switch try receive(wait: false) {
                case .some(true): continue
                case .some(false): return .end
                case .none:
                    if milliseconds == 0 { return stop?.isRequested == true ? .stopped : .timedOut }
                }
            }
            if let stop {
                switch stop.wait(for: fd, milliseconds: milliseconds) {
                case .stopped: return .stopped
                case .timedOut: return .timedOut
                case .readable: break
                }
            }
            switch try receive(wait: true) {
            case .some(true): continue
            case .some(false): return .end
            case .none: continue  // EINTR/EAGAIN: wait again
            }
        }
    }

    /// A whole frame from the buffer, or nil when more bytes are needed.
    @inline(__always)
    func parseBuffered() -> MonitorFrame? {
        let available = end - start
        guard available >= MonitorHeader.length,
              let header = MonitorHeader(UnsafeRawBufferPointer(start: buffer + start, count: MonitorHeader.length))
        else {
            if isDatagram && available > 0 {
                frameCount += 1
                issues.report(.truncatedRecord, record: frameCount, offset: position,
                              "monitor datagram of \(available) bytes is shorter than its header")
                position += Int64(available)
                start = end
            }
            return nil
        }
        let total = MonitorHeader.length + Int(header.payloadLength)
        guard available >= total else {
            if isDatagram {
                // A datagram is a whole frame; one shorter than its header says cannot be completed.
                frameCount += 1
                issues.report(.truncatedRecord, record: frameCount, offset: position,
                              "monitor frame declares \(header.payloadLength) payload bytes, \(available - MonitorHeader.length) arrived")
                position += Int64(available)
                start = end
            }
            return nil
        }
        frameCount += 1
        let frame = MonitorFrame(header: header,
                                 payload: UnsafeRawBufferPointer(start: buffer + start + MonitorHeader.length,
                                                                 count: Int(header.payloadLength)),
                                 timestamp: readTime, offset: position)
        start += total
        position += Int64(total)
        if isDatagram && start < end {
            // Bytes after the frame inside one datagram: not monitor data; drop them so frames stay aligned.
            issues.report(.absurdLength, record: frameCount, offset: position,
                          "\(end - start) bytes after the monitor frame in one datagram ignored")
            position += Int64(end - start)
            start = end
        }
        return frame
    }

    /// One read or recvmsg (`wait` false: MSG_DONTWAIT, sockets only). true: bytes arrived; false: the stream
    /// ended; nil: nothing now (EAGAIN) or interrupted.
    func receive(wait: Bool) throws(LiveError) -> Bool? {
        if isDatagram || start == end {
            // Nothing partial is kept: start the buffer over (the previous payload was handed out already
            // and the caller is done with it, since it called again).
            start = 0
            end = 0
        } else if capacity - end < MonitorHeader.maximumFrameLength {
            let live = end - start
            buffer.copyMemory(from: buffer + start, byteCount: live)
            start = 0
            end = live
        }
        let n: Int
        var timestamp: Timestamp?
        if isSocket {
            (n, timestamp) = receiveMessage(flags: wait ? 0 : Int32(MSG_DONTWAIT))
        } else {
            n = read(fd, buffer + end, capacity - end)
        }
        if n < 0 {
            let e = errno
            if e == EINTR || e == EAGAIN || e == EWOULDBLOCK { return nil }
            throw LiveError(.readFailed, "reading the Bluetooth monitor channel failed (\(String(cString: strerror(e))))",
                            hint: "the controller or the kernel's Bluetooth stack went away; start btlens live again")
        }
        if n == 0 {
            if !zeroReadEnds { return nil }  // an empty datagram carries nothing
            if end > start {
                issues.report(.truncatedRecord, record: frameCount + 1, offset: position,
                              "stream ends inside a monitor frame (\(end - start) bytes)")
            }
            return false
        }
        readTime = timestamp ?? Self.now()
        end += n
        return true
    }

    /// recvmsg(2) into the buffer, with the SO_TIMESTAMP control message when the kernel sends one.
    func receiveMessage(flags: Int32 = 0) -> (Int, Timestamp?) {
        var iov = iovec(iov_base: buffer + end, iov_len: capacity - end)
        return withUnsafeMutablePointer(to: &iov) { iovPointer -> (Int, Timestamp?) in
            var message = msghdr()
            message.msg_iov = iovPointer
            message.msg_iovlen = 1
            message.msg_control = control
            message.msg_controllen = Self.controlCapacity
            let n = recvmsg(fd, &message, flags)
            guard n > 0 else { return (n, nil) }
            if isDatagram && message.msg_flags & Int32(MSG_TRUNC) != 0 {
                issues.report(.truncatedRecord, record: frameCount + 1, offset: position, "monitor datagram cut short by the buffer")
            }
            return (n, Self.timestamp(control: UnsafeRawBufferPointer(start: control, count: Int(message.msg_controllen))))
        }
    }

    /// Linux `SO_TIMESTAMP` (`SO_TIMESTAMP_OLD` in asm-generic/socket.h): a `struct timeval` of two longs.
    static let timestampOption: Int32 = 29

    /// Finds SCM_TIMESTAMP in a control buffer, walking `cmsghdr`s as CMSG_FIRSTHDR/CMSG_NXTHDR do (the macros
    /// are not visible to Swift): `len size_t, level int, type int`, data aligned to size_t.
    static func timestamp(control: UnsafeRawBufferPointer) -> Timestamp? {
        let word = MemoryLayout<Int>.size
        func align(_ n: Int) -> Int { (n + word - 1) & ~(word - 1) }
        let headerSize = align(MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size)
        var offset = 0
        while offset + headerSize <= control.count {
            let length = control.loadUnaligned(fromByteOffset: offset, as: Int.self)
            let level = control.loadUnaligned(fromByteOffset: offset + word, as: Int32.self)
            let type = control.loadUnaligned(fromByteOffset: offset + word + 4, as: Int32.self)
            guard length >= headerSize, offset + length <= control.count else { return nil }
            if level == SOL_SOCKET, type == timestampOption, length - headerSize >= 2 * word {
                let seconds = control.loadUnaligned(fromByteOffset: offset + headerSize, as: Int.self)
                let micros = control.loadUnaligned(fromByteOffset: offset + headerSize + word, as: Int.self)
                return Timestamp(seconds: Int64(seconds), nanoseconds: Int64(micros) * 1000)
            }
            offset += align(length)
        }
        return nil
    }

    /// The wall clock, for frames without a kernel timestamp.
    static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int64(ts.tv_nsec))
    }
}
