import Foundation
import Testing
import BTWire
import BTCapture
import BTTrack
import BTRules
import BTScenario
import TestSupport

/// The same scenario captured on HCI and on the air (the generator's `AirSink`, with CRC errors and
/// retransmissions planted) must give the same connections, GATT databases and findings: the tracking model
/// does not care where the packets were heard. The air shows no host, so the rules that need the host's scan
/// and advertising commands are left out of the comparison, and links are compared as their central saw them.
@Suite("Air captures: the same scenario on HCI and on the air")
struct AirEqualityTests {
    /// Rules the air cannot judge: they read the host's HCI scan and advertising commands.
    static let hostCommandRules: Set<String> = ["BTL001", "BTL002", "BTL007", "BTL013", "BTL014"]
    /// Well above what a sniffer beside the devices hears, so that requests and their responses are delayed by
    /// resends often, and the air must still keep cause before effect.
    static let impaired = AirImpairments(crcErrorRate: 0.12, retransmissionRate: 0.12)

    static func model(_ path: String) throws -> CaptureModel {
        let capture = try OpenedCapture.open(path: path)
        var collector = TrackingCollector()
        return try capture.accept(&collector)
    }

    /// What must agree about one link: the peripheral, parameters at the start and end, the database, the ATT
    /// PDUs by opcode, encryption.
    static func summary(_ c: Connection, peripheral: BDAddr?) -> String {
        let gatt = c.gatt.services.map { "\(Hex.u16($0.startHandle))-\(Hex.u16($0.endHandle)) \($0.uuid)" }
            + c.gatt.characteristics.map { "\(Hex.u16($0.valueHandle)) \($0.uuid) \($0.properties.rawValue)" }
        let att = c.attCounts.sorted { $0.key < $1.key }.map { "\(Hex.u8($0.key))×\($0.value)" }
        return "peripheral \(peripheral.map { "\($0)" } ?? "?") initial \(c.initialParameters.map { $0.description } ?? "-") "
            + "final \(c.parameters.map { $0.description } ?? "-") encrypted \(c.encrypted) mtu \(c.mtu)\n  gatt \(gatt)\n  att \(att)"
    }

    /// A finding as both captures must show it: rule, connection and attribute.
    static func key(_ f: Finding) -> String {
        "\(f.id) #\(f.connection.map { String($0.id) } ?? "-") \(f.attributeHandle.map(Hex.u16) ?? "-")"
    }

    /// Compares the HCI and air models of one scenario; `central` is true when the capturing host was central
    /// (then the HCI link's peer is the peripheral; otherwise the capturing device is).
    @discardableResult
    static func compare(hci: CaptureModel, air: CaptureModel, peripheralAddress: BDAddr?, label: String) -> Int {
        let hciLinks = hci.connections.filter { $0.transport == .le }
        #expect(air.connections.count == hciLinks.count, "\(label): links")
        for (h, a) in zip(hciLinks, air.connections) {
            let peripheral = h.role == .peripheral ? peripheralAddress : h.peerAddress
            #expect(summary(a, peripheral: a.peerAddress) == summary(h, peripheral: peripheral), "\(label): connection #\(h.id)")
            #expect(a.air?.endInferred == false, "\(label): connection #\(a.id) ended by LL_TERMINATE_IND or the capture")
        }
        // An attempt that failed to be established (0x3E) put a CONNECT_IND and six unanswered events on the air;
        // attempts the host cancelled, or the controller refused, put nothing there.
        let attempts = { (m: CaptureModel) in
            m.failedConnections.filter { $0.status == .connectionFailedToBeEstablished }.map { "\($0.peerAddress.map { "\($0)" } ?? "?")" }
        }
        #expect(attempts(air) == attempts(hci), "\(label): failed attempts")
        #expect(air.failedConnections.count == attempts(hci).count, "\(label): failed attempts")
        // Findings about links the capturing host had as central: on the air every link is judged as its
        // central's, which for the host's peripheral links is the remote device. Findings without a link that
        // the air can show (failed attempts) must agree; the scan rules' are left out above.
        let (hciFindings, airFindings) = judgedFindings(hci: hci, air: air, label: label)
        #expect(airFindings == hciFindings, "\(label): findings")
        return hciFindings.count
    }

    /// The findings both captures must show, keyed: about links the capturing host had as central, or about no
    /// link, less the rules that need the host's scan commands.
    static func judgedFindings(hci: CaptureModel, air: CaptureModel, label: String) -> (hci: [String], air: [String]) {
        let centralLinks = Set(hci.connections.filter { $0.transport == .le && $0.role == .central }.map(\.id))
        let judged = { (f: Finding) in f.connection.map { centralLinks.contains($0.id) } ?? true }
        // An attempt the host cancelled after seconds (timed out) failed, but put nothing on the air: where the
        // HCI capture has such attempts, its failed-attempts finding may stand alone.
        let airFindings = Auditor().audit(air, file: label).filter(judged)
        let failedAttempts = { (f: Finding) in f.id == ConnectionChurnRule.description.id && f.connection == nil }
        let cancelled = hci.failedConnections.contains { $0.cancelledByHost } && !airFindings.contains(where: failedAttempts)
        let seen = { (f: Finding) in !(cancelled && failedAttempts(f)) }
        return (Auditor().audit(hci, file: label).filter { !hostCommandRules.contains($0.id) && judged($0) && seen($0) }.map(key).sorted(),
                airFindings.map(key).sorted())
    }

    /// Ground-truth seed `seed` written on HCI and as `format` on the air with `options`: both models.
    static func truthModels(seed: UInt64, format: ScenarioFormat, air options: AirOptions,
                            in directory: TemporaryDirectory) throws -> (hci: CaptureModel, air: CaptureModel) {
        let (scenario, _) = GroundTruth.scenario(seed: seed)
        let hciPath = directory.file("truth-\(seed).btsnoop")
        try scenario.write(to: hciPath)
        let airPath = directory.file("truth-\(seed).pcap")
        try scenario.write(to: airPath, format: format, air: options)
        return (try model(hciPath), try model(airPath))
    }

    @Test("named scenarios: connections, GATT and findings agree (272 and 256, CRC errors and retransmissions planted)",
          arguments: ScenarioRegistry.names)
    func scenarios(name: String) throws {
        let scenario = try #require(ScenarioRegistry.named(name))
        let directory = try TemporaryDirectory(prefix: "btlens-air-equality")
        let hciPath = directory.file("\(name).btsnoop")
        try scenario.write(to: hciPath)
        let hci = try Self.model(hciPath)
        for format in [ScenarioFormat.air272, .air256] {
            let path = directory.file("\(name).\(format.rawValue).pcap")
            var options = AirOptions(container: format.airContainer!, impairments: Self.impaired)
            options.seed ^= UInt64(name.utf8.count)
            try scenario.write(to: path, format: format, air: options)
            let air = try Self.model(path)
            #expect(air.isAirCapture)
            Self.compare(hci: hci, air: air, peripheralAddress: SampleDevices.phoneController.address, label: "\(name) \(format)")
        }
    }

    /// Findings (as `compare` keys them) and links of a model, for captures whose ATT counts cannot agree.
    static func findingKeys(_ m: CaptureModel, hostCommands: Bool, label: String) -> [String] {
        Auditor().audit(m, file: label).filter { !(hostCommands && hostCommandRules.contains($0.id)) }.map(key).sorted()
    }

    @Test("a sniffer that misses packets itself (3 %): the same links and findings on every ground-truth seed",
          arguments: [0.03])
    func snifferLoss(rate: Double) throws {
        let directory = try TemporaryDirectory(prefix: "btlens-air-loss")
        var compared = 0
        for seed in UInt64(1)...16 {
            let (hci, air) = try Self.truthModels(seed: seed, format: .air272, air: AirOptions(
                impairments: AirImpairments(snifferLossRate: rate), seed: seed), in: directory)
            let label = "truth seed \(seed), \(Int(rate * 100)) % missed"
            #expect(air.connections.count == hci.connections.filter { $0.transport == .le }.count, "\(label): links")
            let (h, a) = Self.judgedFindings(hci: hci, air: air, label: label)
            #expect(a == h, "\(label): findings; only on the air \(a.filter { !h.contains($0) }), only on HCI \(h.filter { !a.contains($0) })")
            compared += h.count
        }
        #expect(compared > 20)
    }

    @Test("wasteful-central with 5 and 10 % of packets missed by the sniffer: the findings of the whole capture, the GATT gaps filled from the reconnection's discovery",
          arguments: [0.05, 0.10])
    func wastefulWithLoss(rate: Double) throws {
        let scenario = try #require(ScenarioRegistry.named("wasteful-central"))
        let directory = try TemporaryDirectory(prefix: "btlens-air-loss")
        let whole = directory.file("whole.pcap"), lossy = directory.file("lossy.pcap")
        try scenario.write(to: whole, format: .air272)
        try scenario.write(to: lossy, format: .air272, air: AirOptions(impairments: AirImpairments(snifferLossRate: rate)))
        let a = try Self.model(whole), b = try Self.model(lossy)
        let label = "wasteful-central, \(Int(rate * 100)) % missed"
        #expect(Self.findingKeys(b, hostCommands: false, label: label) == Self.findingKeys(a, hostCommands: false, label: label))
        // Where the first link's discovery lost responses (at 10 % it does), its database was completed from the
        // second link's.
        let first = try #require(b.connections.first)
        let lost = first.discoveries.contains { !$0.completed }
        if rate >= 0.1 { #expect(lost) }
        if lost {
            #expect(first.gatt.gapsFilledFrom == 2)
            #expect(first.gatt.characteristics.count == a.connections.first?.gatt.characteristics.count)
        }
        #expect(a.connections.first?.gatt.gapsFilledFrom == nil)
    }

    @Test("ground truth seeds: the air capture gives the HCI capture's findings")
    func groundTruth() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-air-truth")
        var compared = 0
        for seed in UInt64(1)...16 {
            let format: ScenarioFormat = seed % 2 == 0 ? .air272 : .air256
            let (hci, air) = try Self.truthModels(seed: seed, format: format, air: AirOptions(
                container: format.airContainer!, impairments: Self.impaired, seed: seed), in: directory)
            compared += Self.compare(hci: hci, air: air, peripheralAddress: SampleDevices.phoneController.address,
                                     label: "truth seed \(seed) \(format)")
        }
        // The seeds plant problems of every rule the air can judge: the comparison is not over empty lists.
        #expect(compared >= 20, "findings compared: \(compared)")
    }

    @Test("a missed CONNECT_IND: the link is followed by its access address, its interval estimated")
    func missedConnectRequest() throws {
        let scenario = try #require(ScenarioRegistry.named("heart-rate-session"))
        let directory = try TemporaryDirectory(prefix: "btlens-air-missed")
        let path = directory.file("missed.pcap")
        try scenario.write(to: path, format: .air272, air: AirOptions(impairments: AirImpairments(missConnect: true)))
        let model = try Self.model(path)
        let c = try #require(model.connections.first)
        #expect(model.connections.count == 1)
        #expect(c.implicitStart && c.air?.intervalEstimated == true && c.air?.centralAddress == nil)
        // 45 ms until the update to 150 ms at its instant: estimated from the events' spacing.
        #expect(c.initialParameters?.interval == 36)
        #expect(c.parameters?.interval == 120)
        #expect(c.gatt.characteristics.contains { $0.uuid == BluetoothUUID(uuid16: 0x2A37) })
    }
}

/// The bundled air samples (samples/*.air.pcap, `make samples`) tell the story of their HCI samples.
@Suite("Air captures: the bundled samples")
struct AirSampleTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    static func findings(_ name: String) throws -> [String] {
        let path = samples.appendingPathComponent(name).path
        return Auditor().audit(try AirEqualityTests.model(path), file: path).map(\.id).sorted()
    }

    @Test("wasteful-central on the air: the HCI sample's findings less those of the host's scan commands")
    func wastefulCentral() throws {
        let air = try Self.findings("wasteful-central.air.pcap")
        let hci = try Self.findings("wasteful-central.btsnoop").filter { !AirEqualityTests.hostCommandRules.contains($0) }
        #expect(air == hci)
        #expect(air == ["BTL003", "BTL004", "BTL005", "BTL006", "BTL006", "BTL008", "BTL010", "BTL011", "BTL011", "BTL012", "BTL012"])
        let model = try AirEqualityTests.model(Self.samples.appendingPathComponent("wasteful-central.air.pcap").path)
        #expect(model.connections.count == 2 && model.connections.allSatisfy { ($0.air?.totals.retransmissions ?? 0) > 0 })
    }

    @Test("heart-rate-session on the air (PHDR 256): one link, its GATT database, no finding")
    func heartRate() throws {
        #expect(try Self.findings("heart-rate-session.air.pcap").isEmpty)
        let model = try AirEqualityTests.model(Self.samples.appendingPathComponent("heart-rate-session.air.pcap").path)
        #expect(model.connections.count == 1 && model.connections[0].gatt.services.contains { $0.uuid == BluetoothUUID(uuid16: 0x180D) })
    }
}

/// Two sniffers in one pcapng (Wireshark merging two nRF dongles' captures): each interface is its own radio,
/// with its own firmware clock, so each follows its own copy of a link.
@Suite("Air captures: two sniffers in one pcapng")
struct TwoSnifferTests {
    @Test("the same link heard by two nRF dongles with different clocks: two links, each as one dongle alone saw it")
    func twoDongles() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-two-sniffers")
        let single = directory.file("one.pcap")
        try #require(ScenarioRegistry.named("heart-rate-session")).write(to: single, format: .air272,
                                                                         air: AirOptions(impairments: AirEqualityTests.impaired))
        let alone = try AirEqualityTests.model(single)
        // The second dongle's firmware clock runs 123.456789 s ahead (and wraps sooner); the host saw its packets
        // 300 µs later.
        let merged = try directory.write("two.pcapng", try PcapngConversion.convert(try TemporaryDirectory.contents(of: single),
                                                                                     interfaces: 2))
        let model = try AirEqualityTests.model(merged)
        #expect(model.isAirCapture)
        #expect(alone.connections.count == 1)
        #expect(model.connections.count == 2 * alone.connections.count)
        let original = try #require(alone.connections.first)
        for (interface, c) in model.connections.enumerated() {
            #expect(c.controller == UInt16(interface))
            #expect(c.air?.totals == original.air?.totals, "interface \(interface)")
            #expect(c.attCounts == original.attCounts, "interface \(interface)")
            #expect(c.gatt.services.count == original.gatt.services.count)
        }
        // `stats` counts links per interface as the tracker does.
        #expect(try DecodedAirCapture.load(merged).statistics.connections == model.connections.count)
    }
}
