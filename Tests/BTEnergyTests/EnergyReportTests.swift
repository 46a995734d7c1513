import Foundation
import Testing
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTScenario
import TestSupport

/// The model over whole captures: nothing counted twice or lost, cost proportional to time, profiles.
@Suite("Energy model: reports")
struct EnergyReportTests {
    /// A capture of a scan of `seconds` (100 % duty, unfiltered) and then a 50 ms link idle for `2 × seconds`.
    static func scenario(seconds: Int64) -> Scenario {
        Scenario(name: "energy-\(seconds)", summary: "scan then idle link", seed: 42) { s in
            s.setUpController()
            let interval = HCIUnits.slots(microseconds: Micros.ms(10))
            s.startScan(active: false, interval: interval, window: interval, filterDuplicates: false)
            s.wait(seconds: seconds)
            s.stopScan()
            let ci = HCIUnits.connectionInterval(microseconds: 50_000)
            let parameters = BTScenario.ConnectionParameters(intervalMin: ci, intervalMax: ci,
                                                             supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: Micros.seconds(4)))
            let link = s.connect(to: SampleDevices.enviroSensor, handle: 0x0040, parameters: parameters, scanInterval: interval,
                                 scanWindow: interval, chosenInterval: ci)
            s.wait(seconds: 2 * seconds)
            s.disconnect(link)
        }
    }

    static func report(_ scenario: Scenario, profile: EnergyProfile = EnergyProfile()) throws -> EnergyReport {
        let dir = try TemporaryDirectory()
        let path = dir.file("\(scenario.name).btsnoop")
        try scenario.write(to: path)
        let capture = try OpenedCapture.open(path: path)
        var collector = TrackingCollector(options: .withoutAdvertisers)
        return EnergyReport(model: try capture.accept(&collector), energy: EnergyModel(profile: profile))
    }

    @Test("the total is the sum of the scans, links and advertising, and a link the sum of its phases")
    func sums() throws {
        for name in ["wasteful-central", "heart-rate-session", "connection-churn", "peripheral-role", "fragmented-acl"] {
            let capture = try OpenedCapture.open(path: try writeScenario(name))
            var collector = TrackingCollector(options: .withoutAdvertisers)
            let model = try capture.accept(&collector)
            let r = EnergyReport(model: model)
            let scans: Double = r.scans.reduce(0) { $0 + $1.phone.chargeMC }
            let links: Double = r.links.reduce(0) { $0 + $1.phone.chargeMC }
            let advertising: Double = r.advertising.reduce(0) { $0 + $1.phone.chargeMC }
            let parts = scans + links + advertising
            #expect(abs(parts - r.phoneTotal.chargeMC) < 1e-9, "\(name)")
            // The audit's summary takes the total without keeping each activity: the same number.
            #expect(abs(EnergyReport.phoneTotal(model: model).chargeMC - r.phoneTotal.chargeMC) < 1e-6)
            for l in r.links {
                let phases: Double = l.phases.reduce(0) { $0 + $1.phone.chargeMC }
                #expect(abs(phases - l.phone.chargeMC) < 1e-9)
                // Phases tile the link: each starts where the previous ended.
                for (a, b) in zip(l.phases, l.phases.dropFirst()) { #expect(a.end == b.start) }
            }
        }
    }

    @Test("host wake-ups: counted, and the awake time a union of holds, within the capture")
    func hostWakeups() throws {
        let capture = try OpenedCapture.open(path: try writeScenario("wasteful-central"))
        var collector = TrackingCollector(options: .withoutAdvertisers)
        let model = try capture.accept(&collector)
        let r = EnergyReport(model: model)
        #expect(r.hostWakeups == model.hostWakeups.count && r.hostWakeups > 1000)
        let awake = model.hostWakeups.awakeSeconds
        #expect(awake.low <= awake.typical && awake.typical <= awake.high)
        // Reports every few ms during the 84 s: awake nearly all of it, never longer than the capture plus a hold.
        #expect(awake.typical > r.captureSeconds * 0.9 && awake.typical <= r.captureSeconds + 1)
        #expect(abs(r.host.chargeMC - PhoneProfile().awakeMilliamps * awake.typical) < 1e-6)
        #expect(r.host.lowMC <= r.host.chargeMC && r.host.chargeMC <= r.host.highMC)
    }

    @Test("doubling a scenario's duration doubles its cost")
    func proportional() throws {
        let short = try Self.report(Self.scenario(seconds: 20))
        let long = try Self.report(Self.scenario(seconds: 40))
        #expect(short.scans.count == 1 && short.links.count == 1)
        let ratio = long.phoneTotal.chargeMC / short.phoneTotal.chargeMC
        #expect(abs(ratio - 2) < 0.02, "\(ratio)")
        let peripheral = (long.peripheralTotal?.chargeMC ?? 0) / (short.peripheralTotal?.chargeMC ?? 1)
        #expect(abs(peripheral - 2) < 0.02, "\(peripheral)")
        // 20 s of continuous listening at 5.8 mA: 116 mC.
        #expect(abs(short.scans[0].phone.chargeMC - 116) < 116 * 0.01, "\(short.scans[0].phone.chargeMC)")
        // 40 s at 50 ms: 800 events, each an empty packet out (80 µs at 20 mA) and one back with the guard
        // (80 + 166 µs at 5.8 mA): 800 × (1.6 + 1.4268) µC.
        #expect(abs(short.links[0].phone.chargeMC - 800 * (0.0016 + 0.0014268)) < 0.05, "\(short.links[0].phone.chargeMC)")
    }

    @Test("a profile in YAML: power_profile.xml keys (voltage in mV), peripheral keys; errors name the key")
    func profiles() throws {
        let p = try EnergyProfile.load(yaml: """
            phone:
              name: Pixel 4
              bluetooth.controller.rx: 9
              bluetooth.controller.tx: 7
              bluetooth.controller.idle: 0.01
              bluetooth.controller.voltage: 3300
              event_tx_overhead_us: 500
            peripheral:
              empty_event_uc: 8
            """)
        #expect(p.phone.name == "Pixel 4" && p.phone.rxMilliamps == 9 && p.phone.txMilliamps == 7 && p.phone.volts == 3.3)
        #expect(abs(p.phone.eventTxOverheadSeconds - 0.0005) < 1e-12 && p.peripheral.emptyEventMicrocoulombs == 8)
        #expect(throws: EnergyProfile.LoadError.self) { try EnergyProfile.load(yaml: "phone:\n  bluetooth.controller.rx: -1\n") }
        #expect(throws: EnergyProfile.LoadError.self) { try EnergyProfile.load(yaml: "phone:\n  nonsense: 1\n") }
        #expect(throws: EnergyProfile.LoadError.self) { try EnergyProfile.load(yaml: "laptop: {}\n") }
        #expect(throws: EnergyProfile.LoadError.self) { try EnergyProfile.load(yaml: "[1, 2]") }
    }

    @Test("air time: the primitives of ENERGY.md §3.1")
    func airTime() {
        #expect(abs(AirTime.emptyPDU() - 80e-6) < 1e-12 && abs(AirTime.emptyPDU(phy: .le2M) - 44e-6) < 1e-12)
        #expect(abs(AirTime.emptyPDU(phy: .coded) - 720e-6) < 1e-12)
        #expect(abs(AirTime.dataPDU(payload: 251, encrypted: true) - 2120e-6) < 1e-12)
        #expect(abs(AirTime.dataPDU(payload: 251, phy: .le2M, encrypted: true) - 1064e-6) < 1e-12)
        #expect(abs(AirTime.advertisingPDU(data: 0) - 128e-6) < 1e-12 && abs(AirTime.advertisingPDU(data: 31) - 376e-6) < 1e-12)
        #expect(abs(AirTime.seconds(bytes: AirTime.scanRequestBytes) - 176e-6) < 1e-12)
    }
}

@Suite("Energy on air captures")
struct AirEnergyTests {
    /// Every data packet the generator wrote for the heart-rate session, priced one by one at its PHY, is the
    /// link's `heard` time: the central's as tx, the peripheral's as rx.
    @Test("heard: the air time of every data packet heard, each side apart, below the model's radio time")
    func heard() throws {
        let directory = try TemporaryDirectory(prefix: "btlens-air-energy")
        let path = directory.file("hr.pcap")
        try ScenarioRegistry.named("heart-rate-session")!.write(to: path, format: .air272)
        let capture = try OpenedCapture.open(path: path)
        var collector = TrackingCollector(options: .withoutAdvertisers)
        let r = EnergyReport(model: try capture.accept(&collector))
        let link = try #require(r.links.first)
        let heard = try #require(link.heard)
        var tx = 0.0, rx = 0.0
        for p in try DecodedAirCapture.load(path).packets where !p.isAdvertising && p.crc != .bad {
            let phy: AirTime.PHY = p.phy == .le2M ? .le2M : p.phy == .coded ? .coded : .le1M
            let t = AirTime.seconds(bytes: AirTime.dataPDUOverhead + Int(p.pdu[1]), phy: phy)
            if p.direction == .centralToPeripheral { tx += t } else { rx += t }
        }
        #expect(abs(heard.txSeconds - tx) < 1e-9 && abs(heard.rxSeconds - rx) < 1e-9, "\(heard) vs \(tx) \(rx)")
        #expect(heard.total > 0 && heard.total < link.radio.total)
        #expect(r.links.allSatisfy { $0.heard != nil })
    }
}
