import Testing
import BTCapture
import BTDecode

@Suite("Sniffer clock")
struct SnifferClockTests {
    /// An empty data PDU's header (LLID 1, Length 0): 80 µs on LE 1M, 44 µs on LE 2M.
    static let emptyPDU: [UInt8] = [0x01, 0x00]
    /// A 27-byte payload: 296 µs on 1M.
    static let fullPDU: [UInt8] = [0x02, 27] + [UInt8](repeating: 0, count: 27)

    static func packet(_ raw: UInt32?, unit: UInt32 = 1000, delta: Bool = false, counter: UInt16? = nil,
                       pdu: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                       phy: LLPHY = .le1M) -> LLCapturedPacket {
        var p = LLCapturedPacket(accessAddress: 0, pdu: pdu)
        p.snifferPacketCounter = counter
        p.phy = phy
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

    @Test("nRF v0–v2 deltas: start = previous start + its time on air + delta, over consecutive packet counters")
    func deltas() {
        Self.emptyPDU.withUnsafeBytes { empty in
            Self.fullPDU.withUnsafeBytes { full in
                var clock = SnifferClock()
                // The first delta means nothing: the pcap time.
                #expect(clock.nanoseconds(Self.packet(9_999, delta: true, counter: 7, pdu: full), captureNanoseconds: 1_000_000) == 1_000_000)
                // 296 µs on air (1+4+2+27+3 bytes at 1M), then T_IFS 150 µs; the pcap time is 3 ms late.
                #expect(clock.nanoseconds(Self.packet(150, delta: true, counter: 8, pdu: empty), captureNanoseconds: 4_000_000)
                        == 1_446_000)
                // 80 µs empty PDU, then 29,920 µs to the next event.
                #expect(clock.nanoseconds(Self.packet(29_920, delta: true, counter: 9, pdu: empty, phy: .le2M),
                                          captureNanoseconds: 31_000_000) == 31_446_000)
                // 44 µs at 2M (2+4+2+0+3 bytes at 4 µs).
                #expect(clock.nanoseconds(Self.packet(150, delta: true, counter: 10, pdu: empty), captureNanoseconds: 32_000_000)
                        == 31_640_000)
                // Packet 11 was dropped on the way: its time is unknown, the pcap time anchors again.
                #expect(clock.nanoseconds(Self.packet(150, delta: true, counter: 12, pdu: empty), captureNanoseconds: 40_000_000)
                        == 40_000_000)
                // A delta of 0 (SweynTooth) is no delta.
                #expect(clock.nanoseconds(Self.packet(0, delta: true, counter: 13, pdu: empty), captureNanoseconds: 41_000_000)
                        == 41_000_000)
                // Rebuilt times more than a second from the pcap time are not believed.
                #expect(clock.nanoseconds(Self.packet(2_000_000, delta: true, counter: 14, pdu: empty),
                                          captureNanoseconds: 41_500_000) == 41_500_000)
            }
        }
    }

    @Test("time on air per PHY, with a decrypted PDU's MIC")
    func airTime() {
        Self.fullPDU.withUnsafeBytes { full in
            #expect(Self.packet(nil, pdu: full).airNanoseconds == 296_000)
            #expect(Self.packet(nil, pdu: full, phy: .le2M).airNanoseconds == 152_000)
            var coded = Self.packet(nil, pdu: full, phy: .coded)
            // S8: 376 µs, then (2+27+3) bytes and 3 bits at 8 µs a bit.
            #expect(coded.airNanoseconds == 376_000 + (32 * 8 + 3) * 8_000)
            coded.codingIndicator = 1
            #expect(coded.airNanoseconds == 376_000 + (32 * 8 + 3) * 2_000)
            var decrypted = Self.packet(nil, pdu: full)
            decrypted.encryption = .decrypted
            #expect(decrypted.airNanoseconds == 328_000)
        }
    }
}
