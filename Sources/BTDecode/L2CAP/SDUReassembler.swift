import BTWire
import BTCapture

/// Joins K-frames into SDUs on the credit-based channels that carry EATT (Core Vol 3 Part A §3.4.3): the first
/// K-frame of an SDU starts with the SDU's 2-byte length, the following ones carry only payload. Nothing else
/// marks where an SDU begins, so a K-frame starts one when none is pending on its channel (controller, handle,
/// CID and direction, as `ChannelMap` keys channels).
///
/// An SDU in one K-frame — nearly all of them, since EATT MTU and MPS are usually equal — is delivered
/// borrowed, without copying. Memory: one buffer per channel with a partial SDU, at most 65 535 bytes each and
/// `maximumPending` of them (cleared on Disconnection Complete and controller reset).
public struct SDUReassembler {
    /// Partial SDUs kept at once; beyond this, the oldest is dropped and reported.
    public static let maximumPending = 64
    /// The SDU length field before the first K-frame's payload.
    public static let sduLengthSize = 2

    /// A partial SDU, allocated at its announced length (at most 65 535 bytes). A class that owns its bytes, so
    /// a completed SDU can be lent to the caller until the next call.
    final class Buffer {
        let key: UInt64
        let expected: Int
        let firstRecord: Int
        @exclusivity(unchecked) var kFrames = 1
        @exclusivity(unchecked) private(set) var count = 0
        private let storage: UnsafeMutableRawPointer

        init(key: UInt64, expected: Int, firstRecord: Int, first: UnsafeRawBufferPointer) {
            self.key = key
            self.expected = expected
            self.firstRecord = firstRecord
            storage = UnsafeMutableRawPointer.allocate(byteCount: max(expected, 1), alignment: 1)
            append(first)
        }
        deinit { storage.deallocate() }

        /// Appends `bytes`; the caller has checked that the SDU stays within `expected`.
        func append(_ bytes: UnsafeRawBufferPointer) {
            precondition(count + bytes.count <= expected)
            if let base = bytes.baseAddress { (storage + count).copyMemory(from: base, byteCount: bytes.count) }
            count += bytes.count
        }

        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }
    }

    var pending: [Buffer] = []
    /// The SDU last completed from several K-frames, kept until the next call: the caller borrows its bytes.
    var completed: Buffer?

    public init() {}

    /// The result of one K-frame.
    public enum Output {
        /// A whole SDU, borrowed from the K-frame or from the reassembler, valid until the next call.
        case complete(sdu: UnsafeRawBufferPointer, kFrames: Int)
        /// Buffered: the SDU continues in later K-frames (not malformed).
        case incomplete
        /// Dropped; the issue was reported.
        case dropped
    }

    @inline(__always)
    static func key(controller: UInt16, handle: UInt16, cid: UInt16, direction: Direction) -> UInt64 {
        UInt64(controller) << 40 | UInt64(direction.rawValue) << 32 | UInt64(handle) << 16 | UInt64(cid)
    }

    /// Feeds the information payload of one K-frame received on an EATT channel.
    public mutating func push(_ kFrame: UnsafeRawBufferPointer, controller: UInt16, handle: UInt16, cid: UInt16,
                              direction: Direction, record: CaptureRecord, issues: IssueLog) -> Output {
        completed = nil
        let key = Self.key(controller: controller, handle: handle, cid: cid, direction: direction)
        if !pending.isEmpty, let i = pending.firstIndex(where: { $0.key == key }) {
            return `continue`(i, kFrame, record: record, issues: issues)
        }
        guard kFrame.count >= Self.sduLengthSize else {
            issues.report(.emptyPDU, record: record.number, offset: record.offset,
                          "EATT K-frame of \(kFrame.count) bytes on \(Hex.u16(cid)) has no SDU length")
            return .dropped
        }
        let expected = Int(kFrame.loadUnaligned(as: UInt16.self).littleEndian)
        let body = UnsafeRawBufferPointer(rebasing: kFrame[Self.sduLengthSize...])
        if body.count == expected { return .complete(sdu: body, kFrames: 1) }
        if body.count > expected {
            issues.report(.overlongPDU, record: record.number, offset: record.offset,
                          "EATT K-frame on \(Hex.u16(cid)) carries \(body.count) bytes of an SDU of \(expected)")
            return .dropped
        }
        if pending.count >= Self.maximumPending {
            // Bounded memory: the oldest partial SDU goes.
            let oldest = pending.removeFirst()
            issues.report(.interruptedPDU, record: record.number, offset: record.offset,
                          "more than \(Self.maximumPending) unfinished EATT SDUs: the one begun in record \(oldest.firstRecord) is dropped")
        }
        pending.append(Buffer(key: key, expected: expected, firstRecord: record.number, first: body))
        return .incomplete
    }

    mutating func `continue`(_ i: Int, _ kFrame: UnsafeRawBufferPointer, record: CaptureRecord,
                             issues: IssueLog) -> Output {
        let buffer = pending[i]
        let received = buffer.count + kFrame.count
        // Checked before copying: a K-frame beyond the announced length ends the SDU as malformed.
        guard received <= buffer.expected else {
            pending.remove(at: i)
            issues.report(.overlongPDU, record: record.number, offset: record.offset,
                          "EATT SDU begun in record \(buffer.firstRecord) received \(received) bytes, \(buffer.expected) announced")
            return .dropped
        }
        buffer.append(kFrame)
        buffer.kFrames += 1
        guard received == buffer.expected else { return .incomplete }
        pending.remove(at: i)
        completed = buffer
        return .complete(sdu: buffer.bytes, kFrames: buffer.kFrames)
    }

    /// Forgets partial SDUs of a handle (Disconnection Complete: the handle and its CIDs may be reused).
    public mutating func clear(controller: UInt16, handle: UInt16) {
        guard !pending.isEmpty else { return }
        pending.removeAll { $0.key >> 40 == UInt64(controller) && UInt16(truncatingIfNeeded: $0.key >> 16) == handle }
    }

    /// Forgets every partial SDU of a controller (HCI Reset, controller removed).
    public mutating func clear(controller: UInt16) {
        guard !pending.isEmpty else { return }
        pending.removeAll { $0.key >> 40 == UInt64(controller) }
    }

    /// Number of partial SDUs held (for tests and limits).
    public var pendingCount: Int { pending.count }
}
