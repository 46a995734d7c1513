#if canImport(Glibc)
import Glibc
import CMalloc
#endif
import BTWire
import BTCapture
import BTDecode

/// Decodes L2CAP (`L2CAPDecoder`), tracks links (`ConnectionTracker`: connections, ATT sessions, GATT databases)
/// and tallies scan reports per device (`DeviceTally`) on a second thread, while the reading thread reads
/// records, decodes HCI and tracks the rest (commands, scan sessions, own advertising, the advertiser table), so
/// a capture is tracked in about the time it takes to decode, on a machine with two cores.
///
/// The reading thread copies what the link thread reads of each record — the record's place, an event's or
/// command's parameters, an ACL packet's header fields and data — into chunks of a few fixed buffers; the link
/// thread applies them in order. Decoded frames borrow the reader's buffer, so bytes must be copied, but only
/// those. Advertising reports, most records of a scanning capture, cross as their senders alone (8 bytes each),
/// batched hundreds to a message: the tally needs neither their records nor their order among other messages,
/// only which session they belong to, and a session's end is a message of its own after its last batch.
///
/// Chunks cross between the threads under a mutex, one lock per chunk (128 KiB of messages), a thread that
/// waits is woken for several chunks at once, and chunks are reused, so memory is the chunks whatever the
/// capture's size. The link thread sees the ACL packets and link events in the order the one-thread path
/// decodes them, and the issues its L2CAP decoder finds are merged into the reading thread's by record
/// (`IssueLog.merge`), so both paths give the same model and the same issues.
final class LinkFeed: @unchecked Sendable {
    /// What a message asks of the link tracker.
    enum Kind: UInt8 {
        case controllerReset, controllerAdded, command, commandRefused, event, leConnectionComplete, leMeta
        /// An ACL packet's data: `code` the handle, `byte` the packet boundary and broadcast flags, `bearer` the
        /// declared length, `flags` bit 0 when the capture cut the packet short.
        case aclData
        /// Senders (`DeviceKey`) of advertising reports received by controller `code`.
        case deviceSightings
        /// A scan session of controller `code` ended (its index in the bytes, an `Int`, then the index of an
        /// `ScanPiece`'s raw value): the controller's tally is kept for it and emptied.
        case deviceTallyEnd
        /// The record of the next message, whole (`RecordRef`): sent when its place does not fit `Wire`'s
        /// differences (a new controller, a gap of seconds, time going backwards).
        case place
        /// A scan boundary of controller `code` (`ScanBoundaries`): its time in nanoseconds, an `Int64`.
        case scanBoundary
        /// The capture's first air-sniffer record: no link is judged early from here on
        /// (`ConnectionTracker.airLinksJoin`).
        case airLinksJoin

        /// Whether the message is about a record (`Header.at`), so its place crosses. Asked at every message.
        @inline(__always)
        var hasRecord: Bool {
            self != .deviceSightings && self != .deviceTallyEnd && self != .place && self != .scanBoundary && self != .airLinksJoin
        }
    }

    /// A message as the reading thread builds it and the link thread applies it.
    struct Header {
        var at: RecordRef
        /// Bytes (parameters, ACL data or senders) after the header.
        var length: UInt32
        /// ACL: the declared length.
        var bearer: UInt32
        /// Opcode, event code, connection handle or controller.
        var code: UInt16
        var kind: Kind
        /// LE subevent, or the status of a refused command.
        var byte: UInt8
        var direction: Direction
        /// LE Connection Complete: scanning (bit 0) and own advertising (bit 1) on when the link came up.
        var flags: UInt8
    }

    /// A message's fixed part as it crosses, 24 bytes; its bytes follow, padded to 8 bytes. The record's place is
    /// given as differences from the previous message's (most messages are about the next record or so, a few
    /// milliseconds later), as headers are most of the bytes that cross. Plain values only, so a load copies it.
    struct Wire {
        var offsetDelta: UInt32
        /// Nanoseconds after the previous message's record.
        var timestampDelta: UInt32
        var recordLength: UInt32
        var numberDelta: UInt16
        var length: UInt16
        var code: UInt16
        var bearer: UInt16
        var kind: Kind
        var byte: UInt8
        var direction: Direction
        var flags: UInt8
    }

    struct Chunk {
        var base: UnsafeMutableRawPointer
        var capacity: Int
        var used = 0
    }

    static let headerBytes = (MemoryLayout<Wire>.stride + 7) & ~7
    static let chunkBytes = 1 << 17
    /// Chunks in flight: the reading thread runs at most this far ahead of the link thread.
    static let chunkCount = 8
    /// A thread that had to wait is woken when this many chunks are ready for it, not at each one: the two
    /// threads run at about the same speed, and waking per chunk cost a futex call and a context switch each.
    static let wakeBatch = chunkCount / 2
    /// `Header.at` of messages about no record.
    static let noRecord = RecordRef(number: 0, offset: 0, timestamp: Timestamp(nanoseconds: 0), controller: 0)


    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let filled: UnsafeMutablePointer<pthread_cond_t>
    private let emptied: UnsafeMutablePointer<pthread_cond_t>
    // Under `mutex`.
    @exclusivity(unchecked) private var full: [Chunk] = []
    @exclusivity(unchecked) private var free: [Chunk] = []
    @exclusivity(unchecked) private var allocated = 0
    @exclusivity(unchecked) private var ended = false
    @exclusivity(unchecked) private var linkWaiting = false
    @exclusivity(unchecked) private var readerWaiting = false
    // The reading thread's.
    @exclusivity(unchecked) private var current: Chunk
    /// The record of the last message with one, as the link thread will have it (`Wire`).
    @exclusivity(unchecked) private var lastPlace = LinkFeed.noRecord
    /// Senders not sent yet. The scan tracker adds to it through this pointer (`ScanTracker.remoteTallies`).
    let sightings: UnsafeMutablePointer<SightingBatch>
    // The link thread's until `finish` joins it.
    private let trackers: LinkTrackers
    @exclusivity(unchecked) private var thread = pthread_t()

    init(links: ConnectionTracker) {
        trackers = LinkTrackers(links: links)
        sightings = .allocate(capacity: 1)
        mutex = .allocate(capacity: 1)
        filled = .allocate(capacity: 1)
        emptied = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(filled, nil)
        pthread_cond_init(emptied, nil)
        current = Chunk(base: .allocate(byteCount: Self.chunkBytes, alignment: 16), capacity: Self.chunkBytes)
        allocated = 1
        sightings.initialize(to: SightingBatch(feed: Unmanaged.passUnretained(self)))
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
        sightings.pointee.keys.deallocate()
        sightings.deinitialize(count: 1)
        sightings.deallocate()
        pthread_cond_destroy(filled)
        pthread_cond_destroy(emptied)
        pthread_mutex_destroy(mutex)
        filled.deallocate()
        emptied.deallocate()
        mutex.deallocate()
    }

    // MARK: - Reading thread

    /// Sends a message. `bytes` are less than 64 KiB (HCI parameters, ACL data, a batch of senders).
    @inline(__always)
    func send(_ header: Header, _ bytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) {
        assert(bytes.count <= UInt16.max, "an HCI packet's body has a 16-bit length")
        var w = Wire(offsetDelta: 0, timestampDelta: 0, recordLength: 0, numberDelta: 0,
                     length: UInt16(truncatingIfNeeded: bytes.count), code: header.code,
                     bearer: UInt16(truncatingIfNeeded: header.bearer), kind: header.kind, byte: header.byte,
                     direction: header.direction, flags: header.flags)
        if header.kind.hasRecord {
            let at = header.at
            var numberDelta = at.number &- lastPlace.number
            var offsetDelta = at.offset &- lastPlace.offset
            var timestampDelta = at.timestamp.nanoseconds &- lastPlace.timestamp.nanoseconds
            if _slowPath(UInt(bitPattern: numberDelta) > UInt16.max || UInt64(bitPattern: offsetDelta) > UInt32.max
                            || UInt64(bitPattern: timestampDelta) > UInt32.max || at.controller != lastPlace.controller) {
                sendPlace(at)
                (numberDelta, offsetDelta, timestampDelta) = (0, 0, 0)
            }
            lastPlace = at
            w.numberDelta = UInt16(truncatingIfNeeded: numberDelta)
            w.offsetDelta = UInt32(truncatingIfNeeded: offsetDelta)
            w.timestampDelta = UInt32(truncatingIfNeeded: timestampDelta)
            w.recordLength = UInt32(truncatingIfNeeded: at.length)
        }
        let padded = (Self.headerBytes + bytes.count + 7) & ~7
        if current.used + padded > current.capacity { rotate(atLeast: padded) }
        let p = current.base + current.used
        p.storeBytes(of: w, as: Wire.self)
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (p + Self.headerBytes).copyMemory(from: source, byteCount: bytes.count)
        }
        current.used += padded
    }

    /// The next message's record, whole: the link thread takes its place from here.
    @inline(never)
    private func sendPlace(_ at: RecordRef) {
        withUnsafeBytes(of: at) { send(message(.place, at: at), $0) }
    }

    /// An ACL packet, for the link thread's L2CAP decoder.
    @inline(__always)
    func send(_ acl: ACLPacket, cutShort: Bool, direction: Direction, at: RecordRef) {
        var m = message(.aclData, at: at, code: acl.handle, byte: acl.packetBoundary.rawValue | acl.broadcast << 2)
        m.bearer = UInt32(truncatingIfNeeded: acl.declaredLength)
        m.direction = direction
        m.flags = cutShort ? 1 : 0
        send(m, acl.data)
    }

    @inline(__always)
    func message(_ kind: Kind, at: RecordRef, code: UInt16 = 0, byte: UInt8 = 0) -> Header {
        Header(at: at, length: 0, bearer: 0, code: code, kind: kind, byte: byte, direction: .unknown, flags: 0)
    }

    /// Sends the batch's senders, if any, as one message.
    func flush(_ batch: inout SightingBatch) {
        guard batch.count > 0 else { return }
        send(message(.deviceSightings, at: Self.noRecord, code: batch.controller),
             UnsafeRawBufferPointer(start: batch.keys, count: 8 * batch.count))
        batch.count = 0
    }

    /// The scan session `session` of `controller` ended (or the capture did): the link thread keeps the
    /// session's device counts, returned by `finish`, trimmed as `piece` allows (`ScanDeviceKeeping`), and
    /// starts the controller's next tally empty.
    func endTally(controller: UInt16, session: Int, piece: ScanPiece) {
        flush(&sightings.pointee)
        withUnsafeBytes(of: (session, piece.rawValue)) { send(message(.deviceTallyEnd, at: Self.noRecord, code: controller), $0) }
    }

    /// The capture's first air-sniffer record, for the link tracker (`ConnectionTracker.airLinksJoin`).
    func sendAirLinksJoin() {
        send(message(.airLinksJoin, at: Self.noRecord))
    }

    /// A scan boundary (`ScanTracker.boundaries`) for the link tracker.
    func sendScanBoundary(controller: UInt16, _ t: Int64) {
        withUnsafeBytes(of: t) { send(message(.scanBoundary, at: Self.noRecord, code: controller), $0) }
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

    /// Sends what is left, waits for the link thread to apply it, and returns the link tracker, the device
    /// counts of each session `endTally` was given and the issues the link thread's L2CAP decoder found.
    func finish() -> (links: ConnectionTracker, deviceTallies: SetAsideArray<SessionDeviceCounts>,
                      issues: IssueLog) {
        flush(&sightings.pointee)
        pthread_mutex_lock(mutex)
        full.append(current)
        current = Chunk(base: .allocate(byteCount: 16, alignment: 16), capacity: 0)  // a placeholder: nothing more is sent
        ended = true
        pthread_cond_signal(filled)
        pthread_mutex_unlock(mutex)
        pthread_join(thread, nil)
        return (trackers.links, trackers.deviceTallies, trackers.issues)
    }

    // MARK: - Link thread

    private func run() {
        let trackers = self.trackers
        var place = Self.noRecord
        while let chunk = nextFull() {
            var offset = 0
            while offset < chunk.used {
                let p = UnsafeRawPointer(chunk.base + offset)
                let w = p.load(as: Wire.self)
                let bytes = UnsafeRawBufferPointer(start: p + Self.headerBytes, count: Int(w.length))
                offset += (Self.headerBytes + bytes.count + 7) & ~7
                if w.kind == .place {
                    place = bytes.loadUnaligned(as: RecordRef.self)
                    continue
                }
                if w.kind.hasRecord {
                    // Wrapping: the reading thread checked that each difference fits, so no sum overflows.
                    place = RecordRef(number: place.number &+ Int(w.numberDelta), offset: place.offset &+ Int64(w.offsetDelta),
                                      timestamp: Timestamp(nanoseconds: place.timestamp.nanoseconds &+ Int64(w.timestampDelta)),
                                      controller: place.controller, length: Int(w.recordLength))
                }
                trackers.apply(Header(at: place, length: UInt32(w.length), bearer: UInt32(w.bearer), code: w.code,
                                      kind: w.kind, byte: w.byte, direction: w.direction, flags: w.flags), bytes)
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

/// Advertising reports' senders on their way to the link thread's tally, one controller's at a time. The scan
/// tracker reaches it through a pointer, so adding a sender is a store and an increment, with no call.
struct SightingBatch {
    static let capacity = 512
    let keys = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
    var count = 0
    var controller: UInt16 = 0
    /// Borrowed: the feed owns the batch.
    let feed: Unmanaged<LinkFeed>

    /// Before an event's senders: a batch holds one controller's.
    @inline(__always)
    mutating func begin(controller c: UInt16) {
        if c != controller {
            flush()
            controller = c
        }
    }

    @inline(__always)
    mutating func add(_ key: DeviceKey) {
        if count == Self.capacity { flush() }
        keys[count] = key.rawValue
        count &+= 1
    }

    @inline(never)
    mutating func flush() {
        feed._withUnsafeGuaranteedRef { $0.flush(&self) }
    }
}

/// The link thread's trackers, in an object of their own: the reading thread writes `LinkFeed`'s fill level at
/// every message, and trackers stored beside it would share its cache lines, each message then moving a line
/// from one processor to the other (false sharing).
private final class LinkTrackers {
    @exclusivity(unchecked) var links: ConnectionTracker
    @exclusivity(unchecked) var l2cap = L2CAPDecoder()
    let issues = IssueLog()
    /// The open session's tally per controller (a capture nearly always has one controller).
    @exclusivity(unchecked) var tallies: [(controller: UInt16, tally: DeviceTally)] = []
    @exclusivity(unchecked) var lastTally = 0
    @exclusivity(unchecked) var deviceTallies: SetAsideArray<SessionDeviceCounts>

    init(links: ConnectionTracker) {
        self.links = links
        let options = links.options
        deviceTallies = options.scanSessionSpillDirectory.map { SetAsideArray(spillingTo: $0, kept: options.scanSessionsKept) }
            ?? SetAsideArray()
    }

    @inline(__always)
    func tallyIndex(_ controller: UInt16) -> Int {
        if lastTally < tallies.count, tallies[lastTally].controller == controller { return lastTally }
        lastTally = tallies.firstIndex { $0.controller == controller } ?? {
            tallies.append((controller, DeviceTally()))
            return tallies.count - 1
        }()
        return lastTally
    }

    @inline(__always)
    func apply(_ h: LinkFeed.Header, _ first: UnsafeRawBufferPointer) {
        switch h.kind {
        case .aclData:
            let acl = ACLPacket(handle: h.code, packetBoundary: .init(rawValue: h.byte & 3), broadcast: h.byte >> 2,
                                declaredLength: Int(h.bearer), data: first)
            // The record as the L2CAP decoder reads it: its place, and whether the capture cut it short.
            let record = CaptureRecord(number: h.at.number, offset: h.at.offset, timestamp: h.at.timestamp,
                                       direction: h.direction, kind: .acl, controller: h.at.controller, sourceType: 0,
                                       originalLength: first.count + Int(h.flags & 1), payload: first)
            let pdu = l2cap.decode(acl, record: record, issues: issues)
            links.acl(handle: h.code, pdu: pdu.map(LinkPDU.init), direction: h.direction, at: h.at, cutShort: h.flags & 1 != 0)
        case .deviceSightings:
            tallies[tallyIndex(h.code)].tally.count(packed: first)
        case .deviceTallyEnd:
            let t = tallyIndex(h.code)
            let piece = ScanPiece(rawValue: first.loadUnaligned(fromByteOffset: MemoryLayout<Int>.stride, as: Int.self)) ?? .whole
            let summary = links.scanDevices.ended(&tallies[t].tally, controller: h.code, piece: piece)
            deviceTallies.append(SessionDeviceCounts(session: first.loadUnaligned(as: Int.self), summary: summary))
        case .place:
            break  // taken by `run`
        case .scanBoundary:
            links.scanBoundary(controller: h.code, first.loadUnaligned(as: Int64.self))
        case .airLinksJoin:
            links.airLinksJoin()
        case .controllerReset:
            l2cap.forget(controller: h.at.controller)
            links.controllerReset(at: h.at)
        case .controllerAdded:
            l2cap.forget(controller: h.at.controller)
        case .command:
            links.command(opcode: HCIOpcode(rawValue: h.code), parameters: first, at: h.at)
        case .commandRefused:
            links.commandAnswered(opcode: HCIOpcode(rawValue: h.code), status: HCIStatus(rawValue: h.byte), at: h.at)
        case .event:
            if h.code == UInt16(HCIEventCode.disconnectionComplete.rawValue), let d = DisconnectionComplete(first),
               d.status == .success {
                l2cap.linkClosed(controller: h.at.controller, handle: d.handle)
            }
            links.event(code: HCIEventCode(rawValue: UInt8(truncatingIfNeeded: h.code)), parameters: first, at: h.at)
        case .leConnectionComplete:
            if let complete = LEConnectionComplete(subevent: LESubevent(rawValue: h.byte), first) {
                _ = links.leConnectionComplete(complete, at: h.at, scanning: h.flags & 1 != 0, advertising: h.flags & 2 != 0)
            }
        case .leMeta:
            links.leMeta(LESubevent(rawValue: h.byte), parameters: first, at: h.at)
        }
    }
}
