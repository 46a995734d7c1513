import BTWire

/// `fragmented-acl`: reassembly under stress. The controller's LE buffers hold 27 bytes and the links stay
/// at 27-byte LL payloads, while ATT runs at MTU 247, so every large PDU crosses HCI in ten ACL fragments
/// (host: PB 00 then 01; controller: PB 10 then 01). Two loggers are connected at once with the extended
/// commands; their long reads (Read + Read Blob), a long write (Prepare + Execute) and long notifications
/// happen concurrently, so fragments of the two handles interleave. Logger B demands encryption: Insufficient
/// Authentication, legacy Just Works pairing, LE Enable Encryption, the key distribution, then the read
/// succeeds. A is disconnected by the host; B's link is lost (supervision timeout 0x08).
public enum FragmentedACL {
    public static let name = "fragmented-acl"
    public static let handleA: UInt16 = 0x0040
    public static let handleB: UInt16 = 0x0041
    public static let loggerA = SampleDevices.loggerA
    public static let loggerB = SampleDevices.loggerB
    public static let mtu: UInt16 = 247
    public static let aclDataLength = HCIFraming.leMinimumACLDataLength
    public static let logLength = 600
    public static let notificationRounds = 10
    public static let notificationPeriod = Micros.ms(200)
    public static let interval = HCIUnits.connectionInterval(microseconds: 30_000)
    public static let parameters = ConnectionParameters.interval(
        minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))
    public static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))

    public static let scenario = Scenario(
        name: name,
        summary: "two links at MTU 247 over 27-byte ACL: interleaved Read Blob chains, long writes and notifications, pairing",
        seed: 0x4652_4147, body: run)

    static func log(_ seed: UInt8) -> [UInt8] {
        (0..<logLength).map { UInt8(truncatingIfNeeded: $0) &+ seed }
    }

    static func run(_ s: HCIScript) {
        s.hostACLDataLength = aclDataLength
        s.controllerACLDataLength = aclDataLength
        s.setUpController()
        s.startExtendedScan(phys: [.init(phyBit: LEParameter.phy1MBit, active: true, interval: scanInterval,
                                         window: scanInterval)],
                            filterDuplicates: LEParameter.enabled)
        let advertisers = [loggerA, loggerB].enumerated().map { i, peer in
            SimulatedAdvertiser(peer: peer, kind: .legacy(LegacyReportType.advInd),
                                data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                                       .uuid128([SampleProfiles.loggerService], complete: true)]),
                                scanResponse: AdvertisingData([.completeName("Logger \(i == 0 ? "A" : "B")")]),
                                interval: SampleDevices.fastAdvertising, rssi: Int8(-55 - 10 * i))
        }
        s.background = AdvertisingReportStream(advertisers: advertisers, mode: .extended, active: true,
                                               filterDuplicates: true, scanInterval: scanInterval,
                                               scanWindow: scanInterval, startingAt: s.elapsed, seed: s.rng.next())
        s.wait(ms: 1_500)
        s.stopExtendedScan()

        let a = s.connect(to: loggerA, handle: handleA, parameters: parameters, scanInterval: scanInterval,
                          scanWindow: scanInterval, method: .extended(phyMask: LEParameter.phy1MBit),
                          chosenInterval: interval)
        let b = s.connect(to: loggerB, handle: handleB, parameters: parameters, scanInterval: scanInterval,
                          scanWindow: scanInterval,
                          method: .extended(phyMask: LEParameter.phy1MBit | LEParameter.phyCodedBit),
                          chosenInterval: interval)
        s.setPHY(a, phyBit: LEParameter.phy2MBit, resultingPHY: LEParameter.phy2M)

        let attA = ATTChannel(script: s, connection: a,
                              server: GATTServer(database: SampleProfiles.dataLogger(name: "Logger A", log: log(0)),
                                                 rxMTU: mtu), clientSide: .local)
        let attB = ATTChannel(script: s, connection: b,
                              server: GATTServer(database: SampleProfiles.dataLogger(name: "Logger B", log: log(0x80)),
                                                 rxMTU: mtu), clientSide: .local)
        attA.exchangeMTU(mtu)
        attB.exchangeMTU(mtu)
        let charsA = attA.discoverPrimaryServices(uuid: SampleProfiles.loggerService).flatMap(attA.discoverCharacteristics)
        let charsB = attB.discoverPrimaryServices(uuid: SampleProfiles.loggerService).flatMap(attB.discoverCharacteristics)
        func handle(_ list: [DiscoveredCharacteristic], _ uuid: BluetoothUUID) -> UInt16? {
            list.first { $0.uuid == uuid }?.valueHandle
        }
        guard let logA = handle(charsA, SampleProfiles.loggerLog), let logB = handle(charsB, SampleProfiles.loggerLog),
              let configA = handle(charsA, SampleProfiles.loggerConfig),
              let streamA = handle(charsA, SampleProfiles.loggerStream),
              let streamB = handle(charsB, SampleProfiles.loggerStream),
              let keyB = handle(charsB, SampleProfiles.loggerKey)
        else { return }

        // Subscribe to both streams before either server may notify (descriptor discovery finds the CCCD).
        for (att, list) in [(attA, charsA), (attB, charsB)] {
            guard let stream = list.first(where: { $0.uuid == SampleProfiles.loggerStream }),
                  let cccd = att.discoverDescriptors(of: stream).first(where: { $0.uuid == GATTUUID.cccd })
            else { return }
            att.subscribe(cccd: cccd.handle)
        }

        s.note("both logs read at once")
        _ = ATTChannel.readConcurrently([(attA, logA), (attB, logB)])

        s.note("long write to A while B streams")
        longWrite(s, attA, configA, value: (0..<SampleProfiles.loggerConfigLength).map { UInt8(truncatingIfNeeded: $0 * 3) },
                  alongside: attB, streamB)

        s.note("B requires encryption")
        if case .error = attB.read(keyB) {
            s.pairLegacyJustWorks(b)
            _ = attB.read(keyB)
        }

        for round in 0..<notificationRounds {
            s.wait(ms: notificationPeriod / Micros.perMillisecond)
            let payload = Int(mtu) - 3
            ATTChannel.notifyConcurrently([
                (attA, streamA, (0..<payload).map { UInt8(truncatingIfNeeded: $0 + round) }),
                (attB, streamB, (0..<payload).map { UInt8(truncatingIfNeeded: 0xFF - $0 - round) }),
            ])
        }
        s.wait(ms: 300)
        s.disconnect(a)
        s.wait(seconds: 2)
        s.peerDisconnects(b, reason: .connectionTimeout)
    }

    /// Prepare Write requests to `handle` (MTU − 5 bytes each), each sent while the other link's server
    /// streams a full-size notification, then Execute Write.
    static func longWrite(_ s: HCIScript, _ att: ATTChannel, _ handle: UInt16, value: [UInt8],
                          alongside other: ATTChannel, _ otherHandle: UInt16) {
        let chunk = att.mtu - 5
        var offset = 0
        var counter: UInt8 = 0
        while offset < value.count {
            let part = value[offset..<min(value.count, offset + chunk)]
            let request = ATTPDU.prepareWriteRequest(handle: handle, offset: UInt16(offset), part: part)
            let sentAt = s.elapsed
            let streamed = (0..<(other.mtu - 3)).map { UInt8(truncatingIfNeeded: $0) ^ counter }
            other.server.setValue(streamed, at: otherHandle)
            s.sendInterleaved([
                (request, .att, att.connection, att.clientSide),
                (ATTPDU.notification(handle: otherHandle, value: streamed), .att, other.connection, other.serverSide),
            ])
            s.completeTransmission(on: att.connection)
            guard let response = att.server.respond(to: request) else { return }
            s.advance(toElapsed: sentAt + s.airDelay(att.connection))
            att.transmit(response, from: att.serverSide)
            s.pause(s.timing.hostReaction)
            offset += part.count
            counter &+= 1
        }
        att.exchange(ATTPDU.executeWriteRequest(commit: true))
    }
}
