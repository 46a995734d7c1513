#if canImport(Glibc)
import Glibc
import CMalloc
#endif
import BTWire
import BTCapture
import BTDecode

/// Tracks links and scans (`ConnectionTracker`: connections, ATT sessions, GATT databases; `ScanTracker`) on a
/// second thread while the reading thread reads and decodes records and tracks the rest (commands, own
/// advertising, the advertiser table), so a capture is tracked in little more than the time it takes to
/// decode, on a machine with two cores.
///
/// The reading thread copies what these trackers read of each record — the record's place, an event's or
/// command's parameters, an L2CAP PDU's channel and the bytes tracked on it, each advertising report's sender
/// and kind (8 bytes, not the report) — into chunks of a few fixed buffers; the link thread applies them in
/// order. Decoded frames borrow the reader's buffer, so bytes must be copied, but only those: a bulk-data PDU
/// (audio, RFCOMM) crosses as its header alone. Chunks cross between the threads under a mutex, one lock per
/// chunk (128 KiB of messages), a thread that waits is woken for several chunks at once, and chunks are reused,
/// so memory is the chunks whatever the capture's size. The link tracker never sees anything the one-thread
/// path would not give it, in the same order, so both give the same model.
final class LinkFeed: @unchecked Sendable {
    /// What a message asks of the link tracker.
    enum Kind: UInt8 {
        case controllerReset, command, commandRefused, event, leConnectionComplete, leMeta, acl, aclWithoutPDU
        case advertisingSightings, scanTimeout, scanCommandAccepted
    }

    /// A message's fixed part; its bytes follow, padded to 8 bytes. Plain values only, so a load copies it.
    struct Header {
        var at: RecordRef
        /// Bytes of the first block (parameters, or an L2CAP payload) after the header.
        var length: UInt32
        /// Bytes of an ATT PDU after the first block; `noATT` when there is none.
        var attLength: UInt32
        var bearer: UInt32
        /// Opcode, event code or connection handle.
        var code: UInt16
        var kind: Kind
        /// LE subevent, or the status of a refused command.
        var byte: UInt8
        var direction: Direction
        var channel: L2CAPChannelProtocol
        /// LE Connection Complete: own advertising on when the link came up (bit 1).
        var flags: UInt8

        static let noATT = UInt32.max
    }

    struct Chunk {
        var base: UnsafeMutableRawPointer
        var capacity: Int
        var used = 0
    }

    static let headerBytes = (MemoryLayout<Header>.stride + 7) & ~7
    static let chunkBytes = 1 << 17
    /// Chunks in flight: the reading thread runs at most this far ahead of the link thread.
    static let chunkCount = 8
    /// A thread that had to wait is woken when this many chunks are ready for it, not at each one: the two
    /// threads run at about the same speed, and waking per chunk cost a futex call and a context switch each.
    static let wakeBatch = chunkCount / 2

    /// Whether tracking links on a second thread can pay: only with a second processor to run it.
    static var isWorthwhile: Bool { sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1 }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let filled: UnsafeMutablePointer<pthread_cond_t>
    private let emptied: UnsafeMutablePointer<pthread_cond_t>
    // Under `mutex`.
    private var full: [Chunk] = []
    private var free: [Chunk] = []
    private var allocated = 0
    private var ended = false
    private var linkWaiting = false
    private var readerWaiting = false
    // The reading thread's.
    private var current: Chunk
    // The link thread's until `finish` joins it.
    private let trackers: LinkTrackers
    private var thread = pthread_t()

    init(links: ConnectionTracker, scans: ScanTracker) {
        trackers = LinkTrackers(links: links, scans: scans)
        mutex = .allocate(capacity: 1)
        filled = .allocate(capacity: 1)
        emptied = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(filled, nil)
        pthread_cond_init(emptied, nil)
        current = Chunk(base: .allocate(byteCount: Self.chunkBytes, alignment: 16), capacity: Self.chunkBytes)
        allocated = 1
        // The link thread allocates the model (connections, timelines). glibc would give it an arena of its own,
        // which grows a page at a time with an mprotect call each (tens of thousands for a large capture); the
        // main arena grows by brk, in steps of its top padding.
        _ = mallopt(M_ARENA_MAX, 1)
        let started = pthread_create(&thread, nil, { context in
            let feed = Unmanaged<LinkFeed>.fromOpaque(context!).takeUnretainedValue()
            feed.run()
            return nil
        }, Unmanaged.passUnretained(self).toOpaque())
        precondition(started == 0, "pthread_create failed: \(started)")
    }

    deinit {
        for chunk in full + free { chunk.base.deallocate() }
        current.base.deallocate()
        pthread_cond_destroy(filled)
        pthread_cond_destroy(emptied)
        pthread_mutex_destroy(mutex)
        filled.deallocate()
        emptied.deallocate()
        mutex.deallocate()
    }

    // MARK: - Reading thread

    @inline(__always)
    func send(_ header: Header, _ first: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
              att: UnsafeRawBufferPointer? = nil) {
        let size = Self.headerBytes + first.count + (att?.count ?? 0)
        let padded = (size + 7) & ~7
        if current.used + padded > current.capacity { rotate(atLeast: padded) }
        let p = current.base + current.used
        var h = header
        h.length = UInt32(truncatingIfNeeded: first.count)
        h.attLength = att.map { UInt32(truncatingIfNeeded: $0.count) } ?? Header.noATT
        p.storeBytes(of: h, as: Header.self)
        if let source = first.baseAddress, !first.isEmpty {
            (p + Self.headerBytes).copyMemory(from: source, byteCount: first.count)
        }
        if let att, let source = att.baseAddress, !att.isEmpty {
            (p + Self.headerBytes + first.count).copyMemory(from: source, byteCount: att.count)
        }
        current.used += padded
    }

    @inline(__always)
    func message(_ kind: Kind, at: RecordRef, code: UInt16 = 0, byte: UInt8 = 0) -> Header {
        Header(at: at, length: 0, attLength: Header.noATT, bearer: 0, code: code, kind: kind, byte: byte,
               direction: .unknown, channel: .unknownFixed, flags: 0)
    }

    /// An advertising event as the sightings the scan tracker reads (`PackedSighting`): 8 bytes a report
    /// instead of the event's tens. Nothing is sent for an event without a report that fits, as the scan
    /// tracker would do nothing with it. Returns the reports that fit.
    @inline(__always)
    func sendSightings(at: RecordRef, _ reports: inout AdvertisingReportIterator) -> Int {
        // A report takes at least 10 bytes of an event of at most 255, so 8 bytes for each declared report is
        // room enough.
        let room = Self.headerBytes + 8 * reports.declaredCount
        if current.used + room > current.capacity { rotate(atLeast: room) }
        let p = current.base + current.used
        var n = 0
        while let sighting = reports.nextPacked() {
            (p + Self.headerBytes + 8 * n).storeBytes(of: sighting.rawValue, as: UInt64.self)
            n += 1
        }
        guard n > 0 else { return 0 }
        var h = message(.advertisingSightings, at: at)
        h.length = UInt32(truncatingIfNeeded: 8 * n)
        p.storeBytes(of: h, as: Header.self)
        current.used += Self.headerBytes + 8 * n
        return n
    }

    /// Hands the current chunk over and takes an empty one of at least `bytes` (a PDU of up to 64 KiB fits the
    /// usual chunk; only a larger one gets a chunk of its own).
    @inline(never)
    private func rotate(atLeast bytes: Int) {
        pthread_mutex_lock(mutex)
        full.append(current)
        if linkWaiting && full.count >= Self.wakeBatch { pthread_cond_signal(filled) }
        var next: Chunk?
        while next == nil {
            if let i = free.firstIndex(where: { $0.capacity >= bytes }) {
                next = free.remove(at: i)
            } else if allocated < Self.chunkCount || bytes > Self.chunkBytes {
                allocated += 1
                next = Chunk(base: .allocate(byteCount: max(bytes, Self.chunkBytes), alignment: 16),
                             capacity: max(bytes, Self.chunkBytes))
            } else {
                // Every chunk is full or being applied: at least `chunkCount - 1` are full, so the link thread
                // is not waiting.
                readerWaiting = true
                while free.count < Self.wakeBatch && allocated >= Self.chunkCount { pthread_cond_wait(emptied, mutex) }
                readerWaiting = false
            }
        }
        pthread_mutex_unlock(mutex)
        current = next!
        current.used = 0
    }

    /// Sends what is left, waits for the link thread to apply it, and returns the trackers.
    func finish() -> (links: ConnectionTracker, scans: ScanTracker) {
        pthread_mutex_lock(mutex)
        full.append(current)
        current = Chunk(base: .allocate(byteCount: 16, alignment: 16), capacity: 0)  // a placeholder: nothing more is sent
        ended = true
        pthread_cond_signal(filled)
        pthread_mutex_unlock(mutex)
        pthread_join(thread, nil)
        return (trackers.links, trackers.scans)
    }

    // MARK: - Link thread

    private func run() {
        let trackers = self.trackers
        while let chunk = nextFull() {
            var offset = 0
            while offset < chunk.used {
                let p = UnsafeRawPointer(chunk.base + offset)
                let h = p.load(as: Header.self)
                let firstCount = Int(h.length)
                let first = UnsafeRawBufferPointer(start: p + Self.headerBytes, count: firstCount)
                var att: UnsafeRawBufferPointer?
                var size = Self.headerBytes + firstCount
                if h.attLength != Header.noATT {
                    att = UnsafeRawBufferPointer(start: p + size, count: Int(h.attLength))
                    size += Int(h.attLength)
                }
                trackers.apply(h, first, att)
                offset += (size + 7) & ~7
            }
            recycle(chunk)
        }
    }

    private func nextFull() -> Chunk? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if full.isEmpty && !ended {
            // `wakeBatch` < `chunkCount`, so the reading thread fills that many before it can run out of chunks.
            linkWaiting = true
            while full.count < Self.wakeBatch && !ended { pthread_cond_wait(filled, mutex) }
            linkWaiting = false
        }
        return full.isEmpty ? nil : full.removeFirst()
    }

    private func recycle(_ chunk: Chunk) {
        pthread_mutex_lock(mutex)
        if chunk.capacity > Self.chunkBytes {
            chunk.base.deallocate()  // a one-off chunk for an oversized PDU
            allocated -= 1
        } else {
            free.append(chunk)
        }
        if readerWaiting && (free.count >= Self.wakeBatch || allocated < Self.chunkCount) {
            pthread_cond_signal(emptied)
        }
        pthread_mutex_unlock(mutex)
    }
}

/// The link thread's trackers, in an object of their own: the reading thread writes `LinkFeed`'s fill level at
/// every message, and trackers stored beside it would share its cache lines, each message then moving a line
/// from one processor to the other (false sharing).
private final class LinkTrackers {
    var links: ConnectionTracker
    var scans: ScanTracker

    init(links: ConnectionTracker, scans: ScanTracker) {
        self.links = links
        self.scans = scans
    }

    @inline(__always)
    func apply(_ h: LinkFeed.Header, _ first: UnsafeRawBufferPointer, _ att: UnsafeRawBufferPointer?) {
        switch h.kind {
        case .acl:
            links.acl(handle: h.code, pdu: LinkPDU(channel: h.channel, bearer: h.bearer, payload: first, attPayload: att),
                      direction: h.direction, at: h.at)
        case .aclWithoutPDU:
            links.acl(handle: h.code, pdu: nil, direction: h.direction, at: h.at)
        case .advertisingSightings:
            var sightings = PackedSightings(first)
            _ = scans.advertisingSightings(&sightings, at: h.at)
        case .controllerReset:
            links.controllerReset(at: h.at)
            scans.controllerReset(at: h.at)
        case .command:
            links.command(opcode: HCIOpcode(rawValue: h.code), parameters: first, at: h.at)
        case .commandRefused:
            links.commandAnswered(opcode: HCIOpcode(rawValue: h.code), status: HCIStatus(rawValue: h.byte), at: h.at)
        case .event:
            links.event(code: HCIEventCode(rawValue: UInt8(truncatingIfNeeded: h.code)), parameters: first, at: h.at)
        case .leConnectionComplete:
            if let complete = LEConnectionComplete(subevent: LESubevent(rawValue: h.byte), first) {
                _ = links.leConnectionComplete(complete, at: h.at, scanning: scans.isScanning(controller: h.at.controller),
                                               advertising: h.flags & 2 != 0)
                if complete.status == .success {
                    scans.connectionCameUp(controller: h.at.controller, handle: complete.handle, at: h.at)
                }
            }
        case .scanTimeout:
            scans.scanTimeout(at: h.at)
        case .scanCommandAccepted:
            let command = CommandCorrelator.Pending(opcode: HCIOpcode(rawValue: h.code), at: h.at, parameters: Array(first))
            scans.commandCompleted(command, status: .success, at: h.at)
        case .leMeta:
            links.leMeta(LESubevent(rawValue: h.byte), parameters: first, at: h.at)
        }
    }
}
