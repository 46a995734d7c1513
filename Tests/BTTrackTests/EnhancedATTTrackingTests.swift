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
    static let mtu: UInt16 = 247
    /// Smaller than the MTU: a 247-byte Read Response crosses in four K-frames.
    static let mps: UInt16 = 64
    static let log = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    static func run() -> (harness: TrackingHarness, logHandle: UInt16?) {
        var logHandle: UInt16?
        let h = TrackingHarness.run { s in
            s.setUpController()
            let link = s.connect(to: SampleDevices.loggerA, handle: 0x0040,
                                 parameters: .interval(minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50),
                                                       timeoutMicroseconds: Micros.seconds(4)),
                                 scanInterval: HCIUnits.slots(microseconds: Micros.ms(60)),
                                 scanWindow: HCIUnits.slots(microseconds: Micros.ms(60)))
            let att = ATTChannel(script: s, connection: link,
                                 server: GATTServer(database: SampleProfiles.dataLogger(name: "Logger A", log: log),
                                                    rxMTU: mtu), clientSide: .local)
            att.openEnhancedBearer(mtu: mtu, mps: mps)
            let chars = att.discoverPrimaryServices(uuid: SampleProfiles.loggerService).flatMap(att.discoverCharacteristics)
            logHandle = chars.first { $0.uuid == SampleProfiles.loggerLog }?.valueHandle
            if let logHandle { _ = att.read(logHandle) }
            s.wait(ms: 500)
            s.disconnect(link)
        }
        return (h, logHandle)
    }

    @Test("a long read over EATT K-frames: discovery, Read and Read Blob chain, value joined, nothing malformed")
    func longReadOverEATT() throws {
        let (h, logHandle) = Self.run()
        let handle = try #require(logHandle)
        #expect(h.decoder.issues.count == 0)
        let model = h.tracker.finish()
        let link = try #require(model.connections.first)
        #expect(link.disconnectReason == .connectionTerminatedByLocalHost)
        // The logger service and its characteristics were discovered over the EATT bearer.
        #expect(link.gatt.services.contains { $0.uuid == SampleProfiles.loggerService })
        #expect(link.gatt.characteristics.contains { $0.valueHandle == handle })
        // 600 bytes at MTU 247: one Read (246 bytes) and Read Blobs for the rest, each answer in K-frames.
        let usage = try #require(link.usage[handle])
        #expect(usage.reads == 1 && usage.readBlobs == 2)
        #expect(link.transactions.timeouts == 0 && link.transactions.unansweredAtEnd == 0 && link.transactions.unsolicitedResponses == 0)
        #expect(link.runs.contains { $0.kind == .readBlob })
        // Every request was paired: responses arrived whole, never as partial K-frames.
        #expect(link.attCounts[ATTOpcode.readBlobResponse.rawValue] == 2)
    }
}
