#if canImport(Glibc)
import Glibc
#endif
import BTWire
import BTCapture

/// The HCI monitor channel as a `RecordSource`: each frame becomes a record with the kind and direction its
/// monitor opcode gives (`MonitorOpcode.classify`), the controller index from the header and the kernel's
/// receive time — the same records a btsnoop datalink-2001 file of the capture would give, so everything
/// downstream is shared with file input. `next()` blocks until a frame arrives or a stop is requested;
/// while it waits it calls `onIdle` (when it catches up, then every `idleInterval`).
public final class MonitorSocketSource: RecordSource {
    /// The monitor channel is the record model of btsnoop datalink 2001 (µs timestamps from SO_TIMESTAMP).
    public let info = CaptureInfo(format: .btsnoop(datalink: BTSnoopDatalink.monitor), timestampDigits: 6)
    public var issues: IssueLog { reader.issues }
    public let reader: MonitorFrameReader
    let stop: LiveStop?
    /// Runs while no frame is waiting: flush output, run a due audit.
    public var onIdle: (() -> Void)?
    /// How often `onIdle` runs while nothing arrives, in milliseconds.
    public var idleInterval: Int32 = 200
    /// Controllers announced by NEW_INDEX and not removed since.
    public private(set) var controllers: Set<UInt16> = []
    /// Set when reading failed; the capture ends there.
    public private(set) var failure: LiveError?
    var number = 0

    /// Frames read while waiting for the first controller, handed out before anything else. Only the kernel's
    /// replay at start-up lands here, so copying them costs nothing on the steady-state path.
    var pending: [(header: MonitorHeader, payload: [UInt8], timestamp: Timestamp, offset: Int64)] = []
    var pendingIndex = 0
    /// Where a pending frame's payload is copied when it is handed out (valid until the next call).
    var scratch: UnsafeMutableRawBufferPointer?

    public init(reader: MonitorFrameReader, stop: LiveStop?) {
        self.reader = reader
        self.stop = stop
    }

    /// Opens and binds the monitor socket (see `MonitorSocket.open`).
    public static func open(stop: LiveStop?, issues: IssueLog = IssueLog()) throws(LiveError) -> MonitorSocketSource {
        let fd = try MonitorSocket.open()
        return MonitorSocketSource(reader: MonitorFrameReader(fd: fd, ownsDescriptor: true, issues: issues), stop: stop)
    }

    deinit { scratch?.deallocate() }

    /// Reads the kernel's replay until a controller (`index`, or any) is announced, for at most `within`.
    /// Frames read meanwhile are kept and come out of `next()` first. Throws `.noController` when none
    /// came; returns quietly when a stop was requested meanwhile.
    public func awaitController(index: UInt16?, within: Duration = .seconds(1)) throws(LiveError) {
        let deadline = MonitorFrameReader.now().nanoseconds + Int64(within.components.seconds) * 1_000_000_000
            + within.components.attoseconds / 1_000_000_000
        while true {
            if let index, controllers.contains(index) { return }
            if index == nil, !controllers.isEmpty { return }
            let left = deadline - MonitorFrameReader.now().nanoseconds
            guard left > 0 else { throw LiveError.noController(wanted: index, present: controllers.sorted(), waited: within) }
            switch try reader.next(stop: stop, milliseconds: Int32(clamping: max(1, left / 1_000_000))) {
            case .frame(let f):
                note(f.header)
                pending.append((f.header, Array(f.payload), f.timestamp, f.offset))
            case .timedOut:
                continue
            case .end, .stopped:
                return
            }
        }
    }

    public func next() -> CaptureRecord? {
        if pendingIndex < pending.count {
            let p = pending[pendingIndex]
            pendingIndex += 1
            if pendingIndex == pending.count {
                // Drained: `p` keeps its own payload alive, which is copied to the scratch buffer below.
                pending.removeAll()
                pendingIndex = 0
            }
            return record(header: p.header, payload: copyToScratch(p.payload), timestamp: p.timestamp, offset: p.offset)
        }
        var wait: Int32 = 0
        while true {
            do {
                switch try reader.next(stop: stop, milliseconds: wait) {
                case .frame(let f):
                    note(f.header)
                    return record(header: f.header, payload: f.payload, timestamp: f.timestamp, offset: f.offset)
                case .timedOut:
                    // Caught up (or still quiet): the consumer's chance to flush and audit.
                    onIdle?()
                    wait = idleInterval
                case .end, .stopped:
                    return nil
                }
            } catch {
                failure = error
                return nil
            }
        }
    }

    func note(_ header: MonitorHeader) {
        switch header.opcode {
        case MonitorOpcode.newIndex: controllers.insert(header.index)
        case MonitorOpcode.deleteIndex: controllers.remove(header.index)
        default: break
        }
    }

    @inline(__always)
    func record(header: MonitorHeader, payload: UnsafeRawBufferPointer, timestamp: Timestamp, offset: Int64) -> CaptureRecord {
        number += 1
        let (kind, direction) = MonitorOpcode.classify(header.opcode)
        var r = CaptureRecord(number: number, offset: offset, timestamp: timestamp, direction: direction, kind: kind,
                              controller: header.index, sourceType: UInt32(header.opcode),
                              originalLength: payload.count, payload: payload)
        r.length = MonitorHeader.length + payload.count
        return r
    }

    func copyToScratch(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        if scratch == nil {
            scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: MonitorHeader.maximumFrameLength, alignment: 16)
        }
        guard let scratch else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let count = min(bytes.count, scratch.count)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress, let target = scratch.baseAddress {
                target.copyMemory(from: base, byteCount: count)
            }
        }
        return UnsafeRawBufferPointer(start: scratch.baseAddress, count: count)
    }
}
