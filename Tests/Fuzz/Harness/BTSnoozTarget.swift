import BTCapture
import CZlib

/// Android's btsnooz captures from memory, the form chosen by the input's first byte: the summary's records
/// (the rest of the input, zlib-compressed here behind a version 1 or 2 header, so that the mutations land in the
/// records and not in deflate's bits), btsnooz records behind a btsnoop header (Android 12's log), or a bug
/// report's text with the base64 summary in it.
enum BTSnoozTarget {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        let rest = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
        let issues = IssueLog()
        let capture: OpenedCapture?
        switch first % 3 {
        case 0:
            // Version, then the last packet's time (little-endian microseconds), then the deflated records.
            let header: [UInt8] = [first & 8 == 0 ? 1 : 2] + ReaderTargets.littleEndian(UInt64(1_700_000_000_000_000))
            capture = (try? BTSnoozReader(summary: header + deflate(rest), issues: issues)).map(OpenedCapture.btsnooz)
        case 1:
            let input = MemoryInput(header: ReaderTargets.btsnoopHeader(datalink: BTSnoopDatalink.h4), rest)
            capture = (try? BTSnoozReader(log: input.source(), issues: issues)).map(OpenedCapture.btsnooz)
        default:
            let text = MemoryInput(rest).source()
            guard let summary = (try? BTSnoozReader.extractSummary(from: text)) ?? nil else { return }
            capture = (try? BTSnoozReader(summary: summary, issues: issues)).map(OpenedCapture.btsnooz)
        }
        // A summary inflates (up to its 64 MiB limit): its records are bounded by that, not by the input.
        if let capture { ReaderTargets.readAll(capture, inputBytes: BTSnoozReader.maximumDecompressed, issues: issues) }
    }

    /// `bytes` as one zlib stream (fastest level: the compression is the harness's cost, not the reader's).
    static func deflate(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var length = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let input = bytes.isEmpty ? [0] : Array(bytes)
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, uLong(bytes.count), 1) }
        }
        require(status == Z_OK, "zlib compress2 failed: \(status)")
        return Array(output.prefix(Int(length)))
    }
}
