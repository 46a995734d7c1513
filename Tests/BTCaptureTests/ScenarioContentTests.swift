import BTCapture
import BTScenario
import BTWire
import Testing
import TestSupport

/// What each scenario is for: the facts the analyzer's tests will rely on, checked on the written capture.
@Suite struct ScenarioContentTests {
    struct Decoded {
        var capture: LoadedCapture
        var packets: [CopiedRecord]
        var frames: [Frame]

        init(_ name: String) throws {
            capture = try loadScenario(name)
            packets = capture.hciPackets
            frames = reassemble(capture.records).frames
        }

        func commands(_ opcode: HCIOpcode) -> [(params: [UInt8], microseconds: Int64)] {
            packets.compactMap { r in Wire.command(r).flatMap { $0.opcode == opcode.rawValue ? ($0.params, r.microseconds) : nil } }
        }

        func leEvents(_ sub: LESubevent) -> [(params: [UInt8], microseconds: Int64)] {
            packets.compactMap { r in Wire.le(r).flatMap { $0.subevent == sub.rawValue ? ($0.params, r.microseconds) : nil } }
        }

        func events(_ code: HCIEventCode) -> [(params: [UInt8], microseconds: Int64)] {
            packets.compactMap { r in Wire.event(r).flatMap { $0.code == code.rawValue ? ($0.params, r.microseconds) : nil } }
        }

        func att(_ op: ATTOpcode, handle: UInt16? = nil) -> [Frame] {
            frames.filter { $0.attOpcode == op.rawValue && (handle == nil || $0.handle == handle) }
        }
    }

    @Test func heartRateSession() throws {
        let d = try Decoded(HeartRateSession.name)
        // Short, filtered, active scan, stopped before connecting.
        let scans = d.commands(.leSetScanEnable)
        #expect(scans.map(\.params) == [[1, 1], [0, 0]])
        #expect(d.commands(.leSetScanParameters).first?.params.first == LEParameter.activeScan)
        let connected = try #require(d.leEvents(.connectionComplete).first)
        #expect(scans[1].microseconds < connected.microseconds)
        #expect(scans[1].microseconds - scans[0].microseconds < Micros.seconds(2))
        #expect(Wire.u16(connected.params, 1) == HeartRateSession.handle)
        #expect(Array(connected.params[5..<11]) == HeartRateSession.sensor.address.bytes)
        #expect(Wire.u16(connected.params, 11) == HeartRateSession.connectInterval)
        // MTU 247 offered, 185 answered; only the Heart Rate service is looked up.
        #expect(d.att(.exchangeMTURequest).first?.attHandle == 247)
        #expect(d.att(.exchangeMTUResponse).first?.attHandle == 185)
        #expect(d.att(.readByGroupTypeRequest).isEmpty)
        let byUUID = d.att(.findByTypeValueRequest)
        #expect(byUUID.count == 2 && byUUID.allSatisfy { Array($0.payload.suffix(2)) == [0x0D, 0x18] })
        // Subscribe, 60 notifications about a second apart on 0x000E, unsubscribe, disconnect at once.
        let cccd = d.att(.writeRequest).filter { $0.attHandle == 0x000F }.map { Array($0.payload.suffix(2)) }
        #expect(cccd == [[1, 0], [0, 0]])
        let notifications = d.att(.handleValueNotification, handle: HeartRateSession.handle)
        #expect(notifications.count == HeartRateSession.notificationCount)
        #expect(notifications.allSatisfy { $0.attHandle == 0x000E && $0.direction == .received })
        for (a, b) in zip(notifications, notifications.dropFirst()) {
            #expect((Micros.ms(800)...Micros.ms(1_200)).contains(b.microseconds - a.microseconds))
        }
        // The sensor's L2CAP request is accepted and applied with LE Connection Update.
        let signals = d.frames.filter { $0.cid == L2CAPChannelID.leSignaling.rawValue }.map { $0.payload[0] }
        #expect(signals == [0x12, 0x13])
        #expect(d.leEvents(.connectionUpdateComplete).first.flatMap { Wire.u16($0.params, 3) } == HeartRateSession.updatedInterval)
        // Host disconnect with 0x13, local event reports 0x16.
        #expect(d.commands(.disconnect).map(\.params) == [[0x40, 0x00, 0x13]])
        #expect(d.events(.disconnectionComplete).map(\.params) == [[0x00, 0x40, 0x00, 0x16]])
        let last = try #require(notifications.last)
        #expect(try #require(d.commands(.disconnect).first).microseconds - last.microseconds < Micros.seconds(2))
    }

    @Test func wastefulCentral() throws {
        let d = try Decoded(WastefulCentral.name)
        let connections = d.leEvents(.connectionComplete)
        #expect(connections.compactMap { Wire.u16($0.params, 1) } == [WastefulCentral.firstHandle, WastefulCentral.secondHandle])
        #expect(connections.allSatisfy { Wire.u16($0.params, 11) == WastefulCentral.fastInterval })
        // Unfiltered 100 % duty-cycle scanning, still on (and reporting) while connected.
        let parameters = try #require(d.commands(.leSetScanParameters).first?.params)
        #expect(Wire.u16(parameters, 1) == Wire.u16(parameters, 3))
        #expect(d.commands(.leSetScanEnable).map(\.params) == [[1, 0], [0, 0], [1, 0]])
        let firstLink = try #require(connections.first).microseconds
        let firstDrop = try #require(d.events(.disconnectionComplete).first).microseconds
        let reportsWhileConnected = d.leEvents(.advertisingReport).filter { (firstLink...firstDrop).contains($0.microseconds) }
        #expect(reportsWhileConnected.count > 100)
        // No MTU exchange; full discovery on both links.
        #expect(d.att(.exchangeMTURequest).isEmpty)
        for handle in [WastefulCentral.firstHandle, WastefulCentral.secondHandle] {
            #expect(d.att(.readByGroupTypeRequest, handle: handle).count >= 3)
            #expect(d.att(.readByTypeRequest, handle: handle).count >= 10)
            #expect(d.att(.findInformationRequest, handle: handle).count >= 3)
        }
        // Polling a notify-capable characteristic with reads, and a Read Not Permitted.
        let reads = d.att(.readRequest, handle: WastefulCentral.firstHandle).compactMap(\.attHandle)
        let polled = try #require(Dictionary(grouping: reads, by: { $0 }).max { $0.value.count < $1.value.count })
        #expect(polled.value.count >= 5)
        #expect(d.att(.errorResponse).contains { $0.payload[4] == ATTErrorCode.readNotPermitted.rawValue })
        // More than 30 s idle (no ATT) before the first disconnect.
        let lastATT = try #require(d.frames.filter { $0.handle == WastefulCentral.firstHandle }.last).microseconds
        #expect(firstDrop - lastATT > Micros.seconds(30))
        // The unanswered request, and the disconnect 30 s later.
        let hung = try #require(d.att(.writeRequest, handle: WastefulCentral.secondHandle).last)
        #expect(d.frames.filter { $0.handle == WastefulCentral.secondHandle && $0.microseconds > hung.microseconds }.isEmpty)
        let drop = try #require(d.commands(.disconnect).last)
        #expect(drop.microseconds - hung.microseconds >= WastefulCentral.attTimeout)
    }

    @Test func peripheralRole() throws {
        let d = try Decoded(PeripheralRole.name)
        for op: HCIOpcode in [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData,
                              .leSetAdvertisingEnable, .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
                              .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable] {
            #expect(!d.commands(op).isEmpty, "\(op)")
        }
        let legacy = try #require(d.leEvents(.connectionComplete).first)
        #expect(Wire.u16(legacy.params, 1) == PeripheralRole.laptopHandle)
        #expect(legacy.params[3] == LEParameter.peripheralRole)
        let enhanced = try #require(d.leEvents(.enhancedConnectionComplete).first)
        #expect(Wire.u16(enhanced.params, 1) == PeripheralRole.tabletHandle)
        #expect(enhanced.params[3] == LEParameter.peripheralRole)
        #expect(d.leEvents(.advertisingSetTerminated).count == 1)
        // Advertising goes back on right after each connection.
        let reenabled = d.commands(.leSetAdvertisingEnable).filter { $0.params == [1] && $0.microseconds > legacy.microseconds }
        #expect(reenabled.first.map { $0.microseconds - legacy.microseconds < Micros.ms(100) } == true)
        // The phone is the server: requests arrive, responses and notifications leave from the host.
        #expect(d.att(.readRequest).allSatisfy { $0.direction == .received })
        #expect(d.att(.readResponse).allSatisfy { $0.direction == .sent })
        let notifications = d.att(.handleValueNotification)
        #expect(notifications.count == PeripheralRole.notificationCount + 3)
        #expect(notifications.allSatisfy { $0.direction == .sent })
        #expect(d.att(.handleValueIndication).count == 1 && d.att(.handleValueConfirmation).count == 1)
        #expect(d.att(.writeCommand).count == 3)
        // Errors, then pairing answered by the phone's host (LTK Request Reply) and the read succeeding.
        let errors = d.att(.errorResponse).map { $0.payload[4] }
        #expect(errors.contains(ScenarioCodes.insufficientAuthentication.rawValue))
        #expect(errors.contains(ATTErrorCode.readNotPermitted.rawValue))
        #expect(d.frames.filter { $0.cid == L2CAPChannelID.smp.rawValue }.count == 13)
        #expect(d.leEvents(.longTermKeyRequest).count == 1)
        #expect(d.commands(ScenarioCodes.leLongTermKeyRequestReply).count == 1)
        #expect(d.events(.encryptionChange).map(\.params) == [[0x00, 0x02, 0x00, 0x01]])
        // The phone asks for new parameters; the central's controller applies them.
        let signals = d.frames.filter { $0.cid == L2CAPChannelID.leSignaling.rawValue }
        #expect(signals.map { $0.payload[0] } == [0x12, 0x13])
        #expect(signals.first?.direction == .sent)
        #expect(d.commands(.leConnectionUpdate).isEmpty)
        #expect(d.events(.disconnectionComplete).map { $0.params[3] } == [0x13, 0x13])
    }

    @Test func beacons() throws {
        let d = try Decoded(Beacons.name)
        let legacy = d.leEvents(.advertisingReport)
        let extended = d.leEvents(.extendedAdvertisingReport)
        #expect(legacy.count > 100)
        #expect(extended.count > 100)
        #expect(legacy.contains { $0.params[0] > 1 })  // several reports in one event
        #expect(legacy.contains { $0.params[1] == LegacyReportType.scanResponse })
        // iBeacon: 4C 00 02 15, UUID in text order, major and minor big-endian, power.
        let beacon: [UInt8] = [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2,
                               0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0, 0x00, 0x02, 0x0A, 0x0B, 0xC5]
        #expect(legacy.contains { $0.params.contains(beacon) })
        // Extended reports: legacy PDUs (bit 4), chained data (status 1 then 0), truncated data, Coded PHY.
        let types = extended.compactMap { Wire.u16($0.params, 1) }
        #expect(types.contains(ExtendedReportType.legacyAdvInd))
        #expect(types.contains(ExtendedReportType.legacyScanResponseToAdvInd))
        #expect(types.contains { $0 >> 5 & 3 == ExtendedReportType.dataIncomplete })
        #expect(types.contains { $0 >> 5 & 3 == ExtendedReportType.dataTruncated })
        #expect(extended.contains { $0.params[10] == LEParameter.phyCoded })
        #expect(extended.allSatisfy { $0.params.count == 1 + 24 + Int($0.params[24]) })
        #expect(d.commands(.leSetExtendedScanParameters).first?.params[2] == LEParameter.phy1MBit | LEParameter.phyCodedBit)
        #expect(d.packets.allSatisfy { $0.kind != .acl })
    }

    @Test func fragmentedACL() throws {
        let d = try Decoded(FragmentedACL.name)
        let links = d.leEvents(.enhancedConnectionComplete).compactMap { Wire.u16($0.params, 1) }
        #expect(links == [FragmentedACL.handleA, FragmentedACL.handleB])
        #expect(d.commands(.leExtendedCreateConnection).count == 2)
        // Every ACL packet carries at most 27 bytes; long PDUs take ten.
        let acl = d.packets.compactMap { r in Wire.acl(r).map { (r, $0) } }
        #expect(acl.allSatisfy { $0.1.data.count <= FragmentedACL.aclDataLength })
        #expect(d.frames.contains { $0.payload.count == Int(FragmentedACL.mtu) })
        // Fragments of the two links interleave, in both directions.
        var interleavedReceived = false
        var interleavedSent = false
        for (a, b) in zip(acl, acl.dropFirst()) where a.1.handle != b.1.handle
            && b.1.pb == PacketBoundary.continuation.rawValue && a.0.direction == b.0.direction {
            if a.0.direction == .sent { interleavedSent = true } else { interleavedReceived = true }
        }
        #expect(interleavedReceived)
        #expect(interleavedSent || d.att(.prepareWriteRequest).count > 0)
        // Read Blob chains on both links, a long write, and B's pairing before its key can be read.
        #expect(d.att(.readBlobRequest, handle: FragmentedACL.handleA).count == 2)
        #expect(d.att(.readBlobRequest, handle: FragmentedACL.handleB).count == 2)
        let prepares = d.att(.prepareWriteRequest, handle: FragmentedACL.handleA)
        #expect(prepares.count == 3)
        #expect(d.att(.prepareWriteResponse).map(\.payload.count) == prepares.map(\.payload.count))
        #expect(d.att(.executeWriteRequest).map(\.payload) == [[0x18, 0x01]])
        #expect(d.att(.errorResponse, handle: FragmentedACL.handleB).contains {
            $0.payload[4] == ScenarioCodes.insufficientAuthentication.rawValue
        })
        #expect(d.frames.filter { $0.cid == L2CAPChannelID.smp.rawValue }.count == 10)
        #expect(d.commands(.leEnableEncryption).count == 1)
        #expect(d.events(.encryptionChange).map(\.params) == [[0x00, 0x41, 0x00, 0x01]])
        #expect(d.leEvents(.phyUpdateComplete).map(\.params) == [[0x00, 0x40, 0x00, 0x02, 0x02]])
        // A is disconnected by the host; B's link is lost.
        #expect(d.events(.disconnectionComplete).map(\.params) == [[0x00, 0x40, 0x00, 0x16], [0x00, 0x41, 0x00, 0x08]])
    }
}
