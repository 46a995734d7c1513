import BTCapture

/// `btlens live -`: a btsnoop (or PacketLogger) stream on standard input, opened through the same
/// `OpenedCapture` path as files, with a `ByteSource` that polls instead of blocking so a stop request or a
/// quiet stream never leaves the process stuck in read(2).
public final class LiveStreamInput {
    /// nil when a stop was requested before the stream said what it is.
    public let capture: OpenedCapture?
    /// Set `onIdle` here to flush and audit while the stream is quiet.
    public let waiter: StreamWaiter
    let source: ByteSource

    /// Waits until the stream's first bytes show its format. Throws what `OpenedCapture` throws (empty, not a
    /// capture), and for pcap/pcapng, whose libpcap reader cannot wait for data without blocking.
    public init(fd: Int32 = 0, stop: LiveStop, issues: IssueLog) throws {
        source = ByteSource(fd: fd, ownsDescriptor: false)
        source.allowGrowth = true
        waiter = StreamWaiter(stop: stop)
        source.waiter = waiter
        do {
            let opened = try OpenedCapture.open(source: source, issues: issues)
            if case .pcap = opened {
                throw CaptureError(.unsupportedLinktype,
                                   "btlens live reads btsnoop or PacketLogger streams, not pcap/pcapng; stream btsnoop instead (btmon -w /dev/stdout, or Android's btsnoop_hci.log)")
            }
            capture = opened
        } catch let error as CaptureError where stop.isRequested && error.code != .unsupportedLinktype {
            // Interrupted before the stream said anything: an empty capture, not an error.
            capture = nil
        }
        waiter.sniffing = false
    }
}
