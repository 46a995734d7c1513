import Testing
import BTCapture
import BTDecode

@Suite("Sniffer clock")
struct SnifferClockTests {
    static func packet(_ raw: UInt32?, unit: UInt32 = 1000, delta: Bool = false) -> LLCapturedPacket {
        var p = LLCapturedPacket(accessAddress: 0, pdu: UnsafeRawBufferPointer(start: nil, count: 0))
        p.snifferTime = raw
        p.snifferTimeUnitNanoseconds = unit
        p.snifferTimeIsDelta = delta
        return p
    }

    @Test("packets are timed by the sniffer's clock from the first packet's pcap time, across the 32-bit wrap")
    func wrap() {
        var clock = SnifferClock()
        // nRF µs near the wrap; pcap times jitter by ±2 ms around the truth.
        #expect(clock.nanoseconds(Self.packet(UInt32.max - 999), captureNanoseconds: 5_000_000_000) == 5_000_000_000)
        #expect(clock.nanoseconds(Self.packet(UInt32.max - 499), captureNanoseconds: 5_002_300_000) == 5_000_500_000)
        // 1000 µs after the first: the counter wrapped to 0.
        #expect(clock.nanoseconds(Self.packet(0), captureNanoseconds: 4_999_000_000) == 5_001_000_000)
        // Ubertooth's 100 ns ticks.
        var ppi = SnifferClock()
        _ = ppi.nanoseconds(Self.packet(10, unit: 100), captureNanoseconds: 1_000)
        #expect(ppi.nanoseconds(Self.packet(30, unit: 100), captureNanoseconds: 9_000) == 3_000)
    }

    @Test("a clock that drifts from the pcap time by over a second re-anchors; no clock or deltas: the pcap time")
    func resync() {
        var clock = SnifferClock()
        _ = clock.nanoseconds(Self.packet(1_000), captureNanoseconds: 0)
        // The sniffer restarted: its clock went back, the pcap time went on.
        #expect(clock.nanoseconds(Self.packet(10), captureNanoseconds: 3_000_000_000) == 3_000_000_000)
        #expect(clock.nanoseconds(Self.packet(1_010), captureNanoseconds: 3_000_900_000) == 3_001_000_000)
        #expect(clock.nanoseconds(Self.packet(nil), captureNanoseconds: 7) == 7)
        #expect(clock.nanoseconds(Self.packet(500, delta: true), captureNanoseconds: 9) == 9)
    }
}
