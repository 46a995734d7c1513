import Testing
import BTWire
import BTCapture
import BTDecode
import BTScenario
import BTTrack

/// ATT over an EATT bearer (L2CAP credit based channel, SPSM 0x0027) with SDUs larger than the MPS, so every
/// long PDU crosses in several K-frames: the tracker must see the same procedures as over CID 4.
@Suite("EATT tracking")
struct EnhancedATTTrackingTests {
    @Test("eatt-logger: discovery, a Read Blob chain, a write and notifications over K-frames, nothing malformed")
    func loggerOverEATT() throws {
        let h = try TrackingHarness.run(scenario: EnhancedATTLogger.name)
        #expect(h.decoder.issues.count == 0)
        let model = h.tracker.finish()
        let link = try #require(model.connections.first)
        #expect(model.connections.count == 1)
        #expect(link.disconnectReason == .connectionTerminatedByLocalHost)
        // The logger service and its characteristics were discovered over the EATT bearer.
        #expect(link.gatt.services.map(\.uuid) == [SampleProfiles.loggerService])
        let log = try #require(link.gatt.characteristics.first { $0.uuid == SampleProfiles.loggerLog })
        let stream = try #require(link.gatt.characteristics.first { $0.uuid == SampleProfiles.loggerStream })
        // 600 bytes at MTU 247: one Read (246 bytes) and two Read Blobs, each answer in up to four K-frames.
        let reads = try #require(link.usage[log.valueHandle])
        #expect(reads.reads == 1 && reads.readBlobs == 2)
        #expect(link.runs.contains { $0.kind == .readBlob })
        // Every request was answered and paired although requests and responses travel on different CIDs.
        #expect(link.transactions.timeouts == 0 && link.transactions.unansweredAtEnd == 0)
        #expect(link.transactions.unsolicitedResponses == 0)
        #expect(link.transactions.completed == link.attCounts.filter { ATTOpcode(rawValue: $0.key).isRequest }.map(\.value).reduce(0, +))
        // Subscribed, then five 244-byte notifications, each value joined from four K-frames.
        let notified = try #require(link.usage[stream.valueHandle])
        #expect(notified.notifications == EnhancedATTLogger.notifications)
        // The last value's first 64 bytes (what is kept): more than the 59 value bytes of a first K-frame.
        let last = (0..<64).map { UInt8($0 + EnhancedATTLogger.notifications - 1) }
        #expect(notified.lastValue == last)
        #expect(link.gatt.cccdValues.values.contains(1))
    }
}
