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

    @Test("linktype names and sniffer ranges come from the named values")
    func linktypes() {
        #expect(Linktype.name(Linktype.bluetoothHCIH4) == "Bluetooth HCI H4")
        #expect(Linktype.name(201) == "Bluetooth HCI H4 with pseudo-header")
        #expect(Linktype.name(254) == "Bluetooth Linux monitor")
        #expect(Linktype.name(1) == "Ethernet")
        #expect(Linktype.name(113) == "Linux cooked")
        #expect(Linktype.name(999) == "linktype 999")
        #expect(Linktype.isLinkLayerSniffer(147) && Linktype.isLinkLayerSniffer(162) && !Linktype.isLinkLayerSniffer(163))
        #expect(Linktype.isLinkLayerSniffer(Linktype.nordicBLE) && !Linktype.isLinkLayerSniffer(Linktype.bluetoothHCIH4))
    }

    @Test("every PacketLogger type is known; every monitor opcode has a name")
    func namedTypes() {
        typealias T = PacketLoggerReader.RecordType
        #expect(T.known == [0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0A, 0x0B, 0x12, 0x13,
                            0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE])
        #expect(MonitorOpcode.names.count == 20)
        #expect((0...19).allSatisfy { MonitorOpcode.names[UInt16($0)] != nil })
        #expect(MonitorOpcode.names[MonitorOpcode.newIndex] == "New Index")
        #expect(MonitorOpcode.names[MonitorOpcode.isoRX] == "ISO RX")
    }
}
