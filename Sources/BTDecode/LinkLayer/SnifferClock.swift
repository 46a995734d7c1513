/// The sniffer's own clock on the capture's time line: where a container gives the time the sniffer took the
/// packet at (nRF v3 firmware time, Ubertooth's clk100ns), packets are timed by it, anchored to the pcap time, so
/// the host's USB and scheduling jitter in the pcap timestamps does not blur connection events. The pcap time
/// stays the wall-clock anchor: the clock re-anchors when the two drift apart by more than `resyncNanoseconds`
/// (a sniffer reset, a wrap the packets did not show, a second sniffer). Containers without an absolute clock
/// (nRF v0–v2 deltas, PHDR, 251) use the pcap time.
public struct SnifferClock: Sendable {
    /// Beyond this the sniffer's clock and the pcap time no longer tell the same story.
    public static let resyncNanoseconds: Int64 = 1_000_000_000

    var started = false
    var lastRaw: UInt32 = 0
    /// Ticks since the anchor (the 32-bit counter unwrapped).
    var ticks: Int64 = 0
    var anchorNanoseconds: Int64 = 0

    public init() {}

    /// Nanoseconds on the capture's time line for `packet`, whose record has pcap time `captureNanoseconds`.
    public mutating func nanoseconds(_ packet: LLCapturedPacket, captureNanoseconds: Int64) -> Int64 {
        guard let raw = packet.snifferTime, !packet.snifferTimeIsDelta else { return captureNanoseconds }
        let unit = Int64(packet.snifferTimeUnitNanoseconds)
        if started {
            // Forward by the 32-bit difference: wraps (71 min of nRF µs, 429 s of 100 ns ticks) pass unseen.
            ticks &+= Int64(raw &- lastRaw)
            lastRaw = raw
            let t = anchorNanoseconds &+ ticks &* unit
            let drift = t &- captureNanoseconds
            if drift < Self.resyncNanoseconds && drift > -Self.resyncNanoseconds { return t }
        }
        started = true
        lastRaw = raw
        ticks = 0
        anchorNanoseconds = captureNanoseconds
        return captureNanoseconds
    }
}
