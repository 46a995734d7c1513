import CArchive
#if canImport(Glibc)
import Glibc
#endif

/// One pass over an archive or a compressed stream through libarchive: its members in order, and the member
/// under the cursor as a stream of decompressed bytes (`ArchiveMemberInput`). Nothing is unpacked to disk and no
/// member is held whole: libarchive decompresses block by block into the reader's `ByteSource`.
///
/// A compressed single file (gzip, xz, zstd, bzip2 without tar) is libarchive's "raw" format: one member
/// without a name.
public final class ArchiveReader {
    let handle: OpaquePointer
    /// Kept alive while libarchive reads through it (an archive on standard input).
    private let source: ByteSource?
    /// The member the cursor is on.
    @exclusivity(unchecked) public private(set) var member: Member?
    /// The rest of the data block libarchive handed out last (valid until its next call).
    @exclusivity(unchecked) private var block: UnsafeRawPointer?
    @exclusivity(unchecked) private var blockRemaining = 0
    /// Bytes libarchive had read from the archive itself when the current member began (for the ratio check).
    @exclusivity(unchecked) private var compressedAtMemberStart: Int64 = 0

    /// A member's header.
    public struct Member: Sendable {
        /// Its path inside the archive; nil for a compressed single file (no name inside).
        public var path: String?
        /// Its size as the header declares it, when it does.
        public var declaredSize: Int64?
        public var isRegularFile: Bool
    }

    /// What a member may expand to before it is refused as a decompression bomb: no Bluetooth capture in an
    /// archive comes near 4 GiB, and none compresses 1000-fold (btsnoop with repeated advertising reports
    /// reaches about 20:1), so past 16 MiB a ratio beyond that is a bomb's, not a capture's.
    public struct Limits: Sendable {
        public var maximumMemberSize: Int64 = 4 << 30
        public var maximumRatio: Int64 = 1000
        public var ratioCheckedAfter: Int64 = 16 << 20
        public init() {}
    }
    public let limits: Limits

    /// libarchive's block size for reading files.
    static let blockSize = 64 << 10

    /// Opens the archive or compressed file at `path`: gzip through zlib (`GzipInput`, so a cut-short file still
    /// gives what it holds), the rest through libarchive.
    public static func open(path: String, limits: Limits = Limits()) throws -> ArchiveReader {
        let file = try ByteSource(path: path)
        _ = try file.ensure(2)
        if file.peek(2).elementsEqual([0x1F, 0x8B]) {
            return try ArchiveReader(source: ByteSource(input: GzipInput(source: file, limits: limits)), limits: limits)
        }
        return try ArchiveReader(path: path, limits: limits)
    }

    /// Opens the archive at `path` with libarchive (seekable, so zip is read from its central directory).
    public init(path: String, limits: Limits = Limits()) throws {
        self.limits = limits
        handle = try Self.newHandle()
        source = nil
        guard archive_read_open_filename(handle, path, Self.blockSize) == ARCHIVE_OK else {
            // Fully initialised: deinit frees the handle.
            let message = Self.errorText(handle)
            throw CaptureError(.notACapture, "not a readable archive: \(message)")
        }
    }

    /// Opens the archive whose bytes `source` yields from its current position (standard input).
    public init(source: ByteSource, limits: Limits = Limits()) throws {
        self.limits = limits
        handle = try Self.newHandle()
        self.source = source
        let status = archive_read_open(handle, Unmanaged.passUnretained(source).toOpaque(), nil, { _, context, buffer in
            guard let context, let buffer else { return -1 }
            let source = Unmanaged<ByteSource>.fromOpaque(context).takeUnretainedValue()
            // libarchive keeps the block until its next read call, which is when the source may reuse it.
            guard let bytes = source.takeBlock(maximum: .max) else { return -1 }
            buffer.pointee = bytes.baseAddress
            return bytes.count
        }, nil)
        guard status == ARCHIVE_OK else {
            // Fully initialised: deinit frees the handle.
            let message = Self.errorText(handle)
            throw CaptureError(.notACapture, "not a readable archive: \(message)")
        }
    }

    deinit { archive_read_free(handle) }

    private static func newHandle() throws -> OpaquePointer {
        guard let a = archive_read_new() else { throw CaptureError(.cannotOpen, "cannot allocate an archive reader") }
        // The containers people send captures in; raw last, for a compressed file that is not an archive.
        // Formats are named one by one: archive_read_support_format_all would let formats like mtree claim a
        // decompressed capture.
        archive_read_support_filter_gzip(a)
        archive_read_support_filter_xz(a)
        archive_read_support_filter_lzma(a)
        archive_read_support_filter_zstd(a)
        archive_read_support_filter_bzip2(a)
        archive_read_support_filter_lz4(a)
        archive_read_support_format_tar(a)
        archive_read_support_format_gnutar(a)
        archive_read_support_format_zip(a)
        archive_read_support_format_7zip(a)
        archive_read_support_format_raw(a)
        return a
    }

    static func errorText(_ a: OpaquePointer) -> String {
        archive_error_string(a).map { String(cString: $0) } ?? "unknown libarchive error"
    }

    /// Moves to the next member; nil at the end. Throws when the archive is damaged before it.
    public func nextMember() throws -> Member? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF { member = nil; return nil }
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
            member = nil
            throw failure
        }
        let isRaw = archive_format(handle) == ARCHIVE_FORMAT_RAW
        let path = isRaw ? nil : archive_entry_pathname(entry).map { String(cString: $0) }
        let size: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        let regular = isRaw || archive_entry_filetype(entry) == 0o100000
        member = Member(path: path, declaredSize: size, isRegularFile: regular)
        blockRemaining = 0
        compressedAtMemberStart = archive_filter_bytes(handle, -1)
        if let size, size > limits.maximumMemberSize {
            throw CaptureError(.refused, "\(path ?? "the compressed data") would expand to \(size) bytes, more than "
                               + "\(limits.maximumMemberSize >> 30) GiB: refused as a decompression bomb")
        }
        return member
    }

    /// Why libarchive failed: the cause behind its read callback when there is one (gzip cut short, a bomb).
    private var failure: CaptureError {
        source?.failure ?? CaptureError(.readFailed, "damaged archive: \(Self.errorText(handle))")
    }

    /// The current member's bytes as they are decompressed.
    public func memberInput() -> ArchiveMemberInput { ArchiveMemberInput(archive: self) }

    /// Reads decompressed bytes of the current member, refusing a bomb (see `Limits`).
    func read(into buffer: UnsafeMutableRawPointer, count: Int, expanded: Int64) throws -> Int {
        // Block by block, not archive_read_data: that one drops the bytes it already copied when the archive
        // fails part-way through the buffer, so a cut-short member would lose up to a buffer of its last records.
        // A loop, not a recursion: an archive may hand out any number of empty blocks (sparse entries).
        while blockRemaining == 0 {
            var block: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(handle, &block, &size, &offset)
            if status == ARCHIVE_EOF { return 0 }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN else { throw failure }
            self.block = block
            blockRemaining = block == nil ? 0 : size
        }
        let n = min(count, blockRemaining)
        buffer.copyMemory(from: block!, byteCount: n)
        block = block! + n
        blockRemaining -= n
        let total = expanded + Int64(n)
        if total > limits.maximumMemberSize {
            throw CaptureError(.refused, "\(member?.path ?? "the compressed data") expands beyond "
                               + "\(limits.maximumMemberSize >> 30) GiB: refused as a decompression bomb")
        }
        if total > limits.ratioCheckedAfter {
            let compressed = max(1, archive_filter_bytes(handle, -1) - compressedAtMemberStart)
            if total / compressed > limits.maximumRatio {
                throw CaptureError(.refused, "\(member?.path ?? "the compressed data") expands more than "
                                   + "\(limits.maximumRatio)-fold (\(compressed) bytes to over \(total)): "
                                   + "refused as a decompression bomb")
            }
        }
        return n
    }
}

/// The current member of an `ArchiveReader`, read as it is decompressed (a `ByteSource`'s input).
public final class ArchiveMemberInput: ByteInput {
    let archive: ArchiveReader
    /// Bytes handed out so far.
    @exclusivity(unchecked) public private(set) var expanded: Int64 = 0
    /// Why the member was refused (a decompression bomb), once it was: the commands report it as an error.
    @exclusivity(unchecked) public private(set) var refusal: CaptureError?

    init(archive: ArchiveReader) { self.archive = archive }

    public func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        if let refusal { throw refusal }
        do {
            let n = try archive.read(into: buffer, count: count, expanded: expanded)
            expanded += Int64(n)
            return n
        } catch let error as CaptureError where error.code == .refused {
            refusal = error
            throw error
        }
    }
}
