import BTWire

/// duplicate-scan (BTL002), scan-after-connect (BTL001) and reconnect-by-scan (BTL007).
enum ScanEpisodes {
    /// A connectable device advertising every `interval` seconds.
    static func advertiser(_ b: TruthBuilder, _ peer: PeerAddress, interval: Double) -> SimulatedAdvertiser {
        SimulatedAdvertiser(peer: peer, kind: .legacy(b.chance(80) ? LegacyReportType.advInd : LegacyReportType.nonconnInd),
                            data: AdvertisingData([.flags(AdvertisingData.generalDiscoverableLEOnly),
                                                   .manufacturer(company: CompanyID.apple, data: b.s.rng.bytes(b.int(4...12)))]),
                            scanResponse: b.chance(60) ? AdvertisingData([.completeName("GT \(b.int(100...999))")]) : nil,
                            interval: TruthBuilder.micros(interval), rssi: Int8(b.int(-95 ... -45)))
    }

    /// Starts a legacy scan whose reports come from `advertisers`; returns the stream.
    @discardableResult
    static func startScan(_ b: TruthBuilder, _ advertisers: [SimulatedAdvertiser], filterDuplicates: Bool,
                          fullDuty: Bool = false) -> AdvertisingReportStream {
        let interval = HCIUnits.slots(microseconds: TruthBuilder.micros(b.uniform(0.03...0.1)))
        let window = fullDuty || b.chance(50) ? interval : interval / 2
        let active = b.chance(70)
        b.s.startScan(active: active, interval: interval, window: window, filterDuplicates: filterDuplicates)
        let stream = AdvertisingReportStream(advertisers: advertisers, mode: .legacy, active: active,
                                             filterDuplicates: filterDuplicates, scanInterval: interval, scanWindow: window,
                                             startingAt: b.s.elapsed, seed: b.s.rng.next())
        b.s.background = stream
        return stream
    }

    static let duplicateRule = "duplicate-scan"
    /// Android's LE Advanced Packet Content Filter vendor command.
    static let apcf = HCIOpcode(rawValue: 0xFD57)

    /// Three or four scan sessions in a random order: duplicates off with several fast advertisers (planted: well over 100
    /// redundant reports), duplicates off for about a second with one or two slow advertisers (control), and
    /// duplicates on with many advertisers (control); sometimes a long one with duplicates off but the controller
    /// filtering (Android's APCF), so reports stay few (control).
    static func duplicates(_ b: TruthBuilder) {
        for kind in b.shuffled([0, 1, 2] + (b.chance(50) ? [3] : [])) {
            // Scan findings have no connection: sessions are told apart by time alone, so keep them well apart
            // (more than the ±2 s a finding's span is matched with).
            b.wait(5...10)
            let start = b.t
            let packetsBefore = b.s.packetCount
            switch kind {
            case 0:
                let devices = (0..<b.int(3...6)).map { _ in advertiser(b, b.newPeer(), interval: b.uniform(0.02...0.1)) }
                startScan(b, devices, filterDuplicates: false, fullDuty: true)
                let minimum = b.uniform(2...8)
                b.wait(minimum)
                // Every event carries at least one report, advertisement or scan response. Keep going until, even
                // if half the events were scan responses, the redundant advertisements are well over 100 (≥ 130).
                while b.s.packetCount - packetsBefore - 4 < 2 * (130 + devices.count) { b.wait(0.25) }
                b.s.stopScan()
                b.plant(duplicateRule, connection: nil, from: start, to: b.t,
                        "\(Int((b.t - start).rounded())) s scan with duplicate filtering off, \(devices.count) devices advertising every 20–100 ms: \(b.s.packetCount - packetsBefore - 4)+ report events")
            case 1:
                let devices = (0..<b.int(1...2)).map { _ in advertiser(b, b.newPeer(), interval: b.uniform(0.5...2)) }
                startScan(b, devices, filterDuplicates: false)
                b.wait(0.8...1.5)
                b.s.stopScan()
                b.control(duplicateRule, connection: nil, from: start, to: b.t,
                          "short scan with duplicate filtering off and \(devices.count) slow advertiser(s): \(b.s.packetCount - packetsBefore - 4) report events")
            case 3:
                // Android with offloaded filters: the APCF vendor command (0xFD57) enables filtering in the
                // controller, which then reports only the one matching device, a report every 1.5–2.5 s.
                b.s.commandComplete(HCICommand(Self.apcf, parameters: [0x00, 0x01]), returning: [0x00, 0x00, 0x01])
                let start = b.t
                let device = advertiser(b, b.newPeer(), interval: b.uniform(1.5...2.5))
                startScan(b, [SimulatedAdvertiser(peer: device.peer, kind: .legacy(LegacyReportType.advInd), data: device.data,
                                                  scanResponse: nil, interval: device.interval, rssi: device.rssi)],
                          filterDuplicates: false)
                b.wait(20...40)
                b.s.stopScan()
                b.control(duplicateRule, connection: nil, from: start, to: b.t,
                          "\(Int((b.t - start).rounded())) s scan with duplicate filtering off but APCF filters offloaded to the controller: one device reported every 1.5–2.5 s (\(b.s.packetCount - packetsBefore - 5) report events)")
            default:
                let devices = (0..<b.int(3...8)).map { _ in advertiser(b, b.newPeer(), interval: b.uniform(0.02...0.2)) }
                startScan(b, devices, filterDuplicates: true)
                b.wait(3...10)
                b.s.stopScan()
                b.control(duplicateRule, connection: nil, from: start, to: b.t,
                          "scan with duplicate filtering on, \(devices.count) fast advertisers")
            }
        }
    }

    /// Scan (duplicates filtered), connect to a device it found while still scanning, and stop the scan either
    /// 5–40 s after the link came up (planted) or 0.3–1 s after (control).
    static func afterConnect(_ b: TruthBuilder, planted: Bool) {
        let p = TruthPeripheral(b, services: [.battery], extras: b.int(0...2))
        let others = (0..<b.int(0...3)).map { _ in advertiser(b, b.newPeer(), interval: b.uniform(0.1...1)) }
        let stream = startScan(b, [advertiser(b, p.peer, interval: b.uniform(0.05...0.3))] + others, filterDuplicates: true)
        b.wait(1...3)
        let link = b.connect(p.peer)
        stream.setAdvertising(p.peer, false)
        let stopAfter = planted ? b.uniform(5...40) : b.uniform(0.3...1)
        let stopAt = b.elapsed - TruthBuilder.micros(b.t - link.up) + TruthBuilder.micros(stopAfter)
        var stopped: Double?
        var schedule: [(at: Int64, action: () -> Void)] = []
        if planted {
            schedule.append((stopAt, {
                b.s.stopScan()
                stopped = b.t
            }))
        } else {
            // The app stops scanning as soon as it has connected, before discovery.
            b.s.advance(toElapsed: stopAt)
            b.s.stopScan()
            stopped = b.t
        }
        let att = ATTChannel(script: b.s, connection: link.connection, server: p.server(), clientSide: .local)
        let startTime = b.elapsed
        guard let battery = att.find(.battery),
              let level = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == TruthProfiles.batteryLevel }),
              let cccd = PollEpisodes.subscribe(att, level)
        else { return }
        var t = b.elapsed + TruthBuilder.micros(b.uniform(0.5...1.5))
        let until = max(stopAt, startTime) + TruthBuilder.micros(b.uniform(1...4))
        while t < until {
            schedule.append((t, { att.notify(handle: level.valueHandle, value: [UInt8(b.int(10...100))]) }))
            t += TruthBuilder.micros(b.uniform(0.7...3))
        }
        b.run(schedule: schedule)
        att.unsubscribe(cccd: cccd)
        b.hangUp(link)
        let end = stopped ?? b.t
        if planted {
            b.plant("scan-after-connect", connection: link.id, from: link.up, to: end,
                    "scanning left on \(Int((end - link.up).rounded())) s after connecting")
        } else {
            b.control("scan-after-connect", connection: link.id, from: link.up, to: end,
                      "scan stopped \(Int(((end - link.up) * 1000).rounded())) ms after connecting")
        }
    }

    /// After a link to a peer ends, the app scans again (duplicates filtered) and reconnects to it from the scan.
    static func reconnect(_ b: TruthBuilder) {
        let p = TruthPeripheral(b, services: [.deviceInformation, .battery], extras: b.int(0...2))
        let first = b.connect(p.peer)
        let att = b.client(first, p.server())
        guard let info = att.find(.deviceInformation) else { return }
        _ = att.discoverCharacteristics(of: info)
        b.wait(0.1...0.5)
        DiscoveryEpisodes.use(att, p, p.service(.deviceInformation))
        b.hangUp(first)
        b.wait(1...10)
        let scanStart = b.t
        let others = (0..<b.int(0...3)).map { _ in advertiser(b, b.newPeer(), interval: b.uniform(0.1...1)) }
        startScan(b, [advertiser(b, p.peer, interval: b.uniform(0.05...0.5))] + others, filterDuplicates: true)
        b.wait(1...4)
        b.s.stopScan()
        b.wait(0.05...0.3)
        let second = b.connect(p.peer)
        let again = ATTChannel(script: b.s, connection: second.connection, server: p.server(), clientSide: .local)
        b.wait(0.1...0.5)
        DiscoveryEpisodes.use(again, p, p.service(.deviceInformation))
        b.hangUp(second)
        b.plant("reconnect-by-scan", connection: second.id, from: scanStart, to: second.up,
                "scanned \(Int((second.up - scanStart).rounded())) s to reconnect to the peer of connection \(first.id)")
        b.control("redundant-discovery", connection: second.id, from: second.up, to: b.t, "reconnection without rediscovery")
    }
}
