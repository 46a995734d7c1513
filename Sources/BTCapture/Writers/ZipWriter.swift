import CArchive

/// Writes a zip archive of whole members with libarchive: how the scenario tool packs a bug report (its text
/// and its snoop log) the way Android's `adb bugreport` does.
public enum ZipWriter {
    /// A fixed modification time, so the same members give the same bytes.
    static let modificationTime = 1_768_471_200

    public static func write(_ path: String, members: [(path: String, bytes: [UInt8])]) throws {
        guard let a = archive_write_new() else { throw CaptureError(.writeFailed, "cannot start a zip archive") }
        defer { archive_write_free(a) }
        archive_write_set_format_zip(a)
        try check(a, archive_write_open_filename(a, path))
        for (name, bytes) in members {
            guard let entry = archive_entry_new() else { throw CaptureError(.writeFailed, "cannot add \(name)") }
            defer { archive_entry_free(entry) }
            archive_entry_set_pathname(entry, name)
            archive_entry_set_size(entry, Int64(bytes.count))
            archive_entry_set_filetype(entry, 0o100000)
            archive_entry_set_perm(entry, 0o644)
            archive_entry_set_mtime(entry, modificationTime, 0)
            try check(a, archive_write_header(a, entry))
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { archive_write_data(a, $0.baseAddress! + written, $0.count - written) }
                guard n > 0 else { throw CaptureError(.writeFailed, "cannot write \(name) into \(path)") }
                written += n
            }
        }
        try check(a, archive_write_close(a))
    }

    static func check(_ a: OpaquePointer, _ status: Int32) throws {
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN else {
            throw CaptureError(.writeFailed, archive_error_string(a).map { String(cString: $0) } ?? "libarchive status \(status)")
        }
    }
}
