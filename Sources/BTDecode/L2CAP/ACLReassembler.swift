import BTWire
import BTCapture

/// Reassembles L2CAP PDUs from ACL fragments per (controller, handle, direction), with the stream-decoder
/// contract of swift-nio's ByteToMessageDecoder: a PDU is delivered exactly when its last byte arrives.
///
/// A start whose ACL length equals the L2CAP length + 4 is complete and is delivered without copying; shorter
/// starts are buffered and continuations appended. An orphan continuation is dropped, a new start discards a
/// pending PDU, and more bytes than announced are an overlong PDU — each reported as a malformed record.
/// Memory: one buffer per (handle, direction) with a partial PDU, at most 65 539 bytes each and
/// `maximumPending` of them (cleared on Disconnection Complete).
public struct ACLReassembler {
    /// Partial PDUs kept at once; beyond this, the oldest is dropped and reported.
    public static let maximumPending = 256
    /// The largest L2CAP PDU: a 16-bit length plus the basic header.
    public static let maximumPDU = Int(UInt16.max) + L2CAPPDU.headerLength

    /// A partial PDU. The storage is a class so slots can be reused without reallocating.
    final class Slot {
        @exclusivity(unchecked) var key: UInt64 = 0
        @exclusivity(unchecked) var active = false
        @exclusivity(unchecked) var storage: UnsafeMutableRawPointer
        @exclusivity(unchecked) var capacity: Int
        @exclusivity(unchecked) var count = 0
        /// Total PDU length (header + payload) once the 4-byte header is known, else nil.
        @exclusivity(unchecked) var expected: Int?
        @exclusivity(unchecked) var firstRecord = 0
        @exclusivity(unchecked) var firstOffset: Int64 = 0
        @exclusivity(unchecked) var fragments = 0
        @exclusivity(unchecked) var lastUse = 0
        /// The capture cut a fragment of this PDU short: its continuations are dropped quietly until a start.
        @exclusivity(unchecked) var truncated = false

        init(capacity: Int) {
            self.capacity = capacity
            storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        }
        deinit { storage.deallocate() }

        /// Appends `bytes`; the caller has checked that the PDU stays within `maximumPDU`.
        func append(_ bytes: UnsafeRawBufferPointer) {
            let needed = count + bytes.count
            if needed > capacity {
                let newCapacity = max(needed, min(capacity * 2, ACLReassembler.maximumPDU))
                let fresh = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
                fresh.copyMemory(from: storage, byteCount: count)
                storage.deallocate()
                storage = fresh
                capacity = newCapacity
            }
            if let base = bytes.baseAddress { (storage + count).copyMemory(from: base, byteCount: bytes.count) }
            count += bytes.count
        }

        func updateExpected() {
            if expected == nil, count >= L2CAPPDU.headerLength {
                let length = Int(storage.load(fromByteOffset: 0, as: UInt8.self))
                    | (Int(storage.load(fromByteOffset: 1, as: UInt8.self)) << 8)
                expected = length + L2CAPPDU.headerLength
            }
        }
    }

    var slots: [Slot] = []
    var activeCount = 0
    var clock = 0

    public init() {}

    @inline(__always)
    static func key(controller: UInt16, handle: UInt16, direction: Direction) -> UInt64 {
        UInt64(controller) << 24 | UInt64(direction.rawValue) << 16 | UInt64(handle)
    }

    /// The result of one ACL fragment.
    public enum Output {
        /// A whole PDU: header fields and borrowed payload.
        case complete(cid: UInt16, payload: UnsafeRawBufferPointer, firstRecord: Int, firstOffset: Int64,
                      fragments: Int)
        /// Buffered; more fragments are needed (not malformed).
        case incomplete
        /// Dropped; the issue was reported.
        case dropped
    }

    /// Feeds one ACL packet of `record`.
    public mutating func push(_ acl: ACLPacket, record: CaptureRecord, issues: IssueLog) -> Output {
        let key = Self.key(controller: record.controller, handle: acl.handle, direction: record.direction)
        let data = acl.data
        if acl.packetBoundary.isStart {
            if activeCount > 0, let slot = find(key), slot.truncated {
                release(slot)
            } else if activeCount > 0, let slot = find(key) {
                issues.report(.interruptedPDU, record: record.number, offset: record.offset,
                              "new L2CAP start on handle \(Hex.u16(acl.handle)) discards an unfinished PDU begun in record \(slot.firstRecord) (\(slot.count) of \(slot.expected.map(String.init) ?? "?") bytes)")
                release(slot)
            }
            if data.count >= L2CAPPDU.headerLength {
                let length = Int(data.loadUnaligned(fromByteOffset: 0, as: UInt16.self).littleEndian)
                let total = length + L2CAPPDU.headerLength
                let cid = data.loadUnaligned(fromByteOffset: 2, as: UInt16.self).littleEndian
                if data.count == total {
                    return .complete(cid: cid, payload: UnsafeRawBufferPointer(rebasing: data[L2CAPPDU.headerLength...]),
                                     firstRecord: record.number, firstOffset: record.offset, fragments: 1)
                }
                if data.count > total {
                    issues.report(.overlongPDU, record: record.number, offset: record.offset,
                                  "ACL data of \(data.count) bytes is longer than its L2CAP PDU (\(total) bytes)")
                    return .dropped
                }
            }
            let slot = acquire(key, record: record, issues: issues)
            slot.firstRecord = record.number
            slot.firstOffset = record.offset
            slot.fragments = 1
            slot.append(data)
            slot.updateExpected()
            return .incomplete
        }
        // Continuation.
        guard activeCount > 0, let slot = find(key) else {
            issues.report(.orphanContinuation, record: record.number, offset: record.offset,
                          "L2CAP continuation on handle \(Hex.u16(acl.handle)) without a start")
            return .dropped
        }
        if slot.truncated { return .incomplete }
        // Checked before copying: a corrupt length must not make the buffer grow past the largest PDU.
        let received = slot.count + data.count
        let limit = slot.expected ?? Self.maximumPDU
        if received <= limit {
            slot.append(data)
            slot.fragments += 1
            slot.lastUse = clock
            slot.updateExpected()
        }
        guard let expected = slot.expected, received >= expected else {
            if received <= limit { return .incomplete }
            issues.report(.overlongPDU, record: record.number, offset: record.offset,
                          "L2CAP PDU begun in record \(slot.firstRecord) would exceed the largest L2CAP PDU (\(received) bytes)")
            release(slot)
            return .dropped
        }
        if received > expected {
            issues.report(.overlongPDU, record: record.number, offset: record.offset,
                          "L2CAP PDU begun in record \(slot.firstRecord) received \(received) bytes, \(expected) announced")
            release(slot)
            return .dropped
        }
        let pdu = UnsafeRawBufferPointer(start: slot.storage, count: slot.count)
        let cid = UInt16(pdu[2]) | UInt16(pdu[3]) << 8
        release(slot)  // the bytes stay valid until the slot is reused, i.e. after the caller is done
        return .complete(cid: cid, payload: UnsafeRawBufferPointer(rebasing: pdu[L2CAPPDU.headerLength...]),
                         firstRecord: slot.firstRecord, firstOffset: slot.firstOffset, fragments: slot.fragments)
    }

    /// A fragment the capture cut short (snap length, e.g. Android's filtered snoop log): the PDU it belongs to
    /// cannot be rebuilt, so it is forgotten, and its later continuations are dropped without being reported as
    /// orphans. Not malformed: the packet was whole on the wire.
    public mutating func skipTruncated(_ acl: ACLPacket, record: CaptureRecord, issues: IssueLog) {
        let key = Self.key(controller: record.controller, handle: acl.handle, direction: record.direction)
        let existing = activeCount > 0 ? find(key) : nil
        if acl.packetBoundary.isStart {
            if let existing, !existing.truncated {
                issues.report(.interruptedPDU, record: record.number, offset: record.offset,
                              "new L2CAP start on handle \(Hex.u16(acl.handle)) discards an unfinished PDU begun in record \(existing.firstRecord)")
            }
            if let existing { release(existing) }
            let slot = acquire(key, record: record, issues: issues)
            slot.firstRecord = record.number
            slot.firstOffset = record.offset
            slot.truncated = true
        } else if let existing {
            existing.truncated = true
            existing.count = 0
            existing.lastUse = clock
        }
    }

    /// Forgets partial PDUs of a handle (Disconnection Complete: the handle may be reused).
    public mutating func clear(controller: UInt16, handle: UInt16) {
        guard activeCount > 0 else { return }
        for direction in [Direction.sent, .received, .unknown] {
            if let slot = find(Self.key(controller: controller, handle: handle, direction: direction)) {
                release(slot)
            }
        }
    }

    /// Forgets every partial PDU of a controller (HCI Reset, controller removed).
    public mutating func clear(controller: UInt16) {
        guard activeCount > 0 else { return }
        for slot in slots where slot.active && slot.key >> 24 == UInt64(controller) { release(slot) }
    }

    /// Number of partial PDUs held (for tests and limits).
    public var pendingCount: Int { activeCount }

    @inline(__always)
    func find(_ key: UInt64) -> Slot? {
        for slot in slots where slot.active && slot.key == key { return slot }
        return nil
    }

    mutating func acquire(_ key: UInt64, record: CaptureRecord, issues: IssueLog) -> Slot {
        clock += 1
        let slot: Slot
        if let free = slots.first(where: { !$0.active }) {
            slot = free
        } else if slots.count < Self.maximumPending {
            slot = Slot(capacity: 512)
            slots.append(slot)
        } else {
            // Bounded memory: reuse the least recently used partial PDU.
            slot = slots.min(by: { $0.lastUse < $1.lastUse }) ?? slots[0]
            issues.report(.interruptedPDU, record: record.number, offset: record.offset,
                          "more than \(Self.maximumPending) unfinished L2CAP PDUs: the one begun in record \(slot.firstRecord) is dropped")
            activeCount -= 1
        }
        slot.key = key
        slot.active = true
        slot.count = 0
        slot.expected = nil
        slot.truncated = false
        slot.lastUse = clock
        activeCount += 1
        return slot
    }

    mutating func release(_ slot: Slot) {
        if slot.active {
            slot.active = false
            activeCount -= 1
        }
    }
}
