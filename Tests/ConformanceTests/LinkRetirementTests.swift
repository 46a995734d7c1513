import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules
import BTReport
import BTScenario
import TestSupport

/// `btlens audit` judges finished links as they close and slims them (`LinkRetirement`): the findings and the
/// energy total must be exactly those of judging the whole capture at its end, and the links held whole must
/// stay within the window however many links the capture holds.
@Suite("Links judged as they close")
struct LinkRetirementTests {
    /// The audit JSON of the findings, the notes and the links counted, and the phone's radio total, as `btlens
    /// audit` computes them: judged at the end (`window` nil), or with every link past `window` judged as it
    /// closes and let go but for its summary in batches of `letGoBatch`.
    /// `setAside`: a directory where the tracker sets the links' summaries aside (`TrackerOptions
    /// .scanSessionSpillDirectory`), the latest `kept` staying in memory.
    static func audit(_ path: String, window: Int?, wholeBudget: Int = LinkRetirement.defaultWholeBudget, letGoBatch: Int = 1,
                      linkThread: LinkThreadPolicy = .whenTwoProcessors, setAside: String? = nil, kept: Int = 64,
                      maximumConnections: Int? = nil) throws
        -> (report: String, chargeMC: Double, retirement: LinkRetirement?, model: CaptureModel?) {
        let auditor = Auditor()
        var captures: [AuditedCapture] = []
        var charge = 0.0
        var retirement: LinkRetirement?
        var last: CaptureModel?
        for input in try CaptureInputs.resolve(path) {
            let capture = try input.open()
            var options = TrackerOptions.withoutAdvertisers
            options.linkThread = linkThread
            options.scanSessionSpillDirectory = setAside
            options.scanSessionsKept = kept
            if let maximumConnections { options.maximumConnections = maximumConnections }
            let judgement = window.map { _ in auditor.linkJudgement(pricing: true) }
            retirement = judgement.map { $0.retirement(window: window ?? 0, wholeBudget: wholeBudget, letGoBatch: letGoBatch) }
            options.retirement = retirement
            var collector = TrackingCollector(options: options)
            let model = try capture.accept(&collector)
            var audited = AuditedCapture(file: input.path, findings: auditor.audit(model, file: input.path, judged: judgement),
                                         connections: model.linkCount)
            audited.notes = AuditNotes.notes(model)
            captures.append(audited)
            charge += EnergyReport.phoneTotal(model: model, energy: auditor.energy, priced: judgement?.priced).chargeMC
            last = model
        }
        let run = AuditRun(captures: captures, failOn: nil, version: "test")
        return (AuditJSON.render(run), charge, retirement, last)
    }

    static func expectSame(_ path: String, _ name: String) throws {
        let atEnd = try audit(path, window: nil)
        for policy in [LinkThreadPolicy.never, .always] {
            let early = try audit(path, window: 1, linkThread: policy)
            #expect(early.report == atEnd.report, "\(name): findings differ when links are judged as they close")
            // Summed in another order: the same but for the last bits of a double.
            #expect(abs(early.chargeMC - atEnd.chargeMC) <= 1e-9 * max(1, abs(atEnd.chargeMC)), "\(name): the energy total differs")
        }
    }

    static var samples: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "samples")) ?? [])
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted()
    }

    @Test("samples: the same findings and energy total with links judged as they close", arguments: samples)
    func sample(name: String) throws {
        try Self.expectSame("samples/" + name, name)
    }

    @Test("real captures: the same findings and energy total with links judged as they close", arguments: RealCaptures.names)
    func real(name: String) throws {
        try Self.expectSame(RealCaptures.directory.appendingPathComponent(name).path, name)
    }

    @Test("ground-truth captures: the same findings with links judged as they close", arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func groundTruth(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        for catalog in GroundTruth.Catalog.allCases {
            let path = directory.file("truth-\(seed)-\(catalog.rawValue).btsnoop")
            try GroundTruth.scenario(seed: seed, catalog: catalog).0.write(to: path)
            try Self.expectSame(path, "seed \(seed) (\(catalog.rawValue))")
        }
    }

    /// Many short links to one sensor, a few of which discover its database (the others inherit it), reading
    /// the value every few seconds and lingering: links enough that most are judged early with a small window.
    static let manyLinks = Scenario(
        name: "many-short-links", summary: "3,000 short links, every 500th discovers", seed: 0x4C49_4E4B) { s in
        s.setUpController()
        let parameters = ConnectionParameters.interval(
            minMicroseconds: Micros.ms(10), maxMicroseconds: Micros.ms(15), timeoutMicroseconds: Micros.seconds(4))
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
        var valueHandle: UInt16?
        for i in 0..<LinkRetirementTests.links {
            let link = s.connect(to: SampleDevices.heartRateSensor, handle: 0x0040 + UInt16(i % 64), parameters: parameters,
                                 scanInterval: scanInterval, scanWindow: scanInterval)
            let server = GATTServer(database: SampleProfiles.heartRateSensor, rxMTU: UInt16(ATTPDU.defaultMTU))
            let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
            if i % 500 == 0 || valueHandle == nil {
                let services = att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.battery))
                valueHandle = services.first.flatMap { att.discoverCharacteristics(of: $0).first?.valueHandle }
            }
            for _ in 0..<(i % 3 == 0 ? 4 : 1) {
                if let valueHandle { _ = att.read(valueHandle) }
                s.wait(seconds: 2)
            }
            s.wait(seconds: i % 7 == 0 ? 35 : 1)  // some linger
            s.disconnect(link)
            s.wait(ms: 300)
        }
    }
    static let links = 3_000

    /// `manyLinks` written into `directory`: its path.
    static func manyLinksFile(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("many-links.btsnoop")
        try manyLinks.write(to: path)
        return path
    }

    @Test("thousands of short links: at most the window's worth held whole, and the same findings")
    func boundedByTheWindow() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.manyLinksFile(in: directory)
        let atEnd = try Self.audit(path, window: nil)
        for window in [16, 256] {
            let early = try Self.audit(path, window: window)
            let retirement = try #require(early.retirement)
            // Every link but the last `window` was judged as it closed, and no more than `window` were ever whole:
            // memory follows the window, not the number of finished links.
            #expect(retirement.judged == Self.links - window)
            #expect(retirement.mostWhole == window)
            // Every link here reads the sensor with the database its peer's discovery gave it, so every judged link
            // stays (slim, with the database: `cachedDatabase` tests links let go); `links` holds them all.
            let model = try #require(early.model)
            #expect(retirement.letGo == 0)
            #expect(model.connections.count == Self.links)
            #expect(model.linkCount == Self.links)
            #expect(model.links.map(\.id) == Array(1...Self.links))
            #expect(early.report == atEnd.report)
            #expect(abs(early.chargeMC - atEnd.chargeMC) <= 1e-9 * max(1, abs(atEnd.chargeMC)))
        }
        // The capture is one a rule has something to say about: the comparison is not between two empty reports.
        #expect(atEnd.report.contains("BTL006"))
        #expect(atEnd.report.contains("BTL005"))
    }

    @Test("links holding much history: at most the budget's worth held whole however wide the window, the same findings")
    func boundedByTheBudget() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.manyLinksFile(in: directory)
        let atEnd = try Self.audit(path, window: nil)
        let budget = 64 << 10
        let early = try Self.audit(path, window: LinkRetirement.defaultWindow, wholeBudget: budget)
        let retirement = try #require(early.retirement)
        // The window alone would hold 1,024 links whole and judge the first 1,976; the budget holds a few dozen.
        #expect(retirement.mostWhole > 1 && retirement.mostWhole < 200)
        #expect(retirement.judged > Self.links - 200)
        // It is exceeded by one link's history at most: the newest finished link waits whole to be judged.
        // Every link stays (slim, with its database), as with the window alone.
        #expect(early.model?.connections.count == Self.links)
        #expect(retirement.mostWholeBytes > budget / 2 && retirement.mostWholeBytes <= budget + 16 << 10)
        #expect(early.report == atEnd.report)
        #expect(abs(early.chargeMC - atEnd.chargeMC) <= 1e-9 * max(1, abs(atEnd.chargeMC)))
        // A budget too small for any link still keeps the newest finished one whole, as a window of one does.
        let tiny = try Self.audit(path, window: LinkRetirement.defaultWindow, wholeBudget: 0)
        #expect(tiny.retirement?.mostWhole == 1)
        #expect(tiny.report == atEnd.report)
    }

    /// A scan started for each link and stopped once it is up: two scan boundaries a link, thousands of them.
    static let scanPerLink = Scenario(
        name: "scan-per-link", summary: "3,000 links, each found by a scan of its own", seed: 0x5343_414E) { s in
        s.setUpController()
        let parameters = ConnectionParameters.interval(
            minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(45), timeoutMicroseconds: Micros.seconds(4))
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
        for i in 0..<3000 {
            s.startScan(active: true, interval: scanInterval, window: scanInterval / 2, filterDuplicates: true)
            s.wait(ms: 500)
            let peer = PeerAddress(BDAddr(rawValue: 0xC1_00_00_00_00_00 | UInt64(i)), type: LEParameter.randomAddress)
            let link = s.connect(to: peer, handle: 0x0040 + UInt16(i % 64), parameters: parameters,
                                 scanInterval: scanInterval, scanWindow: scanInterval)
            s.stopScan()
            s.wait(seconds: 1)
            s.disconnect(link)
            s.wait(ms: 300)
        }
    }

    @Test("past the cap on finished links, the scan boundaries remembered stay bounded by the links still waiting")
    func boundariesPastTheCap() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("scan-per-link.btsnoop")
        try Self.scanPerLink.write(to: path)
        let capped = try Self.audit(path, window: 16, letGoBatch: 64, maximumConnections: 300)
        let retirement = try #require(capped.retirement)
        // 6,000 boundaries in all; those after the 300th link's would only pile up (no later link joins the model).
        #expect(retirement.mostScanBoundaries > 100 && retirement.mostScanBoundaries < 1000, "\(retirement.mostScanBoundaries)")
        #expect(capped.model?.linkCount == 300)
        // The same findings as judging the capped capture at its end.
        let atEnd = try Self.audit(path, window: nil, maximumConnections: 300)
        #expect(capped.report == atEnd.report)
        #expect(atEnd.report.contains("\"findings\""))
    }

    /// A soak test of ever new peers: one scan left on while the app connects to a new address every couple of
    /// seconds (restarting the scan now and then), and reconnects to one sensor each 400th link.
    static let newPeers = Scenario(
        name: "new-peers-soak", summary: "5,000 links to new addresses under a scan, restarted every 1,000 links", seed: 0x4E45_5750) { s in
        s.setUpController()
        let parameters = ConnectionParameters.interval(
            minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(45), timeoutMicroseconds: Micros.seconds(4))
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
        s.startScan(active: true, interval: scanInterval, window: scanInterval / 2, filterDuplicates: true)
        for i in 0..<LinkRetirementTests.newPeerLinks {
            if i > 0 && i % 1000 == 0 {
                s.stopScan()
                s.wait(seconds: 5)
                s.startScan(active: true, interval: scanInterval, window: scanInterval / 2, filterDuplicates: true)
            }
            let peer = i % 400 == 399 ? SampleDevices.heartRateSensor
                : PeerAddress(BDAddr(rawValue: 0xC0_00_00_00_00_00 | UInt64(i)), type: LEParameter.randomAddress)
            let link = s.connect(to: peer, handle: 0x0040 + UInt16(i % 64), parameters: parameters,
                                 scanInterval: scanInterval, scanWindow: scanInterval)
            s.wait(seconds: 1)
            s.disconnect(link)
            s.wait(ms: 300)
        }
    }
    static let newPeerLinks = 5_000

    @Test("links to ever new peers: let go but for 16 bytes when no capture-wide rule reads them, the same findings")
    func newPeersLetGo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new-peers.btsnoop")
        try Self.newPeers.write(to: path)
        let atEnd = try Self.audit(path, window: nil)
        for (window, batch) in [(1, 1), (16, 256)] {
            let early = try Self.audit(path, window: window, letGoBatch: batch)
            #expect(early.report == atEnd.report, "window \(window), batches of \(batch)")
            let model = try #require(early.model)
            #expect(model.linkCount == Self.newPeerLinks)
            // What is kept whatever the capture's length: the first link after each scan boundary, the sensor's
            // links (it returns), the latest links of the peers still remembered (two generations), the window.
            let summaries = model.summarizedLinks?.count ?? 0
            #expect(summaries <= 2 * 2048 + 64 + window + 16, "\(summaries) summaries")
            #expect(model.letGoLinks.count + summaries == Self.newPeerLinks)
            #expect(model.letGoLinks.count >= Self.newPeerLinks - 2 * 2048 - 64 - window)
            // Rules read the links that came up during a span alike whether the model let them go or kept them.
            let whole = try #require(atEnd.model).linkStarts, lean = model.linkStarts
            var compared = 0
            for scan in model.appScans {
                let from = scan.start.timestamp.nanoseconds, until = scan.endTimestamp?.nanoseconds ?? Int64.max
                let a = lean.started(controller: scan.controller, from: from, until: until).map { "\($0.id)@\($0.start) \($0.isAppLE)" }
                let b = whole.started(controller: scan.controller, from: from, until: until).map { "\($0.id)@\($0.start) \($0.isAppLE)" }
                #expect(a == b, "scan from \(from)")
                #expect(lean.any(controller: scan.controller, from: until, through: until.plusSaturating(2_000_000_000))
                        == whole.any(controller: scan.controller, from: until, through: until.plusSaturating(2_000_000_000)))
                compared += a.count
            }
            #expect(compared == Self.newPeerLinks, "every link came up during a scan")
        }
        // Both judge something: the scans left on after connecting (counting the links let go) and the
        // reconnections by scan (each to a peer last seen 400 links before).
        #expect(atEnd.report.contains("BTL001") && atEnd.report.contains("and 989 more came up during it too"))
        #expect(atEnd.report.contains("BTL007"))
    }

    @Test("the summaries kept set aside in a file: the same findings, read back in id order, nothing left behind")
    func summariesSetAside() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new-peers.btsnoop")
        try Self.newPeers.write(to: path)
        let spill = directory.path + "/spill"
        try FileManager.default.createDirectory(atPath: spill, withIntermediateDirectories: false)
        let held = try Self.audit(path, window: 16, letGoBatch: 256)
        let setAside = try Self.audit(path, window: 16, letGoBatch: 256, setAside: spill, kept: 1)
        #expect(setAside.report == held.report)
        let a = try #require(held.model), b = try #require(setAside.model)
        let stored = try #require(b.summarizedLinks)
        #expect(a.summarizedLinks?.setAsideCount == 0)
        #expect(stored.count > 2048 && stored.setAsideCount >= stored.count - 2 - a.connections.count)
        #expect(b.setAsideFailure == nil)
        // Every summary read back, in id order, as the one held in memory.
        #expect(a.links.count == b.links.count)
        #expect(zip(a.links, b.links).allSatisfy { $0.id == $1.id && $0.start.number == $1.start.number && $0.peerAddress == $1.peerAddress })
        #expect(zip(b.links, b.links.dropFirst()).allSatisfy { $0.id < $1.id })
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill).isEmpty)
    }

    /// One link discovers every service and reads the battery; the next twenty take its database from the
    /// cache and read the body sensor location, the last twenty read nothing: discover-all-services (BTL003)
    /// judges the discovery against what every link using the database touched, so the use of links judged
    /// long before the capture ends must outlive their judgement.
    static let cachedDatabaseLinks = Scenario(
        name: "cached-database-links", summary: "one full discovery, 20 links using the cached database, 20 reading nothing", seed: 0x4341_4348) { s in
        s.setUpController()
        let parameters = ConnectionParameters.interval(
            minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(45), timeoutMicroseconds: Micros.seconds(4))
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
        var location: UInt16?
        for i in 0..<41 {
            let link = s.connect(to: SampleDevices.heartRateSensor, handle: 0x0040 + UInt16(i % 64), parameters: parameters,
                                 scanInterval: scanInterval, scanWindow: scanInterval)
            let server = GATTServer(database: SampleProfiles.heartRateSensor, rxMTU: UInt16(ATTPDU.defaultMTU))
            let att = ATTChannel(script: s, connection: link, server: server, clientSide: .local)
            if i == 0 {
                let services = att.discoverAllPrimaryServices()
                if let battery = services.first(where: { $0.uuid == BluetoothUUID(uuid16: GATTUUID.battery) }),
                   let level = att.discoverCharacteristics(of: battery).first {
                    _ = att.read(level.valueHandle)
                }
                // Not discovered here (that would count as a use): Heart Rate Measurement's declaration, value and
                // CCCD come first, then Body Sensor Location's declaration and value.
                location = services.first { $0.uuid == BluetoothUUID(uuid16: GATTUUID.heartRate) }.map { $0.startHandle + 5 }
            } else if i <= 20, let location {
                // Only the earlier links: judged (and let go) long before the capture ends.
                _ = att.read(location)
            }
            s.wait(seconds: 1)
            s.disconnect(link)
            s.wait(ms: 300)
        }
    }

    @Test("links that inherited a database: their use still counts for the discovery they inherited")
    func cachedDatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("cached-database.btsnoop")
        try Self.cachedDatabaseLinks.write(to: path)
        let atEnd = try Self.audit(path, window: nil)
        let early = try Self.audit(path, window: 1)
        #expect(early.report == atEnd.report)
        // The twenty that read nothing took no database and were let go but for their summaries (all but the
        // last, still whole at the end); those that used the cached database stay.
        let retirement = try #require(early.retirement), model = try #require(early.model)
        #expect(retirement.letGo == 19)
        #expect(model.connections.count == 41 - 19)
        #expect(model.linkCount == 41 && model.links.map(\.id) == Array(1...41))
        // The discovery is judged: Device Information went unused, the heart-rate service did not.
        #expect(atEnd.report.contains("BTL003"))
        #expect(atEnd.report.contains("Device Information") && !atEnd.report.contains("unused (Heart Rate"))
    }

    /// `btlens devices`' JSON as the command computes it: links slimmed past `window` (nothing to judge), or kept.
    static func devices(_ path: String, window: Int?, letGoBatch: Int = LinkRetirement.defaultLetGoBatch) throws
        -> (json: String, retirement: LinkRetirement?) {
        let input = try #require(try CaptureInputs.resolve(path).first)
        let capture = try input.open()
        var options = TrackerOptions()
        let retirement = window.map { LinkRetirement(window: $0, keeping: .nothing, letGoBatch: letGoBatch) { _, _ in } }
        options.retirement = retirement
        var collector = TrackingCollector(options: options)
        let model = try capture.accept(&collector)
        let report = DevicesReport(file: path, info: capture.info, model: model, advertiserOverflow: model.advertiserOverflow)
        return (DevicesJSON.object(report).serialized(), retirement)
    }

    @Test("devices: samples give the same report with every link let go as soon as the next finishes")
    func devicesSamples() throws {
        var connectionsWhileScanning = 0
        for name in Self.samples {
            let whole = try Self.devices("samples/" + name, window: nil)
            // Every link judged as soon as the next finishes, and let go at once.
            #expect(try Self.devices("samples/" + name, window: 1, letGoBatch: 1).json == whole.json, "\(name)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(whole.json.utf8)) as? [String: Any])
            for scan in object["scans"] as? [[String: Any]] ?? [] {
                connectionsWhileScanning += (scan["connections_while_scanning"] as? [Any])?.count ?? 0
            }
        }
        // What devices reads of links (connections that came up while scanning) is in the compared reports.
        #expect(connectionsWhileScanning > 0)
    }

    @Test("devices: thousands of short links let go as they finish, the same report")
    func devicesBoundedByTheWindow() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.manyLinksFile(in: directory)
        let whole = try Self.devices(path, window: nil)
        let slimmed = try Self.devices(path, window: 16, letGoBatch: 256)
        let retirement = try #require(slimmed.retirement)
        #expect(retirement.judged == Self.links - 16)
        #expect(retirement.mostWhole == 16)
        // Judged links were let go in batches: no more than a batch and the window were ever kept at once.
        #expect(retirement.letGo == (Self.links - 16) / 256 * 256)
        #expect(slimmed.json == whole.json)
        // The report is not an empty one: the links' peer advertised.
        #expect(whole.json.contains("\"advertisers\": ["))
    }
}
