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
}
