#if canImport(Glibc)
import Glibc
#endif

/// Buffered standard output (print() on Linux flushes too often for a million lines) and one-line diagnostics.
enum Output {
    nonisolated(unsafe) static var buffer: [UInt8] = {
        var b = [UInt8]()
        b.reserveCapacity(1 << 16)
        return b
    }()

    static func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flushStandardOutput() }
    }

    static func line(_ text: String) {
        write(text)
        write("\n")
    }

    static func flushStandardOutput() {
        var written = 0
        while written < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + written, $0.count - written) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                break  // closed pipe (e.g. `| head`): drop the rest quietly
            }
            written += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    static var standardOutputIsTerminal: Bool { isatty(1) == 1 }
}

enum Diagnostics {
    static var standardErrorIsTerminal: Bool { isatty(2) == 1 }

    static func printRaw(_ text: String) {
        writeStandardError(text.hasSuffix("\n") ? text : text + "\n")
    }

    static func writeStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + written, $0.count - written) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
            written += n
        }
    }

    /// `btlens: FILE: cause`, the one-line error form.
    static func error(file: String?, _ cause: String) {
        let name = file.map { $0 == "-" ? "<stdin>" : $0 }
        printRaw("btlens: " + (name.map { "\($0): " } ?? "") + cause)
    }

    static func warning(file: String?, _ cause: String) {
        let name = file.map { $0 == "-" ? "<stdin>" : $0 }
        printRaw("btlens: " + (name.map { "\($0): " } ?? "") + "warning: " + cause)
    }
}

/// A progress line on stderr for long work, only when stderr is a terminal.
struct Progress {
    let label: String
    let total: Int64
    let enabled: Bool
    var lastPercent = -1

    init(label: String, total: Int64) {
        self.label = label
        self.total = total
        // Only worth showing for big files, and never into a pipe or log.
        self.enabled = Diagnostics.standardErrorIsTerminal && total > 32 << 20
    }

    mutating func update(_ done: Int64) {
        guard enabled, total > 0 else { return }
        let percent = Int(done * 100 / total)
        guard percent != lastPercent else { return }
        lastPercent = percent
        Diagnostics.writeStandardError("\r\u{1B}[K\(label): \(percent)%")
    }

    func finish() {
        guard enabled else { return }
        Diagnostics.writeStandardError("\r\u{1B}[K")
    }
}

func fileSize(_ path: String) -> Int64 {
    var st = stat()
    guard path != "-", stat(path, &st) == 0 else { return 0 }
    return Int64(st.st_size)
}
