import BTCapture
import BTWire

/// The benchmark generator's output buffer: btsnoop H4 records built in place in one preallocated block and
/// written to the descriptor in large chunks. Nothing here allocates after `init`, so the hot loop does not
/// touch the heap. All stores are unaligned-safe (`storeBytes` on raw memory).
final class BenchRecordBuffer {
    let fd: Int32
    let capacity: Int
    let base: UnsafeMutableRawPointer
    var position = 0
    /// Bytes already written to the descriptor.
    private(set) var flushed: Int64 = 0
    var recordStart = 0
    /// When set, each finished record goes here (H4 indicator, btsnoop flags and time, the HCI packet) and is
    /// not kept: the air benchmark translates the stream instead of writing it.
    var forward: ((UInt8, UInt32, Int64, UnsafeRawBufferPointer) throws -> Void)?

    /// A record never exceeds this (24-byte header, H4 byte, a full HCI packet), so a flush before a record
    /// that might cross `capacity` keeps every store in bounds.
    static let maximumRecord = BTSnoopReader.recordHeaderLength + 1 + 4 + Int(UInt16.max)
    static let flushSize = 4 << 20

    init(fd: Int32) {
        self.fd = fd
        self.capacity = Self.flushSize + Self.maximumRecord
        self.base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    var total: Int64 { flushed + Int64(position) }

    /// The btsnoop file header (magic, version 1, datalink 1002).
    func fileHeader() {
        for b in BTSnoopReader.magic { u8(b) }
        u32BE(1)
        u32BE(BTSnoopDatalink.h4)
    }

    /// Starts a record: header with lengths patched by `end()`, then the H4 indicator.
    @inline(__always) func begin(flags: UInt32, timestamp: Int64, indicator: UInt8) {
        recordStart = position
        position += 8  // orig_len, incl_len: patched in end()
        u32BE(flags)
        u32BE(0)  // cumulative drops
        u64BE(UInt64(bitPattern: timestamp))
        u8(indicator)
    }

    @inline(__always) func end() throws {
        if let forward {
            // Handed on instead of kept: flags and timestamp from the header, the packet after the H4 byte.
            let flags = base.loadUnaligned(fromByteOffset: recordStart + 8, as: UInt32.self).bigEndian
            let time = Int64(bitPattern: base.loadUnaligned(fromByteOffset: recordStart + 16, as: UInt64.self).bigEndian)
            let packetStart = recordStart + BTSnoopReader.recordHeaderLength + 1
            let indicator = base.load(fromByteOffset: packetStart - 1, as: UInt8.self)
            try forward(indicator, flags, time, UnsafeRawBufferPointer(start: base + packetStart, count: position - packetStart))
            position = recordStart
            return
        }
        let length = UInt32(truncatingIfNeeded: position - recordStart - BTSnoopReader.recordHeaderLength)
        base.storeBytes(of: length.bigEndian, toByteOffset: recordStart, as: UInt32.self)
        base.storeBytes(of: length.bigEndian, toByteOffset: recordStart + 4, as: UInt32.self)
        if position >= Self.flushSize { try flush() }
    }

    @inline(__always) func u8(_ v: UInt8) {
        base.storeBytes(of: v, toByteOffset: position, as: UInt8.self)
        position += 1
    }

    @inline(__always) func u16(_ v: UInt16) {
        base.storeBytes(of: v.littleEndian, toByteOffset: position, as: UInt16.self)
        position += 2
    }

    @inline(__always) func u32BE(_ v: UInt32) {
        base.storeBytes(of: v.bigEndian, toByteOffset: position, as: UInt32.self)
        position += 4
    }

    @inline(__always) func u64BE(_ v: UInt64) {
        base.storeBytes(of: v.bigEndian, toByteOffset: position, as: UInt64.self)
        position += 8
    }

    @inline(__always) func u64(_ v: UInt64) {
        base.storeBytes(of: v.littleEndian, toByteOffset: position, as: UInt64.self)
        position += 8
    }

    @inline(__always) func copy(_ source: UnsafeRawPointer, count: Int) {
        (base + position).copyMemory(from: source, byteCount: count)
        position += count
    }

    /// `count` bytes from the generator (values, keys): whole words, then the tail.
    @inline(__always) func random(_ count: Int, _ rng: inout SplitMix64) {
        var left = count
        while left >= 8 {
            u64(rng.next())
            left -= 8
        }
        var word = rng.next()
        while left > 0 {
            u8(UInt8(truncatingIfNeeded: word))
            word >>= 8
            left -= 1
        }
    }

    /// Offset of the byte just written, for patching a length later.
    @inline(__always) var mark: Int { position }

    @inline(__always) func patch8(at offset: Int, _ v: UInt8) {
        base.storeBytes(of: v, toByteOffset: offset, as: UInt8.self)
    }

    @inline(__always) func patch16(at offset: Int, _ v: UInt16) {
        base.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt16.self)
    }

    /// Writes the buffered bytes. On failure the bytes already written are dropped (and counted in
    /// `flushed`) before the error is thrown, so a retry does not write them twice.
    func flush() throws {
        var written = 0
        defer {
            let rest = position - written
            if rest > 0 && written > 0 { base.copyMemory(from: base + written, byteCount: rest) }
            flushed += Int64(written)
            position = rest
        }
        try BufferedDescriptorWriter.write(fd, UnsafeRawBufferPointer(start: base, count: position), written: &written)
    }
}
