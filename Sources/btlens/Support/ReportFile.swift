import Foundation

/// Where a report named with `--output` goes. A regular file (or a new one) is replaced at once when the report is
/// complete: written beside it and renamed onto it, so a failed run never leaves half a report. Anything else that
/// exists — /dev/null, /dev/stdout, a named pipe — is written into as it is: renaming onto it would replace the
/// device or pipe with a file (as root, /dev/null itself).
enum ReportFile {
    /// Whether `path` is a regular file or does not exist yet.
    static func isReplaceable(_ path: String) -> Bool {
        var s = stat()
        guard stat(path, &s) == 0 else { return true }
        return (s.st_mode & S_IFMT) == S_IFREG
    }

    /// Writes `text` to `path`: replaced atomically when it is a regular file, written into otherwise.
    static func write(_ text: String, to path: String) throws {
        if isReplaceable(path) {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "cannot open it for writing"])
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
    }
}
