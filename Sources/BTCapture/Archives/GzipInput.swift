import CZlib

/// gzip (RFC 1952) decompressed with zlib as it is read, members one after another. libarchive's own gzip
/// filter fills a 64 KiB block before it hands anything on and drops that block when the input ends early, so a
/// cut-short `.gz` or `.tar.gz` smaller than that would give nothing; this hands on every byte zlib produces and
/// reports the cut only after them, like a cut-short capture.
public final class GzipInput: ByteInput {
    let source: ByteSource
    @exclusivity(unchecked) private var stream = z_stream()
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var failure: CaptureError?
    /// Why the data ended before the gzip stream did (cut short, corrupt), when it did. It reads as an ordinary
    /// end of data, so the reader above reports the record or archive member it cut, where it cut it: libarchive
    /// would give up on the whole archive at a read error while it is still recognising it.
    @exclusivity(unchecked) public private(set) var damage: String?
    /// Compressed and decompressed bytes so far, for the decompression-bomb check.
    @exclusivity(unchecked) private var compressed: Int64 = 0
    @exclusivity(unchecked) public private(set) var expanded: Int64 = 0
    let limits: ArchiveReader.Limits
    /// Why the stream was refused (a decompression bomb), once it was.
    @exclusivity(unchecked) public private(set) var refusal: CaptureError?

    public init(source: ByteSource, limits: ArchiveReader.Limits = ArchiveReader.Limits()) throws {
        self.source = source
        self.limits = limits
        // 15 + 16: a gzip wrapper with the largest window.
        guard inflateInit2_(&stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CaptureError(.cannotOpen, "cannot start zlib")
        }
    }

    deinit { inflateEnd(&stream) }

    public func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        if let failure { throw failure }
        guard !finished, count > 0 else { return 0 }
        stream.next_out = buffer.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = UInt32(min(count, Int(UInt32.max)))
        while stream.avail_out > 0 {
            guard try source.ensure(1) else {
                // The compressed data ended before the gzip stream did.
                damage = "gzip data ends early (cut short)"
                finished = true
                return try account(count - Int(stream.avail_out))
            }
            let input = source.peek(source.available)
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = UInt32(input.count)
            let status = inflate(&stream, Z_NO_FLUSH)
            let used = input.count - Int(stream.avail_in)
            source.consume(used)
            compressed += Int64(used)
            if status == Z_STREAM_END {
                // Another member may follow (gzip files can be concatenated); anything else ends the data.
                let produced = count - Int(stream.avail_out)
                if try source.ensure(2), source.peek(2).elementsEqual([0x1F, 0x8B]) {
                    inflateReset(&stream)
                    if produced > 0 { return try account(produced) }
                    continue
                }
                finished = true
                return try account(produced)
            }
            guard status == Z_OK || (status == Z_BUF_ERROR && used > 0) else {
                let reason = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                damage = "gzip data is corrupt (\(reason))"
                finished = true
                return try account(count - Int(stream.avail_out))
            }
        }
        return try account(count)
    }

    private func account(_ produced: Int) throws -> Int {
        expanded += Int64(produced)
        if expanded > limits.maximumMemberSize
            || (expanded > limits.ratioCheckedAfter && expanded / max(1, compressed) > limits.maximumRatio) {
            let error = CaptureError(.refused, "the gzip data expands more than \(limits.maximumRatio)-fold "
                                     + "(\(compressed) bytes to over \(expanded)): refused as a decompression bomb")
            refusal = error
            failure = error
            throw error
        }
        return produced
    }
}
