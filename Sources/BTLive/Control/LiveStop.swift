#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The signal that arrived (0: none). Globals, because a signal handler is a C function that cannot capture;
/// atomics, because the handler runs between any two instructions of the read loop.
private let pendingSignal = Atomic<Int32>(0)
/// The write end of the wake pipe of the `LiveStop` that owns SIGINT/SIGTERM (-1: none).
private let signalWakeDescriptor = Atomic<Int32>(-1)

/// Ends a live capture cleanly. SIGINT/SIGTERM (or `request()`) set a flag and write a byte to a pipe that
/// every wait in btlens live polls next to its own descriptor, so a read blocked on a quiet socket or pipe
/// wakes at once rather than at the next timeout, and the loop stops between records, never inside one.
public final class LiveStop: @unchecked Sendable {
    /// Readable once a stop was requested; never drained, so every later wait returns at once too.
    let wakeRead: Int32
    let wakeWrite: Int32
    private let requested = Atomic<Bool>(false)
    private let ownsSignals = Atomic<Bool>(false)

    public init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                // Non-blocking: the signal handler must never block on a full pipe (one byte is enough anyway).
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        } else {
            fds = [-1, -1]
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        if ownsSignals.load(ordering: .relaxed) { signalWakeDescriptor.store(-1, ordering: .relaxed) }
        if wakeRead >= 0 { close(wakeRead) }
        if wakeWrite >= 0 { close(wakeWrite) }
    }

    /// Routes SIGINT and SIGTERM to this stop. The handler only stores the signal number and writes one byte
    /// (both async-signal-safe); it resets itself (SA_RESETHAND), so a second Ctrl-C kills a stuck process
    /// the usual way. Without SA_RESTART, a blocking call in progress returns EINTR.
    public func installSignalHandlers() {
        signalWakeDescriptor.store(wakeWrite, ordering: .relaxed)
        ownsSignals.store(true, ordering: .relaxed)
        pendingSignal.store(0, ordering: .relaxed)
        let handler: @convention(c) (Int32) -> Void = { signo in
            let saved = errno
            pendingSignal.store(signo, ordering: .relaxed)
            let fd = signalWakeDescriptor.load(ordering: .relaxed)
            if fd >= 0 {
                var byte: UInt8 = 1
                _ = write(fd, &byte, 1)
            }
            errno = saved
        }
        // A parent may have spawned us with them blocked; then they would stay pending forever.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signo in [SIGINT, SIGTERM] {
            sigaddset(&unblock, signo)
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handler
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)  // 0x80000000
            sigaction(signo, &action, nil)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// Asks the loop to end after the current record (tests, and library users without signals).
    public func request() {
        requested.store(true, ordering: .relaxed)
        if wakeWrite >= 0 {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    public var isRequested: Bool {
        requested.load(ordering: .relaxed) || (ownsSignals.load(ordering: .relaxed) && pendingSignal.load(ordering: .relaxed) != 0)
    }

    /// The signal that ended the capture, if one did.
    public var signal: Int32? {
        guard ownsSignals.load(ordering: .relaxed) else { return nil }
        let s = pendingSignal.load(ordering: .relaxed)
        return s == 0 ? nil : s
    }

    public enum WaitResult: Equatable, Sendable {
        case readable, timedOut, stopped
    }

    /// Waits until `fd` has data (or its writer hung up), `milliseconds` pass (-1: no limit), or a stop is
    /// requested; `fd` nil only sleeps. One poll(2) over the descriptor and the wake pipe.
    public func wait(for fd: Int32?, milliseconds: Int32) -> WaitResult {
        if isRequested { return .stopped }
        // On the stack: this runs once per read, and a socket read is one record.
        return withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { fds -> WaitResult in
            fds[0] = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            fds[1] = pollfd(fd: fd ?? -1, events: Int16(POLLIN), revents: 0)  // poll skips a negative fd
            while true {
                let n = poll(fds.baseAddress, 2, milliseconds)
                if isRequested { return .stopped }
                if n < 0 {
                    if errno == EINTR { continue }
                    // poll itself failed (EINVAL, ENOMEM): let the read report the descriptor's real state.
                    return .readable
                }
                if n == 0 { return .timedOut }
                if fds[0].revents != 0 { return .stopped }
                return .readable
            }
        }
    }
}
