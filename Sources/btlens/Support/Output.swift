#if canImport(Glibc)
import Glibc
#endif
import Foundation

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
        // Output to the terminal the progress line is on goes on a line of its own.
        if standardOutputIsTerminal { Diagnostics.clearProgress() }
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

    private static let lock = NSLock()
    /// Whether a progress line is on the terminal (with no newline after it).
    nonisolated(unsafe) private static var progressShown = false

    /// Writes `text`, on a line cleared of the progress line first.
    static func writeStandardError(_ text: String) {
        lock.withLock {
            write(progressShown ? eraseLine + text : text)
            progressShown = false
        }
    }

    static let eraseLine = "\r\u{1B}[K"

    /// Draws `line` (the `Progress` line) over the one before; the next message or output clears it first.
    static func drawProgress(_ line: String) {
        lock.withLock {
            write(eraseLine + line)
            progressShown = true
        }
    }

    /// Clears the progress line, if one is shown.
    static func clearProgress() {
        lock.withLock {
            guard progressShown else { return }
            write(eraseLine)
            progressShown = false
        }
    }

    private static func write(_ text: String) {
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
