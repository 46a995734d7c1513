import BTCapture

/// Lets a `ByteSource` on standard input (a pipe from `adb exec-out …` or `btmon -w /dev/stdout`) wait for
/// data with poll(2) instead of a blocking read, so a stop request wakes it at once and the consumer can flush
/// and audit while the stream is quiet.
public final class StreamWaiter: ByteSourceWaiter {
    let stop: LiveStop
    /// Runs when the stream has nothing more for now: once on catching up, then every `idleInterval`.
    public var onIdle: (() -> Void)?
    public var idleInterval: Int32 = 200
    /// While the format is being recognised: stop waiting as soon as the stream pauses with enough bytes to
    /// tell, rather than for the 4 KiB the opener would like (a live stream may take minutes to send them).
    public var sniffing = true
    /// Bytes that are enough to recognise a stream: a btsnoop file header, or a PacketLogger record header.
    public static let sniffBytes = 16

    public init(stop: LiveStop) { self.stop = stop }

    public func waitUntilReadable(_ source: ByteSource) -> Bool {
        var wait: Int32 = 0
        while true {
            switch stop.wait(for: source.fd, milliseconds: wait) {
            case .readable:
                return true
            case .stopped:
                return false
            case .timedOut:
                if sniffing {
                    if source.available >= Self.sniffBytes { return false }
                } else {
                    onIdle?()
                }
                wait = idleInterval
            }
        }
    }

    /// A pipe that reports end of file has no writer left: the stream is over.
    public func waitForGrowth(_ source: ByteSource) -> Bool { false }
}
