#if canImport(Glibc)
import Glibc
#endif
import BTWire
import BTCapture

/// A capture file that is still being written — Android's btsnoop_hci.log pulled continuously, a file
/// `btmon -w` writes — read with the existing btsnoop and PacketLogger readers over a `ByteSource` that waits
/// for the file to grow instead of ending (so a reader never sees half a record). While waiting it checks the
/// path: a file that shrank was truncated and is read again from its new start; a path that now names a
/// different file (inode) was rotated and is reopened. Record numbers keep counting across both.
public final class FollowingSource: RecordSource {
    /// What happened to the followed file.
    public enum Change: Equatable, Sendable {
        case truncated(size: Int64)
        case rotated

        public var note: String {
            switch self {
            case .truncated(let size): "file truncated (now \(size) bytes); reading it again from its start"
            case .rotated: "file replaced (rotated); reading the new file from its start"
            }
        }
    }

    public let path: String
    public let issues: IssueLog
    /// The format of the file being read (of the current one after a rotation).
    public private(set) var info = CaptureInfo(format: .btsnoop(datalink: BTSnoopDatalink.h4), timestampDigits: 6)
    let stop: LiveStop
    /// Runs while the file is not growing: once on catching up, then every `pollInterval`.
    public var onIdle: (() -> Void)?
    /// Truncation and rotation, as they happen.
    public var onChange: ((Change) -> Void)?
    /// Sleep between checks for growth, in milliseconds (short, so records show promptly; not zero, so an idle
    /// follower costs nothing).
    public var pollInterval: Int32 = 150
    /// Set when a reopen failed (the new file is not a capture); the capture ends there.
    public private(set) var failure: CaptureError?

    var fd: Int32 = -1
    var source: ByteSource?
    var reader: OpenedCapture?
    lazy var waiter = FollowWaiter(owner: self)
    var pendingChange: Change?
    /// Records before the current reader (earlier incarnations of the file).
    var base = 0
    var lastNumber = 0

    /// Opens `path` and waits until its first bytes show the format (an empty file is waited for), then
    /// positions at its start, or with `fromEnd` at its current end. Throws `CaptureError` when the file is
    /// missing or unreadable (exit 3) or is not a btsnoop/PacketLogger capture. `onIdle` is set before the
    /// file is opened, so it also runs while that first wait lasts (tests grow the file from it).
    public init(path: String, fromEnd: Bool, stop: LiveStop, issues: IssueLog = IssueLog(),
                onIdle: (() -> Void)? = nil) throws {
        self.path = path
        self.stop = stop
        self.issues = issues
        self.onIdle = onIdle
        try open(fromEnd: fromEnd, afterChange: false)
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    public func next() -> CaptureRecord? {
        while let reader {
            if var r = Self.next(reader) {
                lastNumber = base + r.number
                r.number = lastNumber
                return r
            }
            guard !stop.isRequested, let change = pendingChange else {
                // Stopped, or the reader gave up on a record it cannot read (logged in `issues`).
                return nil
            }
            pendingChange = nil
            onChange?(change)
            base = lastNumber
            do {
                try open(fromEnd: false, afterChange: true)
            } catch let error as CaptureError {
                failure = error
                self.reader = nil
            } catch {
                failure = CaptureError(.readFailed, "\(error)")
                self.reader = nil
            }
        }
        return nil
    }

    @inline(__always)
    static func next(_ capture: OpenedCapture) -> CaptureRecord? {
        switch capture {
        case .btsnoop(let r): r.next()
        case .packetLogger(let r): r.next()
        case .pcap, .joined, .btsnooz: nil
        }
    }

    // MARK: - Opening

    /// (Re)opens the path, recognises the format and builds a reader at the start or the current end.
    /// `afterChange`: the file was truncated or rotated (a rotated path may take a moment to reappear).
    func open(fromEnd: Bool, afterChange: Bool) throws {
        source = nil
        reader = nil
        if fd >= 0 { close(fd) }
        fd = -1
        fd = try openDescriptor(waitForIt: afterChange)
        let sniffer = ByteSource(fd: fd, ownsDescriptor: false)
        sniffer.allowGrowth = true
        sniffer.waiter = waiter
        waiter.sniffing = true
        defer { waiter.sniffing = false }
        let opened: OpenedCapture
        do {
            opened = try OpenedCapture.open(source: sniffer, issues: issues)
        } catch where stop.isRequested {
            return  // stopped before the file said what it is: nothing to read, not an error
        }
        info = opened.info
        switch opened {
        case .pcap:
            throw CaptureError(.unsupportedLinktype,
                               "btlens live --follow reads btsnoop or PacketLogger files, not pcap/pcapng (libpcap cannot wait for a file to grow)")
        case .btsnooz:
            throw CaptureError(.unsupportedLinktype,
                               "btlens live --follow reads btsnoop or PacketLogger files, not a btsnooz log (written whole at a bug report: read it with the other commands)")
        case .btsnoop(let r) where fromEnd:
            reader = .btsnoop(try positionedBTSnoop(datalink: r.datalink))
        case .packetLogger(let r) where fromEnd:
            let end = fileSize()
            lseek(fd, off_t(end), SEEK_SET)
            let s = makeSource(startOffset: end)
            reader = .packetLogger(PacketLoggerReader(source: s, bigEndian: r.bigEndian, issues: issues))
        default:
            // From the start: the reader the opener built is already past the file header.
            source = sniffer
            reader = opened
        }
    }

    /// A btsnoop reader whose next record is the one written after now: the 16-byte file header is read first
    /// (the reader checks it), then the descriptor jumps to the current end. A header-sized buffer keeps the
    /// source from reading past the header before the jump; offsets stay true file offsets.
    func positionedBTSnoop(datalink: UInt32) throws -> BTSnoopReader {
        let end = fileSize()
        lseek(fd, 0, SEEK_SET)
        let s = makeSource(startOffset: end - Int64(BTSnoopReader.fileHeaderLength), capacity: BTSnoopReader.fileHeaderLength)
        let r = try BTSnoopReader(source: s, issues: issues)
        lseek(fd, off_t(end), SEEK_SET)
        return r
    }

    func makeSource(startOffset: Int64, capacity: Int = ByteSource.defaultCapacity) -> ByteSource {
        let s = ByteSource(fd: fd, ownsDescriptor: false, capacity: capacity, startOffset: startOffset)
        s.allowGrowth = true
        s.waiter = waiter
        source = s
        return s
    }

    func openDescriptor(waitForIt: Bool) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                var st = stat()
                if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                    close(fd)
                    throw CaptureError(.cannotOpen, "is a directory")
                }
                return fd
            }
            let e = errno
            // After a rotation the new file may not exist yet: wait for it. At the start, missing is an error.
            guard e == ENOENT, waitForIt, stop.wait(for: nil, milliseconds: pollInterval) != .stopped else {
                throw CaptureError(.cannotOpen, String(cString: strerror(e)))
            }
        }
    }

    func fileSize() -> Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
    }

    // MARK: - Watching the path

    /// Truncation (the open file is now shorter than what was read) or rotation (the path names another file).
    /// A path that is missing for the moment is neither: the writer may be about to create it.
    func checkForChange() -> Change? {
        var open = stat()
        var named = stat()
        guard fstat(fd, &open) == 0 else { return nil }
        if stat(path, &named) == 0, named.st_ino != open.st_ino || named.st_dev != open.st_dev {
            return .rotated
        }
        let position = lseek(fd, 0, SEEK_CUR)
        if position >= 0, Int64(open.st_size) < Int64(position) { return .truncated(size: Int64(open.st_size)) }
        return nil
    }

    /// Called by the waiter when the file has no new bytes: false stops the current reader (restart or stop).
    func waitForGrowth(_ source: ByteSource, sniffing: Bool) -> Bool {
        if stop.isRequested { return false }
        if sniffing && source.available >= StreamWaiter.sniffBytes { return false }
        if let change = checkForChange() {
            pendingChange = change
            return false
        }
        onIdle?()
        return stop.wait(for: nil, milliseconds: pollInterval) != .stopped
    }

    var mayRead: Bool { !stop.isRequested && pendingChange == nil }
}

/// The `ByteSource` side of `FollowingSource`: a regular file is always readable, and its end of data means
/// "wait for growth" rather than the end of the capture.
final class FollowWaiter: ByteSourceWaiter {
    unowned let owner: FollowingSource
    var sniffing = true

    init(owner: FollowingSource) { self.owner = owner }

    func waitUntilReadable(_ source: ByteSource) -> Bool { owner.mayRead }

    func waitForGrowth(_ source: ByteSource) -> Bool { owner.waitForGrowth(source, sniffing: sniffing) }
}
