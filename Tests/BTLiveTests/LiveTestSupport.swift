import Foundation
import BTCapture
import BTLive
import BTScenario
import TestSupport

/// Collects what the live pipeline prints, and lets a test act each time the source catches up (append the
/// next piece of a file, write the next burst of frames) — so growth is driven from the reading thread itself
/// and every test is deterministic without sleeping.
final class CollectingOutput: LiveOutput, @unchecked Sendable {
    var lines: [String] = []
    var notes: [String] = []
    var flushes = 0
    /// Lines at the time of each flush: what a user would have seen so far.
    var linesAtFlush: [Int] = []

    func line(_ text: String) { lines.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)) }
    func flush() {
        flushes += 1
        linesAtFlush.append(lines.count)
    }
    func note(_ text: String) { notes.append(text) }

    /// Index of the first line of the final summary.
    var summaryStart: Int? { lines.firstIndex { $0.hasPrefix("--- btlens live:") } }
    /// Finding lines printed while the capture ran.
    var liveFindings: [String] { lines.prefix(summaryStart ?? lines.count).filter { $0.contains("  !! ") } }
    var connectionEvents: [String] { lines.filter { $0.contains("  == ") } }
    var recordLines: [String] { lines.prefix(summaryStart ?? lines.count).filter { !$0.contains("  !! ") && !$0.contains("  == ") && !$0.isEmpty } }
}

/// Steps run one per call, e.g. from `onIdle`; after the last one, `whenDone` (typically a stop request).
final class Steps: @unchecked Sendable {
    var steps: [() -> Void]
    var index = 0
    let whenDone: () -> Void

    init(_ steps: [() -> Void], whenDone: @escaping () -> Void) {
        self.steps = steps
        self.whenDone = whenDone
    }

    func next() {
        if index < steps.count {
            index += 1
            steps[index - 1]()
        } else {
            whenDone()
        }
    }
}

/// A record's content without its number and offset (which differ between a capture and its live re-reading).
struct RecordContent: Equatable, CustomStringConvertible {
    var kind: RecordKind
    var direction: Direction
    var controller: UInt16
    var payload: [UInt8]
    var microseconds: Int64?

    init(_ r: CopiedRecord, time: Bool = true) {
        kind = r.kind
        direction = r.direction
        controller = r.controller
        payload = r.payload
        microseconds = time ? r.microseconds : nil
    }

    init(_ r: CaptureRecord, time: Bool = true) { self.init(CopiedRecord(r), time: time) }

    var description: String { "\(kind) \(direction) hci\(controller) \(payload.count) bytes @\(microseconds.map(String.init) ?? "-")" }
}

enum Bytes {
    static func read(_ path: String) throws -> [UInt8] { try TemporaryDirectory.contents(of: path) }

    static func append(_ bytes: ArraySlice<UInt8>, to path: String) {
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data(bytes))
        try? handle.close()
    }

    /// Creates or truncates `path` in place (same inode, as a writer restarting its log does) and writes `bytes`.
    static func write(_ bytes: ArraySlice<UInt8>, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return }
        write(bytes, fd: fd)
        close(fd)
    }

    /// Writes all of `bytes` to a descriptor (blocking).
    static func write(_ bytes: ArraySlice<UInt8>, fd: Int32) {
        var rest = Array(bytes)
        while !rest.isEmpty {
            let n = rest.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; return }
            rest.removeFirst(n)
        }
    }

    /// Byte positions where records of a btsnoop or PacketLogger file start, and its end.
    static func recordBoundaries(_ path: String) throws -> [Int] {
        let opened = try OpenedCapture.open(path: path)
        var visitor = OffsetVisitor()
        var offsets = try opened.accept(&visitor)
        offsets.append(try read(path).count)
        return offsets
    }
}

struct OffsetVisitor: RecordSourceVisitor {
    mutating func visit<S: RecordSource>(_ source: S) throws -> [Int] {
        var out: [Int] = []
        while let r = source.next() { out.append(Int(r.offset)) }
        return out
    }
}

/// Monitor frames (`hci_mon_hdr` + payload) for every record of a datalink-2001 capture: what the kernel
/// would have sent on the monitor socket for it.
enum MonitorFrames {
    static func frames(ofMonitorCapture path: String) throws -> [[UInt8]] {
        try LoadedCapture.load(path).records.map {
            MonitorHeader.frame(opcode: UInt16(truncatingIfNeeded: $0.sourceType), index: $0.controller, payload: $0.payload)
        }
    }

    static func newIndex(_ index: UInt16, name: String = "hci0") -> [UInt8] {
        var payload: [UInt8] = [0x00, 0x01, 0x33, 0x22, 0x11, 0xD0, 0xB6, 0x9C]  // primary, USB, 9C:B6:D0:11:22:33
        var n = Array(name.utf8.prefix(8))
        while n.count < 8 { n.append(0) }
        payload += n
        return MonitorHeader.frame(opcode: MonitorOpcode.newIndex, index: index, payload: payload)
    }

    static func deleteIndex(_ index: UInt16) -> [UInt8] {
        MonitorHeader.frame(opcode: MonitorOpcode.deleteIndex, index: index, payload: [])
    }

    /// HCI Reset command and its Command Complete on `index`.
    static func reset(_ index: UInt16) -> [[UInt8]] {
        [MonitorHeader.frame(opcode: MonitorOpcode.command, index: index, payload: [0x03, 0x0C, 0x00]),
         MonitorHeader.frame(opcode: MonitorOpcode.event, index: index, payload: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])]
    }
}

/// A connected pair of descriptors: [0] is read by btlens, [1] written by the test.
enum SocketPair {
    static func make(_ type: Int32) -> (Int32, Int32)? {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    static func pipe() -> (Int32, Int32)? {
        var fds: [Int32] = [-1, -1]
        guard Foundation.pipe(&fds) == 0 else { return nil }
        return (fds[0], fds[1])
    }
}

/// Collects records from any source (copies, since payloads are borrowed).
struct CollectingVisitor: RecordSourceVisitor {
    var stop: LiveStop?
    mutating func visit<S: RecordSource>(_ source: S) throws -> [CopiedRecord] {
        var out: [CopiedRecord] = []
        while !(stop?.isRequested ?? false), let r = source.next() { out.append(CopiedRecord(r)) }
        return out
    }
}
