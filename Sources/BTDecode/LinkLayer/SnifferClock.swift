/// The sniffer's own clock on the capture's time line: where a container gives the time the sniffer took the
/// packet at (nRF v3 firmware time, Ubertooth's clk100ns), packets are timed by it, anchored to the pcap time, so
/// the host's USB and scheduling jitter in the pcap timestamps does not blur connection events. nRF v0–v2 give
/// the µs from the end of the previous packet instead: the start is rebuilt as the previous start, plus its time
/// on air, plus the delta (LINKLAYER.md §5), over consecutive packet counters only (a dropped packet's time is
/// unknown). The pcap time stays the wall-clock anchor: the clock re-anchors when the two drift apart by more
/// than `resyncNanoseconds` (a sniffer reset, a wrap the packets did not show, a second sniffer). A delta of 0 is
/// no delta (SweynTooth writes 0: packets are at least T_IFS apart); PHDR and 251 have only the pcap time.
public struct SnifferClock: Sendable {
    /// Beyond this the sniffer's clock and the pcap time no longer tell the same story.
    public static let resyncNanoseconds: Int64 = 1_000_000_000

    var started = false
    var lastRaw: UInt32 = 0
    /// Ticks since the anchor (the 32-bit counter unwrapped).
    var ticks: Int64 = 0
    var anchorNanoseconds: Int64 = 0
    /// Deltas: the previous packet's start, its time on air and its packet counter (nil: the chain is broken).
    var previousStart: Int64 = 0
    var previousAirNanoseconds: Int64 = 0
    var previousCounter: UInt16?

    public init() {}

    /// Nanoseconds on the capture's time line for `packet`, whose record has pcap time `captureNanoseconds`.
    public mutating func nanoseconds(_ packet: LLCapturedPacket, captureNanoseconds: Int64) -> Int64 {
        guard let raw = packet.snifferTime else { return captureNanoseconds }
        if packet.snifferTimeIsDelta { return rebuilt(packet, delta: raw, captureNanoseconds: captureNanoseconds) }
        let unit = Int64(packet.snifferTimeUnitNanoseconds)
        if started {
            // Forward by the 32-bit difference: wraps (71 min of nRF µs, 429 s of 100 ns ticks) pass unseen.
            ticks &+= Int64(raw &- lastRaw)
            lastRaw = raw
            let t = anchorNanoseconds &+ ticks &* unit
            if Self.agrees(t, captureNanoseconds) { return t }
        }
        started = true
        lastRaw = raw
        ticks = 0
        anchorNanoseconds = captureNanoseconds
        return captureNanoseconds
    }

    static func agrees(_ t: Int64, _ captureNanoseconds: Int64) -> Bool {
        let drift = t &- captureNanoseconds
        return drift < resyncNanoseconds && drift > -resyncNanoseconds
    }

    mutating func rebuilt(_ packet: LLCapturedPacket, delta: UInt32, captureNanoseconds: Int64) -> Int64 {
        var t = captureNanoseconds
        if delta != 0, let previous = previousCounter, let counter = packet.snifferPacketCounter,
           counter == previous &+ 1 {
            let candidate = previousStart &+ previousAirNanoseconds &+ Int64(delta) &* Int64(packet.snifferTimeUnitNanoseconds)
            if Self.agrees(candidate, captureNanoseconds) { t = candidate }
        }
        previousStart = t
        previousAirNanoseconds = packet.airNanoseconds
        previousCounter = packet.snifferPacketCounter
        return t
    }
}
