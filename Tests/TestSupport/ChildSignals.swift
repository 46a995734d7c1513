import Foundation

/// Whether a child process is ready for a signal, read from /proc/PID/status (Linux). A test that signals a
/// child must first know the child installed its handler: before that, SIGINT or SIGTERM kills it outright,
/// and how long start-up takes depends on the machine's load, so no sleep is long enough. `pid` must be the
/// program itself, not a shell script that runs it: a shell catches SIGINT for itself while it waits.
public enum ChildSignals {
    /// Whether process `pid` has a handler installed for `signal` (its bit in SigCgt); nil when the process
    /// is gone (no status, or a zombie).
    public static func isCaught(_ signal: Int32, by pid: pid_t) -> Bool? {
        guard let status = read("/proc/\(pid)/status") else { return nil }
        var caught: UInt64?
        for line in status.split(separator: "\n") {
            if line.hasPrefix("State:") && line.dropFirst("State:".count).trimmingCharacters(in: .whitespaces).hasPrefix("Z") {
                return nil
            }
            if line.hasPrefix("SigCgt:") {
                caught = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            }
        }
        guard let caught, signal >= 1, signal <= 64 else { return nil }
        return caught & (UInt64(1) << UInt64(signal - 1)) != 0
    }

    /// Waits until `pid` catches `signal`: true as soon as it does, false when the process ended or `seconds`
    /// passed. `between` runs between checks and does the waiting (e.g. drains the child's output pipes so it
    /// never blocks on a full one); by default 10 ms.
    public static func waitUntilCaught(_ signal: Int32, by pid: pid_t, seconds: Double = 10,
                                       between: () -> Void = { usleep(10_000) }) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            guard let caught = isCaught(signal, by: pid) else { return false }
            if caught { return true }
            if Date() >= deadline { return false }
            between()
        }
    }

    /// A /proc file (its size reads as 0, so read until the end).
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
