import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules
@testable import BTReport
import BTScenario
import TestSupport

/// `btlens export --format jsonl` makes each link's rows when it is judged and then slims it (`FactsLinkRows`):
/// every table must be what the export of the whole capture at its end writes.
@Suite("Facts rows of links judged as they close")
struct FactsLinkRowsTests {
    /// What a run held: its rows and how much of them memory held at once.
    struct Run {
        var tables: [FactsTable: [String]] = [:]
        var retirement: LinkRetirement?
        /// The most bytes of finished rows a capture held (`FactsRows.mostHeldBytes`).
        var mostHeldBytes = 0
        /// Bytes of judged links' rows held in memory, and set aside.
        var judgedHeldBytes: Int64 = 0
        var judgedSpilledBytes: Int64 = 0
        /// Why rows could not be set aside (`FactsRows.failure`).
        var failures: [String] = []
        /// Judged links of which the model kept no summary (`CaptureModel.letGoLinks`), and the summaries it kept.
        var letGoWhole = 0
        var summaries = 0
    }

    /// Every table's rows as `export --format jsonl` makes them: at the end (`window` nil), or with every link
    /// past `window` judged as it closes and let go but for its summary in batches of `letGoBatch`; set aside in
    /// `spillDirectory` past `memoryLimit` bytes.
    static func rows(_ path: String, window: Int?, letGoBatch: Int = 1, linkThread: LinkThreadPolicy = .whenTwoProcessors,
                     spillDirectory: String? = nil, memoryLimit: Int = FactsRows.defaultMemoryLimit) throws -> Run {
        let auditor = Auditor()
        var run = Run()
        for input in try CaptureInputs.resolve(path) {
            var facts = FactsCapture(file: input.path, sha256: "0", size: 0, spillDirectory: spillDirectory)
            facts.memoryLimit = memoryLimit
            let capture = try input.open()
            var options = TrackerOptions()
            options.linkThread = linkThread
            let judged = window.map { _ in FactsLinkRows(facts, auditor: auditor) }
            run.retirement = judged?.retirement(window: window ?? 0, letGoBatch: letGoBatch)
            options.retirement = run.retirement
            var collector = TrackingCollector(options: options)
            let model = try capture.accept(&collector)
            let findings = auditor.audit(model, file: input.path, judged: judged?.judgement)
            let rows = facts.rows(format: capture.info.format.name, model: model, problems: capture.issues.count,
                                  findings: findings, energy: auditor.energy, judged: judged)
            if let failure = rows.failure { run.failures.append(failure) }
            for table in FactsTable.allCases {
                let lines = rows.lines(table)
                #expect(lines.count == rows.count(table), "\(table.rawValue): rows counted as written")
                run.tables[table, default: []] += lines
            }
            run.mostHeldBytes = max(run.mostHeldBytes, rows.mostHeldBytes)
            run.letGoWhole += model.letGoLinks.count
            run.summaries += model.summarizedLinks?.count ?? 0
            run.judgedHeldBytes += judged?.heldBytes ?? 0
            run.judgedSpilledBytes += judged?.spilledBytes ?? 0
        }
        if spillDirectory == nil || FileManager.default.fileExists(atPath: spillDirectory!) { #expect(run.failures.isEmpty) }
        return run
    }

    static func expectSame(_ path: String, _ name: String) throws {
        let atEnd = try rows(path, window: nil)
        for policy in [LinkThreadPolicy.never, .always] {
            let early = try rows(path, window: 1, linkThread: policy)
            for table in FactsTable.allCases {
                #expect(early.tables[table] ?? [] == atEnd.tables[table] ?? [], "\(name): \(table.rawValue) rows differ when links are judged as they close")
            }
        }
    }

    @Test("real captures: the same rows with links judged as they close and let go but for their summaries", arguments: RealCaptures.names)
    func real(name: String) throws {
        try Self.expectSame(RealCaptures.directory.appendingPathComponent(name).path, name)
    }

    @Test("samples: the same rows with links judged as they close", arguments: LinkRetirementTests.samples)
    func sample(name: String) throws {
        try Self.expectSame("samples/" + name, name)
    }

    @Test("thousands of short links: the same rows, most links judged early")
    func manyLinks() throws {
        let directory = try TemporaryDirectory()
        let path = try LinkRetirementTests.manyLinksFile(in: directory)
        let atEnd = try Self.rows(path, window: nil)
        let early = try Self.rows(path, window: 16)
        #expect(early.retirement?.judged == LinkRetirementTests.links - 16)
        for table in FactsTable.allCases {
            #expect(early.tables[table] ?? [] == atEnd.tables[table] ?? [], "\(table.rawValue) rows differ")
        }
        #expect(atEnd.tables[.connections]?.count == LinkRetirementTests.links)
        #expect((atEnd.tables[.attSeries]?.count ?? 0) > 0)
        #expect((atEnd.tables[.findings]?.count ?? 0) > 0)
    }

    @Test("links to new peers: the same rows with most judged links let go whole, their summaries read back from the spill")
    func newPeers() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("new-peers.btsnoop")
        try LinkRetirementTests.newPeers.write(to: path)
        let spill = directory.file("out")
        try FileManager.default.createDirectory(atPath: spill, withIntermediateDirectories: true)
        let atEnd = try Self.rows(path, window: nil)
        let early = try Self.rows(path, window: 16, letGoBatch: 256, spillDirectory: spill)
        for table in FactsTable.allCases {
            #expect(early.tables[table] ?? [] == atEnd.tables[table] ?? [], "\(table.rawValue) rows differ")
        }
        #expect(atEnd.tables[.connections]?.count == LinkRetirementTests.newPeerLinks)
        // No capture-wide rule reads most of these links: the model keeps 24 bytes of each, not its summary, and
        // the rows' writer reads who and when it was from the spill (`FactsLinkRows.Header`).
        // Only the latest links of the peers still remembered (two generations of 2,048), the first link after each
        // scan boundary and the window keep one, as in `btlens audit` (`LinkRetirementTests.newPeersLetGo`).
        #expect(early.letGoWhole + early.summaries == LinkRetirementTests.newPeerLinks)
        #expect(early.summaries <= 2 * 2048 + 64 + 16 + 16, "\(early.summaries) summaries")
        #expect(early.letGoWhole >= LinkRetirementTests.newPeerLinks - 2 * 2048 - 64 - 16)
        #expect(MemoryLayout<FactsLinkRows.Parts>.stride <= 16 && _isPOD(FactsLinkRows.Header.self))
    }

    @Test("rows set aside in the output directory are the same rows, and memory holds a bounded share of them")
    func setAside() throws {
        let directory = try TemporaryDirectory()
        let path = try LinkRetirementTests.manyLinksFile(in: directory)
        let spill = directory.file("out")
        try FileManager.default.createDirectory(atPath: spill, withIntermediateDirectories: true)
        let atEnd = try Self.rows(path, window: nil)
        let limit = 16 << 10
        let early = try Self.rows(path, window: 16, spillDirectory: spill, memoryLimit: limit)
        #expect(early.retirement?.judged == LinkRetirementTests.links - 16)
        for table in FactsTable.allCases {
            #expect(early.tables[table] ?? [] == atEnd.tables[table] ?? [], "\(table.rawValue) rows differ when set aside")
        }
        // Memory does not grow with finished links: the judged links' rows are all in the spill, and the
        // capture's finished rows held at once stay under the limit (and one row), a small share of them all.
        let written = FactsTable.allCases.reduce(0) { total, table in
            total + (early.tables[table] ?? []).reduce(0) { $0 + $1.utf8.count + 1 }
        }
        let longest = FactsTable.allCases.flatMap { early.tables[$0] ?? [] }.map { $0.utf8.count + 1 }.max() ?? 0
        #expect(early.judgedHeldBytes == 0)
        #expect(early.judgedSpilledBytes > Int64(written / 2))
        #expect(early.mostHeldBytes <= limit + longest)
        #expect(written > 20 * limit)
        #expect(early.retirement.map { $0.mostWhole <= 16 } == true)
        // Held in memory, the same run holds them all.
        let held = try Self.rows(path, window: 16)
        #expect(held.mostHeldBytes == written)
        #expect(held.judgedHeldBytes == early.judgedSpilledBytes)
        // The spills' names were gone as soon as they were made: nothing is left in the directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: spill).isEmpty)
    }

    @Test("samples: the same rows when every row is set aside as it is made", arguments: LinkRetirementTests.samples)
    func sampleSetAside(name: String) throws {
        let directory = try TemporaryDirectory()
        let atEnd = try Self.rows("samples/" + name, window: nil)
        let early = try Self.rows("samples/" + name, window: 1, spillDirectory: directory.path, memoryLimit: 1)
        for table in FactsTable.allCases {
            #expect(early.tables[table] ?? [] == atEnd.tables[table] ?? [], "\(name): \(table.rawValue) rows differ when set aside")
        }
        #expect(early.judgedHeldBytes == 0)
    }

    @Test("a spill that cannot be made is the capture's failure to be written, with every row still held")
    func spillFailure() throws {
        let atEnd = try Self.rows("samples/connection-churn.btsnoop", window: nil)
        let early = try Self.rows("samples/connection-churn.btsnoop", window: 1, spillDirectory: "/nonexistent/btlens", memoryLimit: 1)
        #expect(early.failures.count == 1)
        #expect(early.failures.first?.contains("No such file") == true)
        for table in FactsTable.allCases { #expect(early.tables[table] ?? [] == atEnd.tables[table] ?? []) }
    }

    /// A layout shared by two versions of one peripheral: GAP 0x0001–0x0007, GATT 0x0008–0x000B, Device
    /// Information 0x000C–0x000E (Manufacturer Name value 0x000E).
    static func logger(manufacturer: String) -> BTScenario.GATTDatabase {
        BTScenario.GATTDatabase([
            SampleProfiles.gap(name: "Logger", appearance: SampleProfiles.sensorAppearance),
            SampleProfiles.gatt,
            GATTServiceDefinition(GATTUUID.deviceInformation, [
                GATTCharacteristicDefinition(GATTUUID.manufacturerName, .read, value: Array(manufacturer.utf8)),
            ]),
        ])
    }
    static let loggerManufacturerValue: UInt16 = 0x000E
    /// Manufacturer Name's value in `SampleProfiles.heartRateSensor`.
    static let sensorManufacturerValue: UInt16 = 0x001A

    /// Two peers whose first link reads the manufacturer name from a cached database (no discovery) and whose
    /// second discovers it: the sensor's second link reads nothing, the logger's reads a new name. With every
    /// link judged as the next closes, the first links are judged without a database and let go of their use of
    /// attributes; the peer columns must still give the latest link's value, as over whole links.
    static let cachedReads = Scenario(name: "cached-reads", summary: "values read before their peer's discovery",
                                      seed: 0x5045_4552) { s in
        s.setUpController()
        let parameters = ConnectionParameters.interval(
            minMicroseconds: Micros.ms(30), maxMicroseconds: Micros.ms(50), timeoutMicroseconds: Micros.seconds(4))
        let scanInterval = HCIUnits.slots(microseconds: Micros.ms(60))
        func link(_ peer: PeerAddress, _ database: BTScenario.GATTDatabase, handle: UInt16, _ body: (ATTChannel) -> Void) {
            let link = s.connect(to: peer, handle: handle, parameters: parameters, scanInterval: scanInterval, scanWindow: scanInterval)
            let att = ATTChannel(script: s, connection: link, server: GATTServer(database: database, rxMTU: UInt16(ATTPDU.defaultMTU)),
                                 clientSide: .local)
            body(att)
            s.wait(seconds: 2)
            s.disconnect(link)
            s.wait(ms: 300)
        }
        func discover(_ att: ATTChannel) {
            for service in att.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: GATTUUID.deviceInformation)) {
                _ = att.discoverCharacteristics(of: service)
            }
        }
        link(SampleDevices.heartRateSensor, SampleProfiles.heartRateSensor, handle: 0x0040) { _ = $0.read(sensorManufacturerValue) }
        link(SampleDevices.loggerA, logger(manufacturer: "Old Labs"), handle: 0x0041) { _ = $0.read(loggerManufacturerValue) }
        link(SampleDevices.heartRateSensor, SampleProfiles.heartRateSensor, handle: 0x0042) { discover($0) }
        link(SampleDevices.loggerA, logger(manufacturer: "New Labs"), handle: 0x0043) { att in
            discover(att)
            _ = att.read(loggerManufacturerValue)
        }
    }

    @Test("a peer's values read by links judged without a database still name it")
    func peerValuesOfJudgedLinks() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("cached-reads.btsnoop")
        try Self.cachedReads.write(to: path)
        func manufacturers(_ rows: [String]) throws -> [String] {
            try rows.map { line in
                let row = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return row["peer_manufacturer"] as? String ?? "null"
            }
        }
        let atEnd = try Self.rows(path, window: nil)
        let expected = ["Acme Fitness", "New Labs", "Acme Fitness", "New Labs"]
        #expect(try manufacturers(atEnd.tables[.connections] ?? []) == expected)
        for policy in [LinkThreadPolicy.never, .always] {
            let early = try Self.rows(path, window: 1, linkThread: policy)
            #expect(early.retirement?.judged == 3)
            #expect(early.retirement?.judgedWithoutDatabase == 2)
            #expect(try manufacturers(early.tables[.connections] ?? []) == expected)
        }
    }

    @Test("judged links' values are read back line by line, a line straddling two chunks of the spill included")
    func peerValuesInChunks() throws {
        let rows = FactsLinkRows(FactsCapture(file: "x", sha256: "0", size: 0), auditor: Auditor())
        let peer = BDAddr(rawValue: 0xC0FF_EE00_0001), other = BDAddr(rawValue: 0xC0FF_EE00_0002)
        // Two links of one peer (the later one's value wins), a handle not wanted, another peer, a damaged line.
        rows.peerValues.append("\(peer.rawValue) 3 42 41636d65\n\(peer.rawValue) 5 42 4e6577\n\(peer.rawValue) 5 43 00\n")
        rows.peerValues.append("\(other.rawValue) 4 42 5a\nnot a value line\n\(other.rawValue) 2 42 59")
        let wanted: [BDAddr: [UInt16]] = [peer: [42], other: [42]]
        for chunk in [1, 5, 7, 64, Spill.chunk] {
            let values = rows.peerValues(wanted, chunk: chunk)
            #expect(values[peer]?.values[42]?.link == 5 && values[peer]?.values[42]?.value == Array("New".utf8), "chunk \(chunk)")
            #expect(values[peer]?.values[43] == nil && values[other]?.values[42]?.value == [0x5A], "chunk \(chunk)")
        }
    }
}
