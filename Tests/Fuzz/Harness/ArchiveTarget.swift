import BTCapture

/// Archives and compressed captures from memory (gzip through zlib, the rest through libarchive: tar, zip, 7z,
/// xz, zstd, bzip2), each member read as `CaptureInputs` reads it: a capture, or a bug report's text with a
/// btsnooz summary; under decompression-bomb limits small enough for the fuzzer to reach them.
enum ArchiveTarget {
    static let limits: ArchiveReader.Limits = {
        var limits = ArchiveReader.Limits()
        limits.maximumMemberSize = 8 << 20
        limits.ratioCheckedAfter = 1 << 20
        return limits
    }()

    /// Members looked at in one archive: a few are enough to reach every path, and bound the time an input takes.
    static let memberLimit = 16

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let source = MemoryInput(bytes).source()
        guard (try? source.ensure(2)) == true else { return }
        let archive: ArchiveReader
        do {
            if source.peek(2).elementsEqual([0x1F, 0x8B]) {
                archive = try ArchiveReader(source: ByteSource(input: GzipInput(source: source, limits: limits)), limits: limits)
            } else {
                archive = try ArchiveReader(source: source, limits: limits)
            }
        } catch { return }
        var members = 0
        while members < memberLimit, let member = try? archive.nextMember() {
            members += 1
            guard member.isRegularFile else { continue }
            let input = archive.memberInput()
            readMember(ByteSource(input: input, capacity: 1 << 16))
            // A member is refused once it expands beyond the limit, within one block of it.
            require(input.expanded <= limits.maximumMemberSize + (1 << 20), "a member expanded to \(input.expanded) bytes")
        }
    }

    static func readMember(_ source: ByteSource) {
        guard (try? source.ensure(4096)) != nil else { return }
        let issues = IssueLog()
        if OpenedCapture.recognises(source.peek(4096)) {
            guard let capture = try? OpenedCapture.open(source: source, issues: issues) else { return }
            ReaderTargets.readAll(capture, inputBytes: Int(limits.maximumMemberSize), issues: issues)
        } else if let summary = (try? BTSnoozReader.extractSummary(from: source)) ?? nil,
                  let reader = try? BTSnoozReader(summary: summary, issues: issues) {
            ReaderTargets.readAll(.btsnooz(reader), inputBytes: BTSnoozReader.maximumDecompressed, issues: issues)
        }
    }
}
