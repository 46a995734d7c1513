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

    /// A report `body` writes piece by piece: to standard output, or to a temporary file beside `path` renamed
    /// onto it once complete (as the whole-text `write` replaces a file atomically).
    static func writeStreamed(to path: String, _ body: (@escaping (String) -> Void) -> Void) throws {
        if path == "-" {
            body { Output.write($0) }
            Output.line("")
            Output.flushStandardOutput()
            return
        }
        // A device or pipe (/dev/null) is written into; only a regular file is replaced by renaming.
        let replacing = ReportFile.isReplaceable(path)
        let partial = replacing ? path + ".btlens-partial" : path
        guard !replacing || FileManager.default.createFile(atPath: partial, contents: nil),
              let handle = FileHandle(forWritingAtPath: partial) else {
            Diagnostics.error(file: path, "cannot write the report: cannot \(replacing ? "create \(partial)" : "open it for writing")")
            throw ExitStatus.inputUnreadable
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        var failure: Error?
        func flush() {
            if failure == nil, !buffer.isEmpty {
                do { try handle.write(contentsOf: buffer) } catch { failure = error }
            }
            buffer.removeAll(keepingCapacity: true)
        }
        body { text in
            // Once a write failed (a full disk) the rest is not kept: the report would otherwise pile up in memory.
            guard failure == nil else { return }
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { flush() }
        }
        buffer.append(UInt8(ascii: "\n"))
        flush()
        do {
            try handle.close()
            if let failure { throw failure }
            guard !replacing || rename(partial, path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))])
            }
        } catch {
            if replacing { try? FileManager.default.removeItem(atPath: partial) }
            Diagnostics.error(file: path, "cannot write the report: \(error.localizedDescription)")
            throw ExitStatus.inputUnreadable
        }
    }

}
