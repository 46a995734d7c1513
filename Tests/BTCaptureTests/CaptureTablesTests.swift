import Testing
import BTCapture

@Suite("capture code tables")
struct CaptureTablesTests {
    @Test("the H4 indicator for a kind is the inverse of the kind for an indicator")
    func h4IndicatorRoundTrip() {
        var mapped: [RecordKind] = []
        for kind in RecordKind.allCases {
            guard let indicator = H4PacketType.indicator(for: kind) else { continue }
            #expect(H4PacketType.kind(indicator) == kind)
            mapped.append(kind)
        }
        #expect(mapped == [.command, .event, .acl, .sco, .iso])
        for indicator in UInt8.min...UInt8.max where H4PacketType.kind(indicator) != .unknown {
            #expect(H4PacketType.indicator(for: H4PacketType.kind(indicator)) == indicator)
        }
        #expect(H4PacketType.indicator(for: .note) == nil)
        #expect(H4PacketType.indicator(for: .unknown) == nil)
    }

    @Test("one direction bit: events are received whatever the record says, the rest only when known received")
    func receivedBit() {
        #expect(H4PacketType.isReceived(.event, .sent))
        #expect(H4PacketType.isReceived(.event, .unknown))
        #expect(H4PacketType.isReceived(.acl, .received))
        #expect(!H4PacketType.isReceived(.acl, .sent))
        #expect(!H4PacketType.isReceived(.acl, .unknown))
        #expect(!H4PacketType.isReceived(.command, .unknown))
    }

    @Test("pcap magics in both byte orders; the pcapng section type reads the same both ways")
    func pcapMagic() {
        #expect(PcapMagic.isPcap(0xA1B2_C3D4) && PcapMagic.isPcap(0xD4C3_B2A1))
        #expect(PcapMagic.isPcap(0xA1B2_3C4D) && PcapMagic.isPcap(0x4D3C_B2A1))
        #expect(PcapMagic.isNanosecondPcap(0xA1B2_3C4D) && PcapMagic.isNanosecondPcap(0x4D3C_B2A1))
        #expect(!PcapMagic.isNanosecondPcap(0xA1B2_C3D4) && !PcapMagic.isNanosecondPcap(0xD4C3_B2A1))
        #expect(!PcapMagic.isPcap(PcapMagic.pcapngSection) && !PcapMagic.isPcap(0x6274_736E))  // "btsn"
        #expect(PcapMagic.pcapngSection.byteSwapped == PcapMagic.pcapngSection)
    }
}
