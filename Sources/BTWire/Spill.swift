#if canImport(Glibc)
import Glibc
#endif

/// Bytes set aside until they are read back once a capture is finished (an export's rows, `energy`'s priced
/// links, the text timeline's lines): appended in order, read back by position or copied out whole. In a
/// directory, a temporary file whose name is removed as soon as it is made, so nothing is left behind even when
/// the run is killed; without one, memory (tests, small uses).
public final class Spill: @unchecked Sendable {
    /// Where a spill's bytes are.
    enum Backing {
        case file(UnsafeMutablePointer<FILE>)
        case memory([UInt8])
    }

    private var backing: Backing
    /// Bytes appended so far: the next append's position.
    public private(set) var size: Int64 = 0
    /// The first append or read that failed; nothing more is appended after it.
    public private(set) var failure: String?
    /// Bytes read at once from the file when a read is not within the last ones read (0: only what is asked):
    /// a spill read in order, a small value at a time, then costs a system call per window, not per value.
    /// What was read stays right, as the file is only ever appended to.
    public let readAhead: Int
    /// What each thread reading the file keeps (`ReadLane`): its windows, under a lock of its own. A second thread
    /// (`SecondThread`) reads through a lane of its own, so two threads reading one spill at once (two rules at the
    /// end of an audit, each reading the scans in its own order) neither wait for each other at every value nor
    /// take each other's windows.
    private let lanes: UnsafeMutablePointer<ReadLane>
    /// Bytes were appended since the file's buffer was last written out: a read writes it out first (only
    /// then: `fflush` takes the file's lock even with nothing to write, and reads come a value at a time).
    /// Cleared once written out, under `sharedLock`: appends never overlap reads from another thread.
    @exclusivity(unchecked) private var unflushed = false
    /// Writing out the buffer for the readers and recording `failure`: rare, whichever lane reads.
    private let sharedLock: UnsafeMutablePointer<pthread_mutex_t>

    /// A spill in `directory` (the export's output directory: where the rows are going anyway), or in memory.
    /// `name`: what the temporary file would be called, were its name not removed at once.
    public init(directory: String?, name: String = "rows", readAhead: Int = 0) throws {
        self.readAhead = max(0, readAhead)
        lanes = .allocate(capacity: ReadLane.count)
        for i in 0..<ReadLane.count { (lanes + i).initialize(to: ReadLane()) }
        sharedLock = Self.makeLock()
        guard let directory else {
            backing = .memory([])
            return
        }
        var template = Array((directory + "/.btlens-\(name)-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            let cause = String(cString: strerror(errno))
            Self.release(lanes, sharedLock)
            throw SpillError(path: directory, cause: cause)
        }
        // The open descriptor keeps the bytes; the name is not needed once it is open.
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        guard let handle = fdopen(fd, "w+") else {
            let cause = String(cString: strerror(errno))
            close(fd)
            Self.release(lanes, sharedLock)
            throw SpillError(path: directory, cause: cause)
        }
        backing = .file(handle)
    }

    /// A spill in `directory`, or in memory when none can be made there (`error` says why): what is set aside is
    /// the same either way, only where it waits differs.
    public static func fileOrMemory(in directory: String?, readAhead: Int = 0) -> (spill: Spill, error: SpillError?) {
        do {
            return (try Spill(directory: directory, readAhead: readAhead), nil)
        } catch {
            let failure = error as? SpillError ?? SpillError(path: directory ?? "", cause: "\(error)")
            return ((try? Spill(directory: nil))!, failure)
        }
    }

    /// Whether the bytes are in a file (not held in memory).
    public var isFile: Bool {
        if case .file = backing { return true }
        return false
    }

    deinit {
        if case .file(let handle) = backing { fclose(handle) }
        Self.release(lanes, sharedLock)
    }

    private static func release(_ lanes: UnsafeMutablePointer<ReadLane>, _ sharedLock: UnsafeMutablePointer<pthread_mutex_t>) {
        for i in 0..<ReadLane.count { lanes[i].release() }
        lanes.deinitialize(count: ReadLane.count)
        lanes.deallocate()
        release(sharedLock)
    }

    static func makeLock() -> UnsafeMutablePointer<pthread_mutex_t> {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }

    static func release(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Bytes read ahead by the spills that read their values in order, a few at a time (`readAhead`).
    public static let readAheadWindow = 1 << 15

    /// Appends `text`; returns where it begins.
    @discardableResult
    public func append(_ text: String) -> Int64 {
        var text = text
        return text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `bytes`; returns where they begin.
    @discardableResult
    public func append(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        let at = size
        let count: Int = {
            switch backing {
            case .memory(var buffer):
                backing = .memory([])
                buffer.append(contentsOf: bytes)
                backing = .memory(buffer)
                return bytes.count
            case .file(let handle):
                guard failure == nil else { return 0 }
                unflushed = true
                if fwrite(bytes.baseAddress, 1, bytes.count, handle) != bytes.count {
                    failure = String(cString: strerror(errno))
                }
                return bytes.count
            }
        }()
        size += Int64(count)
        return at
    }

    /// Reads the `buffer.count` bytes at `offset` into `buffer`; false (and `failure` says why) when they are not
    /// all there.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard buffer.count > 0 else { return true }
        switch backing {
        case .memory(let stored):
            guard offset >= 0, Int(offset) + buffer.count <= stored.count else { return false }
            stored.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + buffer.count])) }
            return true
        case .file(let handle):
            // Reads may come from several threads once the writing is done: each lane's by one at a time.
            let lane = lanes + ReadLane.current
            pthread_mutex_lock(lane.pointee.lock)
            defer { pthread_mutex_unlock(lane.pointee.lock) }
            if readAhead > 0 && buffer.count <= readAhead { return readThroughWindow(lane, handle, at: offset, into: buffer) }
            return readFully(handle, buffer.baseAddress!, count: buffer.count, at: offset)
        }
    }

    /// Reads `count` bytes at `offset` into `p`, what is buffered written out first; false (and `failure` says
    /// why) when they are not all there.
    private func readFully(_ handle: UnsafeMutablePointer<FILE>, _ p: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Bool {
        if unflushed { flushForReading(handle) }
        var done = 0
        while done < count {
            let n = pread(fileno(handle), p + done, count - done, off_t(offset) + off_t(done))
            if n <= 0 {
                fail(n < 0 ? String(cString: strerror(errno)) : "spill file ended early")
                return false
            }
            done += n
        }
        return true
    }

    /// Writes out what was appended since the last read, before reading it back.
    private func flushForReading(_ handle: UnsafeMutablePointer<FILE>) {
        pthread_mutex_lock(sharedLock)
        defer { pthread_mutex_unlock(sharedLock) }
        // Cleared only once written out: a reader that sees it clear finds the bytes in the file.
        if unflushed {
            fflush(handle)
            unflushed = false
        }
    }

    /// Records the first failure (made before the lock is taken, while `errno` is the failed call's).
    private func fail(_ cause: String) {
        pthread_mutex_lock(sharedLock)
        defer { pthread_mutex_unlock(sharedLock) }
        if failure == nil { failure = cause }
    }

    /// `read(at:into:)` through the lane's windows: from one that holds the bytes, or after reading a window that
    /// does. A read that starts at or a little past a window's end (values read in order, some skipped) reads
    /// `readAhead` bytes ahead into that window; any other read reads `randomWindow` bytes from where it starts
    /// into the window used longest ago, so that the rest of a value read in pieces (a scan's head, then its
    /// lists) is there too, and a value looked up here and there costs one small read.
    private func readThroughWindow(_ lane: UnsafeMutablePointer<ReadLane>, _ handle: UnsafeMutablePointer<FILE>,
                                   at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        let end = offset + Int64(buffer.count)
        if let i = lane.pointee.window(holding: offset, end) { return lane.pointee.windows[i].copy(offset, into: buffer) }
        guard offset >= 0, end <= size else {
            fail("spill file ended early")
            return false
        }
        // In order: following a window, or where the last read too large for one ended.
        let following = lane.pointee.window(followedBy: offset)
        let sequential = following != nil || offset == lane.pointee.lastEnd
        let wanted: Int
        let from: Int64
        if sequential {
            // A little of what is before the read too: values read in order are often read with one just before
            // them (a link and the one before it of the same peer).
            let behind = buffer.count + readAhead / 8 <= readAhead ? min(offset, Int64(readAhead / 8)) : 0
            from = offset - behind
            wanted = Int(min(Int64(readAhead), size - from))
        } else if buffer.count <= Self.randomWindow {
            from = offset
            wanted = Int(min(Int64(min(readAhead, Self.randomWindow)), size - from))
        } else {
            lane.pointee.lastEnd = end
            return readFully(handle, buffer.baseAddress!, count: buffer.count, at: offset)
        }
        let slot = following ?? lane.pointee.freeSlot(windowBytes: readAhead)
        lane.pointee.use(slot)
        lane.pointee.windows[slot].start = from
        lane.pointee.windows[slot].count = readFully(handle, lane.pointee.windows[slot].bytes, count: wanted, at: from) ? wanted : 0
        guard lane.pointee.windows[slot].count > 0 else { return false }
        return lane.pointee.windows[slot].copy(offset, into: buffer)
    }

    /// Windows a lane keeps (`readAhead` bytes each, made as they are first needed).
    static let windowSlots = 8
    /// Bytes read for a value looked up away from every window: a few values' worth, one page.
    static let randomWindow = 4096

    /// What one thread reading a spill keeps: stretches of the file held in memory (`ReadWindow`), at most
    /// `windowSlots`, each `readAhead` bytes (allocated on first use), so that values read in order from several
    /// places at once (a report's findings in time order, each rule's own in order in the file) each keep a window
    /// of their own. Used under `lock` only, so not checked for exclusive access at every use (nor kept in an
    /// array, whose every use is).
    struct ReadLane {
        /// Lanes per spill: the thread that made it and the threads it hands work to, and one second thread.
        static let count = 2

        let lock = Spill.makeLock()
        var windows: UnsafeMutablePointer<ReadWindow> = ReadLane.noWindows
        var windowsMade = 0
        /// The window the last read was served from, tried first.
        var lastWindow = 0
        /// Counts reads, to tell which window was used longest ago.
        var clock: UInt64 = 0
        /// Where the last read too large for a window ended: a read starting there reads a window ahead.
        var lastEnd: Int64 = -1

        /// `windows` before the first is made (never read: `windowsMade` is 0).
        private static var noWindows: UnsafeMutablePointer<ReadWindow> {
            UnsafeMutablePointer(bitPattern: MemoryLayout<ReadWindow>.alignment)!
        }

        /// The lane of the calling thread: the second one's on a `SecondThread`, else the first.
        static var current: Int { SecondThread.isCurrent ? 1 : 0 }

        /// The window holding `from..<to`, marked used.
        mutating func window(holding from: Int64, _ to: Int64) -> Int? {
            if lastWindow < windowsMade, windows[lastWindow].holds(from, to) {
                use(lastWindow)
                return lastWindow
            }
            for i in 0..<windowsMade where windows[i].holds(from, to) {
                use(i)
                return i
            }
            return nil
        }

        /// A window that `offset` is at or not far past the end of (by the window's own length: a small window
        /// read for a value looked up is not followed by a full one unless the value runs on).
        func window(followedBy offset: Int64) -> Int? {
            (0..<windowsMade).first { offset >= windows[$0].end && offset < windows[$0].end + Int64(max(windows[$0].count, 1)) }
        }

        mutating func use(_ slot: Int) {
            clock &+= 1
            lastWindow = slot
            windows[slot].used = clock
        }

        /// A window to read into: a new one while there are fewer than `windowSlots`, else the one used longest ago.
        mutating func freeSlot(windowBytes: Int) -> Int {
            if windowsMade == 0 { windows = .allocate(capacity: Spill.windowSlots) }
            if windowsMade < Spill.windowSlots {
                (windows + windowsMade).initialize(to: ReadWindow(bytes: .allocate(byteCount: windowBytes, alignment: 16)))
                windowsMade += 1
                return windowsMade - 1
            }
            var oldest = 0
            for i in 1..<windowsMade where windows[i].used < windows[oldest].used { oldest = i }
            return oldest
        }

        func release() {
            if windowsMade > 0 {
                for i in 0..<windowsMade { windows[i].bytes.deallocate() }
                windows.deinitialize(count: windowsMade)
                windows.deallocate()
            }
            Spill.release(lock)
        }
    }

    /// `count` bytes of the file from `start`, held in `bytes` (`readAhead` long).
    struct ReadWindow {
        let bytes: UnsafeMutableRawPointer
        var start: Int64 = 0
        var count = 0
        var used: UInt64 = 0

        var end: Int64 { start + Int64(count) }

        func holds(_ from: Int64, _ to: Int64) -> Bool { from >= start && to <= end }

        func copy(_ offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
            buffer.baseAddress!.copyMemory(from: bytes + Int(offset - start), byteCount: buffer.count)
            return true
        }
    }

    /// Appends a value of a plain type (no reference in it) as its bytes, padded to its stride; returns where
    /// it begins.
    @discardableResult @inlinable
    public func append<T>(plain value: T) -> Int64 {
        precondition(_isPOD(T.self), "only plain values are set aside as bytes")
        return withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { p in
            let bytes = UnsafeMutableRawBufferPointer(p)
            // Zeroed first: the padding is written too, and a spill's bytes are the same from run to run.
            _ = memset(bytes.baseAddress!, 0, bytes.count)
            p.baseAddress!.initialize(to: value)
            return append(UnsafeRawBufferPointer(bytes))
        }
    }

    /// The plain value appended at `offset` (`append(plain:)`); zeros when it cannot be read back (`failure`
    /// says why): a wrong value, never a crash.
    @inlinable
    public func read<T>(plain type: T.Type, at offset: Int64) -> T {
        precondition(_isPOD(T.self), "only plain values are set aside as bytes")
        return withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { p in
            let bytes = UnsafeMutableRawBufferPointer(p)
            if !read(at: offset, into: bytes) { _ = memset(bytes.baseAddress!, 0, bytes.count) }
            return p[0]
        }
    }

    /// The `count` plain values appended one after the other at `offset`; none when they cannot be read back
    /// (`failure` says why).
    @inlinable
    public func read<T>(plain type: T.Type, count: Int, at offset: Int64) -> [T] {
        precondition(_isPOD(T.self), "only plain values are set aside as bytes")
        let count = max(0, count)
        return [T](unsafeUninitializedCapacity: count) { buffer, initialised in
            initialised = read(at: offset, into: UnsafeMutableRawBufferPointer(buffer)) ? count : 0
        }
    }

    /// Appends the values of a plain type one after the other; returns where they begin.
    @discardableResult @inlinable
    public func append<T>(plain values: [T]) -> Int64 {
        precondition(_isPOD(T.self), "only plain values are set aside as bytes")
        return values.withUnsafeBytes { append($0) }
    }

    /// Reads what was appended from `offset` on, one value or list after another, in the order written.
    public func cursor(at offset: Int64) -> Cursor { Cursor(spill: self, offset: offset) }

    /// Where the next value is read (`Spill.cursor(at:)`); each read moves past what it read.
    /// Its reads are inlinable, so each is made for its type where it is used: a generic read looked the array
    /// type up at run time on every value.
    public struct Cursor {
        public let spill: Spill
        @usableFromInline var position: Int64
        public var offset: Int64 { position }

        @usableFromInline init(spill: Spill, offset: Int64) {
            self.spill = spill
            position = offset
        }

        /// The plain value here.
        @inlinable
        public mutating func next<T>(_ type: T.Type) -> T {
            defer { position += Int64(MemoryLayout<T>.stride) }
            return spill.read(plain: type, at: position)
        }

        /// The `count` plain values here (none for a count below 1).
        @inlinable
        public mutating func next<T>(_ type: T.Type, count: Int) -> [T] {
            let count = max(0, count)
            defer { position += Int64(count) * Int64(MemoryLayout<T>.stride) }
            return spill.read(plain: type, count: count, at: position)
        }

        /// The `count` bytes here as text.
        public mutating func text(count: Int) -> String {
            let count = max(0, count)
            defer { position += Int64(count) }
            return spill.read(at: position, count: count)
        }

        /// Moves past `count` plain values of `type` without reading them.
        @inlinable
        public mutating func skip<T>(_ type: T.Type, count: Int) {
            position += Int64(max(0, count)) * Int64(MemoryLayout<T>.stride)
        }
    }

    /// Writes out what is buffered, so a full disk shows in `failure` before the bytes are needed.
    public func flush() {
        guard case .file(let handle) = backing else { return }
        pthread_mutex_lock(sharedLock)
        defer { pthread_mutex_unlock(sharedLock) }
        guard failure == nil else { return }
        unflushed = false
        if fflush(handle) != 0 { failure = String(cString: strerror(errno)) }
    }

    /// The `count` bytes at `offset` as text (empty when they cannot be read back: `failure` says why).
    public func read(at offset: Int64, count: Int) -> String {
        guard count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count) { out in
            read(at: offset, into: UnsafeMutableRawBufferPointer(out)) ? count : 0
        }
    }

    /// The `count` bytes of text at `offset` handed to `body` a piece of at most about `chunk` bytes at a time, each
    /// piece ending between characters (text read back whole would cost its size in memory at once).
    public func readText(at offset: Int64, count: Int, chunk: Int = Spill.chunk, _ body: (String) -> Void) {
        var at = offset
        let end = offset + Int64(max(0, count))
        // No larger than the text: most objects are a few kilobytes, and a buffer is made per call.
        var bytes = [UInt8](repeating: 0, count: max(4, min(chunk, count)))
        while at < end {
            var n = Int(min(Int64(bytes.count), end - at))
            guard bytes.withUnsafeMutableBytes({ read(at: at, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<n])) }) else { return }
            // A piece that would end inside a character ends before it instead.
            if at + Int64(n) < end {
                var lead = n - 1
                while lead > 0 && bytes[lead] & 0xC0 == 0x80 { lead -= 1 }  // continuation bytes: 0b10xxxxxx
                if lead > 0 && lead + Self.utf8Length(lead: bytes[lead]) > n { n = lead }
            }
            body(String(decoding: bytes[0..<n], as: UTF8.self))
            at += Int64(n)
        }
    }

    /// The bytes of the UTF-8 character that `lead` begins (1 for a byte that begins none).
    static func utf8Length(lead: UInt8) -> Int {
        switch lead {
        case 0xF0...: 4
        case 0xE0...: 3
        case 0xC0...: 2
        default: 1
        }
    }

    /// Hands every byte appended so far to `body`, in chunks of at most `chunk` bytes, in order.
    public func copy(chunk: Int = Spill.chunk, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let chunk = max(1, chunk)
        switch backing {
        case .memory(let buffer):
            try buffer.withUnsafeBytes { all in
                var at = 0
                while at < all.count {
                    try body(UnsafeRawBufferPointer(rebasing: all[at..<min(at + chunk, all.count)]))
                    at += chunk
                }
            }
        case .file(let handle):
            fflush(handle)
            var bytes = [UInt8](repeating: 0, count: chunk)
            var offset: Int64 = 0
            while offset < size {
                let n = bytes.withUnsafeMutableBytes { pread(fileno(handle), $0.baseAddress, $0.count, off_t(offset)) }
                guard n > 0 else {
                    throw SpillError(path: "spill file", cause: n < 0 ? String(cString: strerror(errno)) : "ended early")
                }
                try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                offset += Int64(n)
            }
        }
    }

    /// Bytes copied at a time.
    public static let chunk = 1 << 16
}

public struct SpillError: Error, CustomStringConvertible {
    public var path: String
    public var cause: String
    public var description: String { "\(path): cannot set rows aside: \(cause)" }

    public init(path: String, cause: String) {
        self.path = path
        self.cause = cause
    }
}
