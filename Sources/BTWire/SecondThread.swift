#if canImport(Glibc)
import Glibc
#endif

/// Work run on a thread of its own while the caller goes on, waited for with `join`. The work hands its result
/// back through what it captures (a class it fills), read after `join`. When no thread can be made, the work
/// runs at once on the caller's thread: the same result, later.
public final class SecondThread: @unchecked Sendable {
    private let work: @Sendable () -> Void
    @exclusivity(unchecked) private var thread = pthread_t()
    @exclusivity(unchecked) private var running = false

    /// Whether a second thread can run beside the caller's: only with a second processor.
    public static var isWorthwhile: Bool { sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1 }

    /// Whether the calling thread runs a second thread's work (what it shares with the caller's thread, such as a
    /// spill's read windows, it may keep apart).
    public static var isCurrent: Bool { pthread_getspecific(marker) != nil }

    /// Set on each second thread, nil elsewhere.
    private static let marker: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    public init(_ work: @escaping @Sendable () -> Void) {
        self.work = work
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(&thread, nil, { context in
            let me = Unmanaged<SecondThread>.fromOpaque(context!).takeRetainedValue()
            pthread_setspecific(SecondThread.marker, UnsafeRawPointer(bitPattern: 1))
            me.work()
            return nil
        }, context)
        if started == 0 {
            running = true
        } else {
            Unmanaged<SecondThread>.fromOpaque(context).release()
            work()
        }
    }

    /// Waits until the work is done (at once when it ran on the caller's thread).
    public func join() {
        guard running else { return }
        running = false
        pthread_join(thread, nil)
    }

    deinit { join() }
}
