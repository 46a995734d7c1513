import Testing
import BTCapture
import BTScenario
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A pipe nobody reads whose ends do not block: a write larger than the room left is cut short and the next
/// one fails with EAGAIN, the partial write a buffered writer must survive without writing bytes twice.
final class NonBlockingPipe {
    let readFD: Int32
    let writeFD: Int32
    /// Bytes the pipe holds before a write fails.
    let capacity: Int

    /// F_GETPIPE_SZ (Linux), not exported by the Glibc module.
    static let getPipeSize: Int32 = 1032
    static let defaultCapacity = 65_536

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw CaptureError(.cannotOpen, String(cString: strerror(errno))) }
        readFD = fds[0]
        writeFD = fds[1]
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        let size = Int(fcntl(writeFD, Self.getPipeSize))
        capacity = size > 0 ? size : Self.defaultCapacity
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Everything waiting in the pipe, which then has room again.
    func drain() -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            guard n > 0 else { return out }
            out += chunk[..<n]
        }
    }
}

@Suite("buffered descriptor writers")
struct BufferedWriterTests {
    static let cannotWriteNow = "write failed: \(String(cString: strerror(EAGAIN)))"

    @Test("a write that fails after a partial write drops the written bytes; the deinit flush writes only the rest")
    func partialWriteIsNotRepeated() throws {
        let pipe = try NonBlockingPipe()
        let bytes = (0..<(pipe.capacity * 3 / 2)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        var received: [UInt8] = []
        do {
            let writer = BufferedDescriptorWriter(fd: pipe.writeFD, flushThreshold: bytes.count * 2)
            writer.append(contentsOf: bytes)
            try writer.flushIfFull()  // below the threshold: nothing written
            #expect(writer.buffer.count == bytes.count)
            let error = #expect(throws: CaptureError.self) { try writer.flush() }
            #expect(error?.code == .writeFailed)
            #expect(error?.message == Self.cannotWriteNow)  // the cause only: the caller names the file
            received += pipe.drain()
            #expect(received.count > 0 && received.count < bytes.count)
            #expect(writer.buffer.count == bytes.count - received.count)
        }  // deinit flushes the rest, which fits now
        received += pipe.drain()
        #expect(received == bytes)
    }

    /// Writes the same records to `fd` and to the file `reference`; returns the flush of the writer for `fd`
    /// (which holds the records, unflushed, until the closure goes) and the file's bytes.
    static func records(_ format: String, fd: Int32, reference: String) throws -> (() throws -> Void, [UInt8]) {
        let big = 1 << 24
        let payload = [UInt8](repeating: 0xA5, count: 1_000) + [0x40, 0x20]
        switch format {
        case "btsnoop":
            let writer = try BTSnoopWriter(fd: fd, datalink: BTSnoopDatalink.h4, flushThreshold: big)
            do {
                let file = try BTSnoopWriter(path: reference, datalink: BTSnoopDatalink.h4)
                for i in 0..<100 {
                    for w in [writer, file] {
                        try w.write(kind: .acl, direction: i % 2 == 0 ? .sent : .received,
                                    timestamp: Timestamp(unixMicroseconds: 1_700_000_000_000_000 + Int64(i)), bytes: payload)
                    }
                }
                try file.finish()
            }
            return ({ try writer.flush() }, try TemporaryDirectory.contents(of: reference))
        default:
            let writer = PacketLoggerWriter(fd: fd, bigEndian: format == "pklg-be", flushThreshold: big)
            do {
                let file = try PacketLoggerWriter(path: reference, bigEndian: format == "pklg-be")
                for i in 0..<100 {
                    for w in [writer, file] {
                        try w.write(kind: .acl, direction: i % 2 == 0 ? .sent : .received,
                                    timestamp: Timestamp(unixMicroseconds: 1_700_000_000_000_000 + Int64(i)), bytes: payload)
                    }
                }
                try file.flush()
            }
            return ({ try writer.flush() }, try TemporaryDirectory.contents(of: reference))
        }
    }

    @Test("btsnoop and PacketLogger writers resume after a failed flush without repeating bytes",
          arguments: ["btsnoop", "pklg-le", "pklg-be"])
    func writersResume(format: String) throws {
        let dir = try TemporaryDirectory()
        let pipe = try NonBlockingPipe()
        var received: [UInt8] = []
        let expected: [UInt8]
        do {
            let (flush, reference) = try Self.records(format, fd: pipe.writeFD, reference: dir.file("reference"))
            expected = reference
            #expect(expected.count > pipe.capacity)
            var failures = 0
            var flushed = false
            // Bounded: a writer that restarts from its first byte after a failure would never get through.
            for _ in 0..<(expected.count / pipe.capacity + 2) where !flushed {
                do {
                    try flush()
                    flushed = true
                } catch let error as CaptureError {
                    #expect(error.code == .writeFailed)
                    #expect(error.message == Self.cannotWriteNow)
                    failures += 1
                    received += pipe.drain()
                }
            }
            #expect(flushed)
            #expect(failures >= 1)
            received += pipe.drain()
        }
        received += pipe.drain()  // the deinit flush has nothing left to write
        #expect(received == expected)
    }

    @Test("write errors are write-failed with the cause only, for every writer")
    func writeErrorKind() throws {
        let full = "write failed: \(String(cString: strerror(ENOSPC)))"
        // The btsnoop header is written at once.
        let btsnoop = #expect(throws: CaptureError.self) { try BTSnoopWriter(path: "/dev/full", datalink: BTSnoopDatalink.h4) }
        #expect(btsnoop?.code == .writeFailed)
        #expect(btsnoop?.message == full)
        let pklg = try PacketLoggerWriter(path: "/dev/full", bigEndian: false)
        try pklg.write(kind: .command, direction: .sent, timestamp: Timestamp(unixMicroseconds: 0), bytes: [0x03, 0x0C, 0x00])
        let pklgError = #expect(throws: CaptureError.self) { try pklg.flush() }
        #expect(pklgError?.code == .writeFailed)
        #expect(pklgError?.message == full)
        let flushed = try PcapWriter(path: "/dev/full", linktype: Linktype.bluetoothHCIH4)
        #expect(throws: CaptureError(.writeFailed, "")) { try flushed.flush() }
        let pcap = try PcapWriter(path: "/dev/full", linktype: Linktype.bluetoothHCIH4)
        #expect(throws: CaptureError(.writeFailed, "")) { try pcap.close() }
        #expect(throws: CaptureError(.writeFailed, "")) {  // closed
            try pcap.write(kind: .command, direction: .sent, timestamp: Timestamp(unixMicroseconds: 0), bytes: [0x03, 0x0C, 0x00])
        }
    }

    @Test("the benchmark generator reports a failed write as write-failed, after the bytes that were written")
    func benchmarkWriteError() throws {
        let dir = try TemporaryDirectory()
        let pipe = try NonBlockingPipe()
        let target = Int64(pipe.capacity * 3)
        let error = #expect(throws: CaptureError.self) {
            _ = try BenchmarkGenerator(targetBytes: target, fd: pipe.writeFD).run()
        }
        #expect(error?.code == .writeFailed)
        #expect(error?.message == Self.cannotWriteNow)
        let path = dir.file("bench.btsnoop")
        _ = try BenchmarkGenerator.write(to: path, targetBytes: target)
        let received = pipe.drain()
        #expect(received.count == pipe.capacity)
        #expect(received == Array(try TemporaryDirectory.contents(of: path).prefix(received.count)))
    }

    @Test("btsnoop H4 and pcap 187/201 write the same indicator for each kind and skip non-HCI records",
          arguments: ["btsnoop-h4", "pcap-187", "pcap-201"])
    func h4Writers(format: String) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file(format)
        let writer: any HCIRecordWriter = switch format {
        case "btsnoop-h4": try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h4)
        case "pcap-187": try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4)
        default: try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4WithPHDR)
        }
        let written: [(RecordKind, Direction)] = [(.command, .sent), (.event, .sent), (.acl, .sent), (.acl, .received),
                                                  (.note, .unknown), (.sco, .received), (.iso, .unknown)]
        for (i, (kind, direction)) in written.enumerated() {
            try writer.write(kind: kind, direction: direction, timestamp: Timestamp(unixMicroseconds: Int64(i)),
                             bytes: [UInt8(i), 0, 0])
        }
        try writer.finish()
        let (_, records, issues) = try readAll(path)
        #expect(issues.count == 0)
        #expect(records.map(\.kind) == [.command, .event, .acl, .acl, .sco, .iso])
        #expect(records.map(\.payload.first) == [0, 1, 2, 3, 5, 6])
        if format == "pcap-187" {  // no direction in the format: implied by the kind
            #expect(records.map(\.direction) == [.sent, .received, .unknown, .unknown, .unknown, .unknown])
        } else {  // events are received even when marked sent; unknown is written as sent
            #expect(records.map(\.direction) == [.sent, .received, .sent, .received, .received, .sent])
        }
    }
}
