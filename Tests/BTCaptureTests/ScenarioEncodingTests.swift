import BTCapture
import BTScenario
import BTWire
import Testing
import TestSupport

/// The builders' bytes against the specification (values written out by hand from Core 5.4 and FORMATS.md).
@Suite struct ScenarioEncodingTests {
    @Test func splitMix64MatchesTheReferenceSequence() {
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(rng.next() == 0x06C4_5D18_8009_454F)
        var bounded = SplitMix64(seed: 42)
        for _ in 0..<1_000 { #expect((3...9).contains(bounded.int(in: 3...9))) }
        #expect(bounded.next(below: 0) == 0)
    }

    @Test func commandsAndEvents() {
        // Disconnect 0x0040 reason 0x13: opcode 0x0406 LE, plen 3.
        #expect(HCICommand.disconnect(handle: 0x0040, reason: .remoteUserTerminatedConnection).packet
                == [0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        #expect(HCICommand.leSetScanEnable(true, filterDuplicates: false).packet == [0x0C, 0x20, 0x02, 0x01, 0x00])
        #expect(HCICommand.leSetExtendedScanEnable(true, filterDuplicates: 2).packet
                == [0x42, 0x20, 0x06, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00])
        #expect(HCIEvent.commandComplete(.leSetScanEnable, returnParameters: [0]).packet == [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        #expect(HCIEvent.commandStatus(.leCreateConnection).packet == [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20])
        #expect(HCIEvent.disconnectionComplete(handle: 0x0040, reason: .connectionTerminatedByLocalHost).packet
                == [0x05, 0x04, 0x00, 0x40, 0x00, 0x16])
        #expect(HCIEvent.numberOfCompletedPackets([(0x0040, 2), (0x0041, 10)]).packet
                == [0x13, 0x09, 0x02, 0x40, 0x00, 0x02, 0x00, 0x41, 0x00, 0x0A, 0x00])
        let peer = PeerAddress(BDAddr(rawValue: 0xD4_3A_2C_81_5E_07), type: LEParameter.randomAddress)
        let info = ConnectionCompleteInfo(handle: 0x0040, role: 0, peer: peer, interval: 36, latency: 0,
                                          supervisionTimeout: 500)
        #expect(HCIEvent.leConnectionComplete(info).packet
                == [0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x07, 0x5E, 0x81, 0x2C, 0x3A, 0xD4,
                    0x24, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00])
        #expect(HCIEvent.leEnhancedConnectionComplete(info).parameters.count == 1 + 30)
        let create = HCICommand.leCreateConnection(peer: peer, scanInterval: 0x60, scanWindow: 0x30,
                                                   parameters: ConnectionParameters(intervalMin: 24, intervalMax: 40,
                                                                                    supervisionTimeout: 500))
        #expect(create.parameters.count == 25)
        let extended = HCICommand.leExtendedCreateConnection(peer: peer, phyMask: 0x05, scanInterval: 0x60, scanWindow: 0x30,
                                                             parameters: ConnectionParameters(intervalMin: 24, intervalMax: 40,
                                                                                              supervisionTimeout: 500))
        #expect(extended.parameters.count == 10 + 2 * 16)
    }

    @Test func advertisingData() {
        let uuid = BluetoothUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0)
        let beacon = AdvertisingData([.flags(0x06), .iBeacon(uuid: uuid, major: 0x0102, minor: 0x0304, measuredPower: -59)])
        #expect(beacon.bytes == [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                                 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                 0x01, 0x02, 0x03, 0x04, 0xC5])
        // A 16-bit UUID in its 128-bit form travels byte-reversed.
        let full = AdvertisingData([.uuid128([BluetoothUUID(uuid16: 0x180D)], complete: true)])
        #expect(full.bytes == [0x11, 0x07, 0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00,
                               0x0D, 0x18, 0x00, 0x00])
        #expect(AdvertisingData([.completeName("Hi"), .txPower(-4), .uuid16([0x180D, 0x180F], complete: false)]).bytes
                == [0x03, 0x09, 0x48, 0x69, 0x02, 0x0A, 0xFC, 0x05, 0x02, 0x0D, 0x18, 0x0F, 0x18])
        // An oversized structure is cut, never a wrapped length byte.
        let huge = AdvertisingData([.manufacturer(company: CompanyID.apple, data: Array(repeating: 7, count: 300))])
        #expect(huge.bytes.count == 256 && huge.bytes[0] == 0xFF)
        // Legacy Set Advertising Data always carries 31 bytes.
        #expect(HCICommand.leSetAdvertisingData(beacon).parameters.count == 32)
    }

    @Test func advertisingReports() {
        let peer = PeerAddress(BDAddr(rawValue: 0x11_22_33_44_55_66), type: LEParameter.publicAddress)
        let data = AdvertisingData([.flags(0x06)])
        let legacy = HCIEvent.leAdvertisingReport([
            LegacyAdvertisingReport(eventType: 0, peer: peer, data: data, rssi: -60),
            LegacyAdvertisingReport(eventType: 4, peer: peer, data: .empty, rssi: -61),
        ])
        #expect(legacy.parameters == [0x02, 0x02,
                                      0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x03, 0x02, 0x01, 0x06, 0xC4,
                                      0x04, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00, 0xC3])
        let long = (0..<100).map { UInt8($0) }
        let chain = ExtendedAdvertisingReport.fragmented(baseType: 0, peer: peer, data: long, rssi: -70, sid: 1,
                                                         primaryPHY: 1, secondaryPHY: 2, txPower: 0, fragmentLength: 40)
        #expect(chain.map(\.data.count) == [40, 40, 20])
        #expect(chain.map { $0.eventType >> 5 } == [1, 1, 0])
        let event = HCIEvent.leExtendedAdvertisingReport([chain[2]])
        #expect(event.parameters.count == 2 + 24 + 20)
    }

    @Test func aclFragmentation() {
        let frame = L2CAPFrame.basic(cid: .att, payload: Array(repeating: 0xAB, count: 247))
        #expect(frame.count == 251)
        let host = ACLFragmenter.packets(handle: 0x0040, frame: frame, fromHost: true, dataLength: 27)
        #expect(host.count == 10)
        #expect(host.map { $0[1] >> 4 } == [0] + Array(repeating: 1, count: 9))
        #expect(host.map { Int($0[2]) } == Array(repeating: 27, count: 9) + [8])
        let controller = ACLFragmenter.packets(handle: 0x0041, frame: frame, fromHost: false, dataLength: 27)
        #expect(controller[0][0...1] == [0x41, 0x20])
        #expect(controller[1][0...1] == [0x41, 0x10])
        #expect(ACLFragmenter.packets(handle: 1, frame: [1, 0, 4, 0, 0x1E], fromHost: true, dataLength: 251)
                == [[0x01, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x1E]])
        #expect(L2CAPFrame.connectionParameterUpdateRequest(identifier: 7, ConnectionParameters(
            intervalMin: 80, intervalMax: 160, latency: 4, supervisionTimeout: 600))
                == [0x12, 0x07, 0x08, 0x00, 0x50, 0x00, 0xA0, 0x00, 0x04, 0x00, 0x58, 0x02])
    }

    @Test func gattServerAnswersLikeAServer() {
        let server = GATTServer(database: SampleProfiles.heartRateSensor)
        // MTU 23: three 16-bit services of 6 bytes fit in one Read By Group Type Response.
        let first = server.respond(to: ATTPDU.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: GATTUUID.primaryService))
        #expect(first == [0x11, 0x06, 0x01, 0x00, 0x07, 0x00, 0x00, 0x18, 0x08, 0x00, 0x0B, 0x00, 0x01, 0x18,
                          0x0C, 0x00, 0x13, 0x00, 0x0D, 0x18])
        #expect(server.respond(to: ATTPDU.readByGroupTypeRequest(start: 0x1F, end: 0xFFFF, type: GATTUUID.primaryService))
                == [0x01, 0x10, 0x1F, 0x00, 0x0A])
        #expect(server.respond(to: ATTPDU.findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0D, 0x18]))
                == [0x07, 0x0C, 0x00, 0x13, 0x00])
        // Heart Rate Measurement: declaration 0x000D (notify, value 0x000E), CCCD 0x000F.
        let layout = SampleProfiles.heartRateSensor.characteristic(GATTUUID.heartRateMeasurement)
        #expect(layout?.valueHandle == 0x000E && layout?.cccdHandle == 0x000F)
        #expect(server.respond(to: ATTPDU.readRequest(handle: 0x0013)) == [0x01, 0x0A, 0x13, 0x00, 0x02])
        #expect(server.respond(to: ATTPDU.writeRequest(handle: 0x000F, value: [1, 0])) == [0x13])
        #expect(server.value(at: 0x000F) == [1, 0])
        #expect(server.respond(to: ATTPDU.writeCommand(handle: 0x000F, value: [0, 0])) == nil)
        #expect(server.respond(to: ATTPDU.findInformationRequest(start: 0x000F, end: 0x000F)) == [0x05, 0x01, 0x0F, 0x00, 0x02, 0x29])
        // A long value: Read returns MTU − 1 bytes, Read Blob the rest.
        let logger = GATTServer(database: SampleProfiles.dataLogger(name: "L", log: Array(repeating: 9, count: 50)))
        let handle = logger.database.characteristic(uuid: SampleProfiles.loggerLog)?.valueHandle ?? 0
        #expect(logger.respond(to: ATTPDU.readRequest(handle: handle))?.count == 23)
        #expect(logger.respond(to: ATTPDU.readBlobRequest(handle: handle, offset: 44))?.count == 7)
        #expect(logger.respond(to: ATTPDU.readBlobRequest(handle: handle, offset: 51)) == [0x01, 0x0C] + [UInt8(handle), 0, 0x07])
    }

    @Test func packetLoggerRecords() throws {
        let dir = try TemporaryDirectory()
        for bigEndian in [false, true] {
            let path = dir.file(bigEndian ? "be.pklg" : "le.pklg")
            let writer = try PacketLoggerWriter(path: path, bigEndian: bigEndian)
            try writer.write(kind: .acl, direction: .sent, timestamp: Timestamp(unixMicroseconds: 1_768_471_200_000_123),
                             bytes: [0x40, 0x00, 0x00, 0x00])
            try writer.flush()
            let bytes = try TemporaryDirectory.contents(of: path)
            // len 13 (9 + 4), seconds 0x6968BAA0, microseconds 123, type 02.
            let le: [UInt8] = [0x0D, 0, 0, 0, 0xA0, 0xBA, 0x68, 0x69, 0x7B, 0, 0, 0]
            let be: [UInt8] = [0, 0, 0, 0x0D, 0x69, 0x68, 0xBA, 0xA0, 0, 0, 0, 0x7B]
            #expect(bytes == (bigEndian ? be : le) + [0x02, 0x40, 0x00, 0x00, 0x00])
        }
    }

    @Test func pcapPseudoHeaders() throws {
        let dir = try TemporaryDirectory()
        let event: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        for (linktype, prefix) in [(187, [UInt8]([0x04])), (201, [0, 0, 0, 1, 0x04]), (254, [0, 0, 0, 3])] {
            let path = dir.file("\(linktype).pcap")
            let writer = try PcapWriter(path: path, linktype: linktype)
            try writer.write(kind: .event, direction: .received, timestamp: Timestamp(unixMicroseconds: 1_768_471_200_000_007),
                             bytes: event)
            try writer.close()
            let bytes = try TemporaryDirectory.contents(of: path)
            #expect(bytes.count == 24 + 16 + prefix.count + event.count)
            #expect(Array(bytes[0..<4]) == [0xD4, 0xC3, 0xB2, 0xA1])  // microsecond magic, little-endian writer
            #expect(Int(bytes[20]) | Int(bytes[21]) << 8 == linktype)
            #expect(Array(bytes[24..<32]) == [0xA0, 0xBA, 0x68, 0x69, 0x07, 0, 0, 0])
            #expect(Array(bytes[40...]) == prefix + event)
        }
        #expect(throws: CaptureError.self) { try PcapWriter(path: dir.file("no/such/dir.pcap"), linktype: 187) }
    }

    /// Writers report the cause only; whoever reports it names the file, once.
    @Test func writerErrorsDoNotNameTheFile() throws {
        let dir = try TemporaryDirectory()
        let missing = "No such file or directory"
        let causes: [() throws -> Void] = [
            { _ = try BTSnoopWriter(path: dir.file("no/such/dir.btsnoop"), datalink: BTSnoopDatalink.h4) },
            { _ = try PacketLoggerWriter(path: dir.file("no/such/dir.pklg"), bigEndian: false) },
            { _ = try PcapWriter(path: dir.file("no/such/dir.pcap"), linktype: 187) },
            { _ = try BenchmarkGenerator.write(to: dir.file("no/such/dir.btsnoop"), targetBytes: 1) },
        ]
        for cause in causes {
            let error = #expect(throws: CaptureError.self) { try cause() }
            #expect(error?.message == missing)
        }
    }
}
