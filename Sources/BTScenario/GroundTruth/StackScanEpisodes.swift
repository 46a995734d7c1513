import BTWire

/// Scanning as Android's stack really programs it (`AndroidScanStack`): the app's unfiltered scan is an APCF
/// all-pass filter (index 1) beside the OS's filtered background clients (indexes 10 and up), the stack
/// re-programs the controller whenever a client comes or goes, and deletes the app's filter just before
/// LE Create Connection. scan-after-connect (BTL001), duplicate-scan (BTL002), scan-churn (BTL014), and the
/// duty cycle of a 1M+Coded extended scan.
enum StackScanEpisodes {
    /// The filter index Android gives an app's first scan client.
    static let appIndex: UInt8 = 1
    /// The OS's clients take indexes from here on (as in the yeelock capture: 10–14).
    static let firstOSIndex: UInt8 = 10
    /// Companies whose devices the OS's background scans look for: Samsung, Microsoft, Google.
    static let osCompanies: [UInt16] = [0x0075, 0x0006, 0x00E0]
    /// 16-bit service UUIDs of OS background scans: Google Fast Pair, Exposure Notification, Google.
    static let osServices: [UInt16] = [0xFE2C, 0xFD6F, 0xFEF3]

    static let afterConnect = "scan-after-connect"
    static let churnRule = "scan-churn"

    /// 2–4 OS clients (Fast Pair, Nearby, a companion service…), each filtering one kind of advertisement by
    /// manufacturer data or a 16-bit service UUID, with 0–2 matching devices advertising every 1–2 s.
    static func osClients(_ b: TruthBuilder, count: Int? = nil, from first: UInt8 = firstOSIndex) -> [AndroidScanStack.Client] {
        (0..<(count ?? b.int(2...4))).map { i in
            let index = first + UInt8(i)
            let devices = b.int(0...2)
            if b.chance(50) {
                let company = b.pick(osCompanies)
                let prefix = b.s.rng.bytes(b.int(2...4))
                let condition = HCICommand.apcfAddManufacturerData(index: index, company: company, data: prefix,
                                                                   mask: Array(repeating: 0xFF, count: prefix.count))
                let advertisers = (0..<devices).map { _ in
                    SimulatedAdvertiser(peer: b.newPeer(), kind: .legacy(LegacyReportType.nonconnInd),
                                        data: AdvertisingData([.manufacturer(company: CompanyID(rawValue: company),
                                                                             data: prefix + b.s.rng.bytes(b.int(2...8)))]),
                                        interval: TruthBuilder.micros(b.uniform(1...2)), rssi: Int8(b.int(-95 ... -60)))
                }
                return AndroidScanStack.Client(index: index, mode: .lowPower, conditions: [condition],
                                               features: APCF.Feature.manufacturerData, advertisers: advertisers)
            }
            let uuid = b.pick(osServices)
            let advertisers = (0..<devices).map { _ in
                SimulatedAdvertiser(peer: b.newPeer(), kind: .legacy(LegacyReportType.nonconnInd),
                                    data: AdvertisingData([.uuid16([uuid], complete: true),
                                                           .serviceData16(uuid: uuid, data: b.s.rng.bytes(b.int(3...10)))]),
                                    interval: TruthBuilder.micros(b.uniform(1...2)), rssi: Int8(b.int(-95 ... -60)))
            }
            return AndroidScanStack.Client(index: index, mode: .lowPower, conditions: [.apcfAddServiceUUID(index: index, uuid16: uuid)],
                                           features: APCF.Feature.serviceUUID, advertisers: advertisers)
        }
    }

    /// The app's unfiltered scan: an all-pass filter at index 1, low latency or balanced, hearing `advertisers`.
    static func appClient(_ b: TruthBuilder, _ advertisers: [SimulatedAdvertiser]) -> AndroidScanStack.Client {
        AndroidScanStack.Client(index: appIndex, mode: b.chance(70) ? .lowLatency : .balanced, advertisers: advertisers)
    }

    /// The peripheral the app looks for, and 0–2 other devices nearby, advertising every 0.2–1 s.
    static func appAdvertisers(_ b: TruthBuilder, _ p: TruthPeripheral) -> [SimulatedAdvertiser] {
        [ScanEpisodes.advertiser(b, p.peer, interval: b.uniform(0.1...0.3))]
            + (0..<b.int(0...2)).map { _ in ScanEpisodes.advertiser(b, b.newPeer(), interval: b.uniform(0.2...1)) }
    }

    /// A short battery session: discover, read the level, hang up.
    static func readBattery(_ b: TruthBuilder, _ link: TruthBuilder.Link, _ p: TruthPeripheral) {
        let att = b.client(link, p.server())
        if let battery = att.find(.battery),
           let level = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == TruthProfiles.batteryLevel }) {
            _ = att.read(level.valueHandle)
        }
        b.hangUp(link)
    }

    /// The app scans (all-pass filter), finds its peripheral and connects while the OS's filtered clients scan
    /// before, during and after. Control: the stack deletes the app's filter just before LE Create Connection and
    /// re-programs the scan for the OS's clients, which runs on for 10–30 s after the session — not the app's
    /// scan. Planted: the app never stops its scan (its filter stays), so after connecting the controller keeps
    /// the app's scan for 5–25 s until the app stops it (with or without OS clients beside it).
    static func handover(_ b: TruthBuilder, planted: Bool) {
        let stack = AndroidScanStack(script: b.s)
        let withOS = !planted || b.chance(50)
        // Beside a left-on app scan the controller runs at the app's duty for the OS's clients too: keep them to 1–2
        // (few matching devices), so the reports stay under duplicate-scan's threshold.
        let os = withOS ? osClients(b, count: planted ? b.int(1...2) : nil) : []
        if withOS {
            for c in os { stack.start(c) }
            b.wait(5...15)
        }
        let p = TruthPeripheral(b, services: [.battery], extras: b.int(0...2))
        // Left on, the app's scan hears only 0–1 slow devices besides its peripheral (which stops advertising once
        // connected), so its reports stay well under duplicate-scan's 100 redundant ones.
        let heard = planted
            ? [ScanEpisodes.advertiser(b, p.peer, interval: b.uniform(0.1...0.3))]
                + (0..<b.int(0...1)).map { _ in ScanEpisodes.advertiser(b, b.newPeer(), interval: b.uniform(2...3)) }
            : appAdvertisers(b, p)
        stack.start(appClient(b, heard))
        b.wait(1...3)
        if !planted { stack.stop(index: appIndex, reprogram: false) }
        // Android's stack re-programs the scan right after LE Create Connection's Command Status.
        let link = b.connect(p.peer, whileInitiating: { stack.reprogram() })
        stack.setAdvertising(p.peer, false)
        if planted {
            let att = b.client(link, p.server())
            guard let battery = att.find(.battery),
                  let level = att.discoverCharacteristics(of: battery).first(where: { $0.uuid == TruthProfiles.batteryLevel }),
                  let cccd = PollEpisodes.subscribe(att, level)
            else { return }
            // The peer notifies every 0.7–3 s while the app's scan runs on, and 1–4 s after it stops.
            let stopAt = b.elapsed + TruthBuilder.micros(b.uniform(5...25))
            var stopped = b.t
            var schedule: [(at: Int64, action: () -> Void)] = [(stopAt, {
                stack.stop(index: appIndex)
                stopped = b.t
            })]
            var t = b.elapsed + TruthBuilder.micros(b.uniform(0.5...1.5))
            let until = stopAt + TruthBuilder.micros(b.uniform(1...4))
            while t < until {
                schedule.append((t, { att.notify(handle: level.valueHandle, value: [UInt8(b.int(10...100))]) }))
                t += TruthBuilder.micros(b.uniform(0.7...3))
            }
            b.run(schedule: schedule)
            att.unsubscribe(cccd: cccd)
            b.hangUp(link)
            b.plant(afterConnect, connection: link.id, from: link.up, to: stopped,
                    "the app's all-pass APCF filter (index 1) never deleted: its scan re-programmed around LE Create Connection and left on \(Int((stopped - link.up).rounded())) s after connecting" + (withOS ? ", beside \(os.count) OS clients" : ""))
            if withOS {
                b.wait(5...15)
                stack.stopAll()
            }
        } else {
            readBattery(b, link, p)
            b.wait(10...30)
            stack.stopAll()
            b.control(afterConnect, connection: link.id, from: link.up, to: b.t,
                      "the app's all-pass filter (index 1) deleted before LE Create Connection; the scan that ran on \(Int((b.t - link.up).rounded())) s served the OS's \(os.count) filtered clients (indexes \(firstOSIndex)–\(Int(firstOSIndex) + os.count - 1))")
        }
    }

    /// The OS's filtered background scan runs 10–25 s before the app's short unfiltered scan (3–6 s, no
    /// connection) and 10–25 s after it; then the app connects straight to a known peer (no scan of its own)
    /// while the OS's scan still runs. Controls: no duplicate-scan finding for the OS's scan before or after,
    /// and no scan-after-connect for the direct connection.
    static func background(_ b: TruthBuilder) {
        let stack = AndroidScanStack(script: b.s)
        let os = osClients(b)
        let osStart = b.t
        for c in os { stack.start(c) }
        b.wait(10...25)
        let appStart = b.t
        let nearby = (0..<b.int(1...3)).map { _ in ScanEpisodes.advertiser(b, b.newPeer(), interval: b.uniform(0.5...1.5)) }
        stack.start(appClient(b, nearby))
        b.control("duplicate-scan", connection: nil, from: osStart, to: appStart - 2.5,
                  "the OS's \(os.count) filtered background clients (APCF indexes \(firstOSIndex)–\(Int(firstOSIndex) + os.count - 1), 10 % duty, few matching devices) before the app's scan")
        b.wait(3...6)
        stack.stop(index: appIndex)
        let appStop = b.t
        b.wait(10...25)
        let p = TruthPeripheral(b, services: [.battery], extras: b.int(0...1))
        let link = b.connect(p.peer)
        readBattery(b, link, p)
        b.wait(10...25)
        stack.stopAll()
        b.control("duplicate-scan", connection: nil, from: appStop + 2.5, to: b.t,
                  "the OS's filtered background scan re-programmed for its \(os.count) clients after the app's all-pass filter was deleted")
        b.control(afterConnect, connection: link.id, from: link.up, to: b.t,
                  "direct connection without an app scan; the scan running meanwhile is the OS's (APCF indexes \(firstOSIndex) and up)")
    }

    /// Planted: the app starts its scan 6–8 times within 30 s (each an APCF enable, an all-pass filter at
    /// index 1 and a scan enable; each stop deletes it). Control: the app starts once and keeps its scan 20–28 s
    /// while the controller is stopped and restarted 6+ times because OS clients come and go, then its filter
    /// is deleted for LE Create Connection and the scan re-programmed around it — restarts, not new starts.
    static func churn(_ b: TruthBuilder, planted: Bool) {
        let stack = AndroidScanStack(script: b.s)
        // Few slow advertisers: the app's reports stay well under duplicate-scan's 100 redundant ones however
        // long it scans.
        let nearby = (0..<b.int(1...2)).map { _ in ScanEpisodes.advertiser(b, b.newPeer(), interval: b.uniform(1.5...2.5)) }
        // Android counts starts over 30 s: an earlier episode's scan starts must not fall in this one's window.
        b.wait(31...33)
        let start = b.t
        if planted {
            let starts = b.int(6...8)
            for i in 0..<starts {
                if i > 0 { b.wait(1.2...1.8) }
                stack.start(appClient(b, nearby))
                b.wait(1.0...1.8)
                stack.stop(index: appIndex)
            }
            b.plant(churnRule, connection: nil, from: start, to: b.t,
                    "the app started its scan \(starts) times in \(Int((b.t - start).rounded())) s (APCF all-pass filter added and deleted each time)")
            return
        }
        let p = TruthPeripheral(b, services: [.battery], extras: b.int(0...1))
        stack.start(appClient(b, [ScanEpisodes.advertiser(b, p.peer, interval: b.uniform(1.5...2.5))] + nearby))
        let os = osClients(b, count: 4)
        var restarts = 0
        // Two OS clients come and stay, two come and go: six re-programmings of the controller, 2–4 s apart.
        for (i, c) in os.enumerated() {
            b.wait(2...4)
            stack.start(c)
            restarts += 1
            if i >= 2 {
                b.wait(2...4)
                stack.stop(index: c.index)
                restarts += 1
            }
        }
        b.wait(1...3)
        stack.stop(index: appIndex, reprogram: false)
        let link = b.connect(p.peer, whileInitiating: { stack.reprogram() })
        stack.setAdvertising(p.peer, false)
        let appEnd = b.t
        readBattery(b, link, p)
        b.wait(3...8)
        stack.stopAll()
        b.control(churnRule, connection: nil, from: start, to: appEnd,
                  "one app scan start; the controller scan stopped and restarted \(restarts + 1) times as OS clients came and went and around LE Create Connection")
        b.control(afterConnect, connection: link.id, from: link.up, to: b.t,
                  "the app's all-pass filter deleted before LE Create Connection; the OS's 2 clients kept scanning")
    }

    /// Control: an app that visits 5–6 devices in turn (a tag inventory): one scan start, then for each device its
    /// all-pass filter is deleted before LE Create Connection, a short session runs with the scan off, and the
    /// filter is added back after the disconnect. Six or seven enables within 30 s, but each restart only
    /// resumes the one scan around a connection: not scan churn.
    static func restartsAroundConnections(_ b: TruthBuilder) {
        let stack = AndroidScanStack(script: b.s)
        let devices = (0..<b.int(5...6)).map { _ in TruthPeripheral(b, services: [.battery]) }
        let advertisers = devices.map { ScanEpisodes.advertiser(b, $0.peer, interval: b.uniform(0.2...0.5)) }
        // Android counts starts over 30 s: an earlier episode's scan starts must not fall in this one's window.
        b.wait(31...33)
        let start = b.t
        var links: [TruthBuilder.Link] = []
        for (i, p) in devices.enumerated() {
            stack.start(appClient(b, Array(advertisers[i...])))  // the devices already visited are done
            b.wait(0.6...1.2)
            stack.stop(index: appIndex, reprogram: false)
            let link = b.connect(p.peer, whileInitiating: { stack.reprogram() })
            let att = ATTChannel(script: b.s, connection: link.connection, server: p.server(), clientSide: .local)
            if let level = p.database.characteristic(uuid: TruthProfiles.batteryLevel) { _ = att.read(level.valueHandle) }
            b.wait(0.2...0.6)
            b.s.disconnect(link.connection)
            links.append(link)
        }
        b.control(churnRule, connection: nil, from: start, to: b.t,
                  "one app scan stopped before each of \(links.count) connections and resumed after it (\(links.count) APCF all-pass adds in \(Int((b.t - start).rounded())) s)")
        for link in links {
            b.control(afterConnect, connection: link.id, from: link.up, to: link.up + 1,
                      "the app's filter deleted before LE Create Connection and no other client: the scan was off during the connection")
        }
    }

    /// An extended scan on LE 1M and LE Coded at once (both PHYs' blocks in LE Set Extended Scan Parameters),
    /// duplicates filtered, 5–15 s: the scan's duty cycle is the two PHYs' summed (expected in the manifest's
    /// `scan_duty`). A control for duplicate-scan too.
    static func codedExtendedScan(_ b: TruthBuilder) {
        let interval = HCIUnits.slots(microseconds: TruthBuilder.micros(b.uniform(0.05...0.2)))
        let windows = [b.int(15...45), b.int(15...45)].map { UInt16(Int(interval) * $0 / 100) }
        let phys = [
            HCICommand.ExtendedScanPHY(phyBit: LEParameter.phy1MBit, active: false, interval: interval, window: windows[0]),
            HCICommand.ExtendedScanPHY(phyBit: LEParameter.phyCodedBit, active: false, interval: interval, window: windows[1]),
        ]
        let devices = (0..<b.int(2...5)).map { _ in
            SimulatedAdvertiser(peer: b.newPeer(),
                                kind: .extended(eventType: ExtendedReportType.nonConnectable, primaryPHY: LEParameter.phyCoded,
                                                secondaryPHY: LEParameter.phyCoded, sid: UInt8(b.int(0...15)), txPower: 0x7F),
                                data: AdvertisingData([.manufacturer(company: CompanyID(rawValue: 0x0059), data: b.s.rng.bytes(6))]),
                                interval: TruthBuilder.micros(b.uniform(0.1...0.5)), rssi: Int8(b.int(-100 ... -70)))
        }
        let start = b.t
        b.s.startExtendedScan(phys: phys, filterDuplicates: LEParameter.enabled)
        let duty = Double(windows[0]) / Double(interval) + Double(windows[1]) / Double(interval)
        b.s.background = AdvertisingReportStream(advertisers: devices, mode: .extended, active: false, filterDuplicates: true,
                                                 scanInterval: interval, scanWindow: windows[0] + windows[1],
                                                 startingAt: b.s.elapsed, seed: b.s.rng.next())
        b.wait(5...15)
        b.s.stopExtendedScan()
        b.expectScanDuty(from: start, to: b.t, duty: duty,
                         "1M+Coded extended scan: 1M \(windows[0])/\(interval) slots + Coded \(windows[1])/\(interval) slots")
        b.control("duplicate-scan", connection: nil, from: start, to: b.t,
                  "1M+Coded extended scan with duplicate filtering on, \(devices.count) Coded advertisers")
    }
}
