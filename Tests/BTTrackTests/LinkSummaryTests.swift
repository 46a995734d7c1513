import Foundation
import Testing
import BTWire
import BTCapture
@testable import BTTrack

/// What `btlens audit` keeps of a judged link it lets go (`LinkRetirement.Keeping.summary`).
@Suite("Link summaries")
struct LinkSummaryTests {
    static func link(id: Int, number: Int) -> Connection {
        let start = RecordRef(number: number, offset: Int64(16 * number), timestamp: Timestamp(nanoseconds: Int64(number) * 1_000), controller: 2)
        let c = Connection(id: id, controller: 2, handle: 0x40, transport: .le, start: start, implicitStart: false,
                           options: TrackerOptions())
        c.peerAddress = BDAddr(rawValue: 0xC0FF_EE00_0000 + UInt64(id))
        c.peerLink = 3
        c.ownership = id.isMultiple(of: 5) ? .os(reason: .bondedAccessory) : .app
        return c
    }

    @Test("a summary says what the link says")
    func sameFacts() {
        let c = Self.link(id: 7, number: 40)
        c.end = RecordRef(number: 90, offset: 900, timestamp: Timestamp(nanoseconds: 90_000), controller: 2, length: 7)
        c.disconnectReason = .remoteUserTerminatedConnection
        c.role = .peripheral
        let s = LinkSummary(c)
        #expect(s.id == 7 && s.controller == 2 && s.handle == 0x40 && s.transport == .le && s.role == .peripheral)
        #expect(s.start == c.start && s.end == c.end && s.connectRequestedTime == nil)
        #expect(s.start.length == c.start.length && s.end?.length == 7 && s.start.offset == c.start.offset)
        #expect(s.peerAddress == c.peerAddress && s.peerLink == 3 && s.disconnectReason == .remoteUserTerminatedConnection)
        #expect(s.linkName == c.linkName && s.ownership == .app && !s.implicitStart)
        // Half the link object it replaces (256 bytes), and kept side by side in one array.
        #expect(MemoryLayout<LinkSummary>.stride <= 128)
        // Plain bytes: `btlens energy` sets summaries aside in a file and reads them back.
        #expect(_isPOD(LinkSummary.self))
    }

    @Test("summaries in close order are read in id order, in memory or set aside in a file", arguments: [1, 2, 7, 300])
    func readInIDOrder(count: Int) throws {
        // A deterministic shuffle: ids 1…count in an order with long and short cycles.
        var ids = Array(1...count)
        var state: UInt64 = 0x5EED
        for i in ids.indices.reversed() where i > 0 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            ids.swapAt(i, Int(state >> 33) % (i + 1))
        }
        let directory = FileManager.default.temporaryDirectory.path
        for var stored in [SetAsideArray<LinkSummary>(), SetAsideArray(spillingTo: directory, kept: 1, readAhead: 256)] {
            for id in ids { stored.append(LinkSummary(Self.link(id: id, number: 10 * id))) }
            let links = LinkSummaries(summaries: stored, order: stored.orderByID(), connections: [])
            #expect(links.map(\.id) == Array(1...count))
            // Each summary read whole: its other fields came with its id.
            #expect(links.allSatisfy { $0.start.number == 10 * $0.id && $0.ownership.isApp == !$0.id.isMultiple(of: 5) })
            // Read again backwards (no window ahead of the reads helps then): the same.
            #expect(links.indices.reversed().map { links[$0].id } == Array((1...count).reversed()))
            #expect(stored.failure == nil)
        }
        // Already in order: nothing to permute.
        var inOrder = SetAsideArray<LinkSummary>()
        for id in 1...count { inOrder.append(LinkSummary(Self.link(id: id, number: 10 * id))) }
        #expect(inOrder.orderByID() == nil)
    }
}
