import Foundation
import Testing
import BTCapture
@testable import BTLive
import TestSupport

@Suite("Monitor frames from any descriptor")
struct MonitorFrameReaderTests {
    static let frames: [[UInt8]] = [MonitorFrames.newIndex(0)] + MonitorFrames.reset(0) + [
        // ACL RX with a 0-byte and a 300-byte payload (longer than one small read).
        MonitorHeader.frame(opcode: MonitorOpcode.aclRX, index: 0, payload: []),
        MonitorHeader.frame(opcode: MonitorOpcode.aclRX, index: 0, payload: (0..<300).map { UInt8($0 & 0xFF) }),
        MonitorFrames.deleteIndex(0),
    ]

    func readAll(_ reader: MonitorFrameReader) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while true {
            switch try reader.next(stop: nil, milliseconds: -1) {
            case .frame(let f): out.append(f.header.bytes + Array(f.payload))
            case .end, .stopped: return out
            case .timedOut: continue
            }
        }
    }

    @Test("the header is six little-endian bytes: opcode, index, length", arguments: [(UInt16(5), UInt16(1), UInt16(0x0102))])
    func header(opcode: UInt16, index: UInt16, length: UInt16) throws {
        let bytes = MonitorHeader(opcode: opcode, index: index, payloadLength: length).bytes
        #expect(bytes == [0x05, 0x00, 0x01, 0x00, 0x02, 0x01])
        let parsed = try #require(bytes.withUnsafeBytes { MonitorHeader($0) })
        #expect(parsed == MonitorHeader(opcode: 5, index: 1, payloadLength: 0x0102))
        #expect([UInt8](repeating: 0, count: 5).withUnsafeBytes { MonitorHeader($0) } == nil)
    }

    @Test("a stream (pipe) fed in every split gives the same frames", arguments: [1, 2, 5, 7, 64, 100_000])
    func dripFed(chunk: Int) throws {
        let (readFD, writeFD) = try #require(SocketPair.pipe())
        let reader = MonitorFrameReader(fd: readFD, ownsDescriptor: true)
        let all = Self.frames.flatMap { $0 }
        // A pipe holds 64 KiB: everything fits, written in `chunk`-sized writes before reading.
        var offset = 0
        while offset < all.count {
            Bytes.write(all[offset..<min(all.count, offset + chunk)], fd: writeFD)
            offset += chunk
        }
        close(writeFD)
        #expect(!reader.isDatagram)
        #expect(try readAll(reader) == Self.frames)
        #expect(reader.issues.count == 0)
    }

    @Test("a stream that ends inside a frame reports it as truncated")
    func truncatedStream() throws {
        let (readFD, writeFD) = try #require(SocketPair.make(Int32(SOCK_STREAM.rawValue)))
        let reader = MonitorFrameReader(fd: readFD, ownsDescriptor: true)
        let whole = MonitorFrames.reset(0)[0]
        Bytes.write(ArraySlice(whole + whole.prefix(4)), fd: writeFD)
        close(writeFD)
        #expect(try readAll(reader) == [whole])
        #expect(reader.issues.count == 1)
        #expect(reader.issues.issues.first?.code == .truncatedRecord)
    }

    @Test("datagrams: one frame each; a short or inconsistent datagram is reported and skipped")
    func datagrams() throws {
        let (readFD, writeFD) = try #require(SocketPair.make(Int32(SOCK_SEQPACKET.rawValue)))
        let reader = MonitorFrameReader(fd: readFD, ownsDescriptor: true)
        #expect(reader.isDatagram)
        let good = MonitorFrames.reset(0)
        let lying = MonitorHeader(opcode: MonitorOpcode.event, index: 0, payloadLength: 50).bytes + [0x0E, 0x00]
        let trailing = good[1] + [0xAA, 0xBB]
        for datagram in [good[0], [0x02, 0x00, 0x00], lying, trailing, good[1]] {
            #expect(datagram.withUnsafeBytes { send(writeFD, $0.baseAddress, $0.count, 0) } == datagram.count)
        }
        close(writeFD)
        // The peer's close ends a seqpacket socket (an empty read), as it ends a stream.
        #expect(try readAll(reader) == [good[0], good[1], good[1]])
        #expect(reader.issues.count == 3)
    }

    @Test("SCM_TIMESTAMP control messages are found and decoded")
    func controlMessage() throws {
        // cmsghdr { size_t len; int level; int type; } + struct timeval { long sec; long usec; }
        var bytes: [UInt8] = []
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        // An unrelated control message first (SCM_RIGHTS with one descriptor, padded), then the timestamp.
        bytes += le(16 + 4, 8) + le(Int(SOL_SOCKET), 4) + le(1, 4) + le(7, 4) + [0, 0, 0, 0]
        bytes += le(32, 8) + le(Int(SOL_SOCKET), 4) + le(Int(MonitorFrameReader.timestampOption), 4)
            + le(1_700_000_000, 8) + le(123_456, 8)
        let t = bytes.withUnsafeBytes { MonitorFrameReader.timestamp(control: $0) }
        #expect(t == Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_000))
        #expect([UInt8]().withUnsafeBytes { MonitorFrameReader.timestamp(control: $0) } == nil)
        let garbage: [UInt8] = le(4, 8) + le(0, 8)  // a length shorter than the header
        #expect(garbage.withUnsafeBytes { MonitorFrameReader.timestamp(control: $0) } == nil)
    }

    @Test("SO_TIMESTAMP from the kernel on a real datagram socket (UDP loopback) becomes the frame's time")
    func kernelTimestamp() throws {
        let receiver = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        let sender = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(receiver >= 0 && sender >= 0)
        defer { close(sender) }
        var on: Int32 = 1
        try #require(setsockopt(receiver, SOL_SOCKET, MonitorFrameReader.timestampOption, &on, socklen_t(4)) == 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(receiver, p, length) == 0 && getsockname(receiver, p, &length) == 0
            }
        }
        try #require(bound, "no loopback networking here")
        let frame = MonitorFrames.reset(0)[0]
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                frame.withUnsafeBytes { sendto(sender, $0.baseAddress, $0.count, 0, p, length) }
            }
        }
        #expect(sent == frame.count)
        let reader = MonitorFrameReader(fd: receiver, ownsDescriptor: true)
        #expect(reader.isDatagram)
        let before = MonitorFrameReader.now()
        let (n, kernelTime) = reader.receiveMessage()
        #expect(n == frame.count)
        let t = try #require(kernelTime, "the kernel sent no SCM_TIMESTAMP")
        // Sent just now, stamped by the kernel on arrival (µs resolution).
        #expect(abs(t.nanoseconds - before.nanoseconds) < 5_000_000_000)
    }

    @Test("a stop request wakes a read blocked on a quiet descriptor")
    func stopWakes() throws {
        let (readFD, writeFD) = try #require(SocketPair.pipe())
        defer { close(writeFD) }
        let reader = MonitorFrameReader(fd: readFD, ownsDescriptor: true)
        let stop = LiveStop()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { stop.request() }
        let started = Date()
        guard case .stopped = try reader.next(stop: stop, milliseconds: -1) else {
            Issue.record("expected a stop")
            return
        }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test("the monitor socket cannot open without Bluetooth in the kernel (EAFNOSUPPORT here), or without CAP_NET_RAW")
    func socketErrors() {
        do {
            let fd = try MonitorSocket.open()
            // A machine with Bluetooth and the capability: the socket opened, which is also right.
            close(fd)
        } catch {
            #expect(error.code == .noBluetooth || error.code == .permission)
            #expect(error.description.contains("Bluetooth"))
            #expect(error.description.contains("hint:"))
            #expect(!error.description.contains("\n"))
        }
        #expect(LiveError.opening("bind", errno: EPERM).code == .permission)
        #expect(LiveError.opening("bind", errno: EPERM).description.contains("setcap cap_net_raw+ep"))
        #expect(LiveError.opening("bind", errno: EACCES).code == .permission)
        #expect(LiveError.opening("socket", errno: EAFNOSUPPORT).code == .noBluetooth)
        #expect(LiveError.opening("bind", errno: EINVAL).code == .noBluetooth)
    }
}
