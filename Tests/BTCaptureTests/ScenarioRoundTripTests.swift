import BTCapture
import BTScenario
import BTWire
import Testing
import TestSupport

/// Every scenario in every format, read back through `OpenedCapture` and the readers: the same HCI packets
/// with the same directions and microsecond timestamps, on controller 0, plus what each container adds.
@Suite struct ScenarioRoundTripTests {
    @Test(arguments: ScenarioRegistry.names, ScenarioFormat.hciFormats)
    func sameHCIPacketsInEveryFormat(name: String, format: ScenarioFormat) throws {
        let reference = try loadScenario(name).hciPackets
        let capture = try loadScenario(name, format: format)
        #expect(capture.info.format == format.captureFormat)
        #expect(capture.issueCount == 0)
        let packets = capture.hciPackets
        #expect(packets.count == reference.count)
        #expect(reference.count > 100)
        for (expected, got) in zip(reference, packets) {
            #expect(got.kind == expected.kind)
            #expect(got.payload == expected.payload)
            #expect(got.microseconds == expected.microseconds)
            #expect(got.controller == 0)
            if format.recordsACLDirection || got.kind != .acl {
                #expect(got.direction == expected.direction)
            } else {
                #expect(got.direction == .unknown)
            }
        }
    }

    @Test(arguments: ScenarioRegistry.names)
    func referenceDirectionsAndTimes(name: String) throws {
        let packets = try loadScenario(name).hciPackets
        #expect(packets.first?.microseconds == scenarioStartMicroseconds)
        #expect(packets.first.flatMap(Wire.command)?.opcode == 0x0C03)  // HCI Reset opens every scenario
        #expect(zip(packets, packets.dropFirst()).allSatisfy { $0.microseconds <= $1.microseconds })
        #expect(packets.filter { $0.kind == .command }.allSatisfy { $0.direction == .sent })
        #expect(packets.filter { $0.kind == .event }.allSatisfy { $0.direction == .received })
        let acl = packets.filter { $0.kind == .acl }
        if name == Beacons.name {
            #expect(acl.isEmpty)  // a scanner only: no links
        } else {
            #expect(acl.contains { $0.direction == .sent })
            #expect(acl.contains { $0.direction == .received })
        }
    }

    @Test(arguments: ScenarioRegistry.names, [ScenarioFormat.btsnoopMonitor, .pcapMonitor])
    func monitorFormatsAnnounceTheController(name: String, format: ScenarioFormat) throws {
        let records = try loadScenario(name, format: format).records
        let preamble = Array(records.prefix(4))
        #expect(preamble.map(\.kind) == [.controllerAdded, .controllerInfo, .controllerOpened, .note])
        #expect(preamble.map(\.sourceType) == [0, 10, 8, 12])
        #expect(preamble.allSatisfy { $0.microseconds == scenarioStartMicroseconds && $0.controller == 0 })
        let address = SampleDevices.phone.bytes
        #expect(preamble[0].payload == [0, ControllerIdentity.usbBus] + address + Array("hci0".utf8) + [0, 0, 0, 0])
        #expect(preamble[1].payload == address + [0x02, 0x00])
        #expect(preamble[2].payload.isEmpty)
        #expect(preamble[3].payload == Array("btlens-scenario \(name)".utf8) + [0])
        #expect(records.allSatisfy { $0.controller == 0 })
    }

    @Test(arguments: ScenarioRegistry.names)
    func notesAppearWhereTheFormatHasThem(name: String) throws {
        let monitor = try loadScenario(name, format: .btsnoopMonitor).records.filter { !$0.kind.isHCIPacket }
        let packetLogger = try loadScenario(name, format: .packetLoggerLE).records.filter { !$0.kind.isHCIPacket }
        let pcap254 = try loadScenario(name, format: .pcapMonitor).records.filter { !$0.kind.isHCIPacket }
        #expect(packetLogger.allSatisfy { $0.kind == .note && $0.sourceType == 0xFC })
        #expect(packetLogger.first?.payload == Array("btlens-scenario \(name)".utf8))
        #expect(monitor.count == packetLogger.count + 3)
        #expect(pcap254.map(\.payload) == monitor.map(\.payload))
        // Notes carry the same text (monitor adds a NUL) at the same time.
        for (m, p) in zip(monitor.dropFirst(3), packetLogger) {
            #expect(m.payload == p.payload + [0])
            #expect(m.microseconds == p.microseconds)
        }
        for format in [ScenarioFormat.btsnoopH4, .btsnoopH1, .pcapH4, .pcapH4WithDirection] {
            #expect(try loadScenario(name, format: format).records.allSatisfy { $0.kind.isHCIPacket })
        }
    }

    @Test func packetLoggerByteOrdersAreDetected() throws {
        let little = try loadScenario(HeartRateSession.name, format: .packetLoggerLE)
        let big = try loadScenario(HeartRateSession.name, format: .packetLoggerBE)
        #expect(little.info.format == .packetLogger(bigEndian: false))
        #expect(big.info.format == .packetLogger(bigEndian: true))
        #expect(little.records == big.records)
    }
}
