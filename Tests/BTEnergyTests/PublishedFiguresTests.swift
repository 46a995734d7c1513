import Testing
import BTTrack
import BTEnergy

/// The figures of ENERGY.md §4 that nobody on the team made up, reproduced from the model with the matching
/// profile. Each test names its source and check number.
@Suite("Energy model: published figures")
struct PublishedFiguresTests {
    static func within(_ value: Double, _ expected: Double, _ tolerance: Double) -> Bool {
        abs(value - expected) <= abs(expected) * tolerance
    }

    @Test("check 1: bleemod (Kindt et al., BLE112), peripheral empty exchange: 31.83/32.07/34.46/42.41 µC at 7.5 ms/100 ms/1 s/4 s")
    func bleemodPeripheral() {
        let expected: [(Double, Double, Double)] = [(7.5, 31.83, 4244), (100, 32.07, 321.6), (1000, 34.46, 35.35), (4000, 42.41, 11.50)]
        for (interval, charge, current) in expected {
            let q = ReferenceEventModel.connectionEvent(peripheral: true, intervalMs: interval)
            #expect(Self.within(q, charge, 0.001), "\(interval) ms: \(q) µC")
            let i = ReferenceEventModel.averageMicroamps(eventCharge: q, intervalMs: interval)
            #expect(Self.within(i, current, 0.002), "\(interval) ms: \(i) µA")
        }
    }

    @Test("check 2: bleemod, central: 24.51 µC at any interval; 25.41 µA at 1 s, 7.03 µA at 4 s")
    func bleemodCentral() {
        for interval in [7.5, 100, 1000, 4000] {
            #expect(Self.within(ReferenceEventModel.connectionEvent(peripheral: false, intervalMs: interval), 24.51, 0.001))
        }
        let q = ReferenceEventModel.connectionEvent(peripheral: false, intervalMs: 1000)
        #expect(Self.within(ReferenceEventModel.averageMicroamps(eventCharge: q, intervalMs: 1000), 25.41, 0.002))
        #expect(Self.within(ReferenceEventModel.averageMicroamps(eventCharge: q, intervalMs: 4000), 7.03, 0.005))
    }

    @Test("check 3: bleemod, advertising 3 × 37 B without RX: 63.81 µC per event, 64.7 µA at 1 s")
    func bleemodAdvertising() {
        let q = ReferenceEventModel.advertisingEvent(pduBytes: 37)
        #expect(Self.within(q, 63.81, 0.001), "\(q)")
        #expect(Self.within(ReferenceEventModel.averageMicroamps(eventCharge: q, intervalMs: 1000), 64.7, 0.002))
    }

    @Test("check 4: bleemod, continuous scan: 26.02 mA")
    func bleemodScan() {
        #expect(Self.within(ReferenceEventModel.continuousScanMilliamps(intervalMs: 100), 26.02, 0.001))
    }

    @Test("check 5: Android's formula (BluetoothPowerCalculator, Pixel 7 power profile): 1 h rx = 5.8 mAh, 1 h tx = 20 mAh")
    func androidFormula() {
        let model = EnergyModel()
        var rx = RadioTime(); rx.rxSeconds = 3600
        var tx = RadioTime(); tx.txSeconds = 3600
        let rxCost = RadioCost(chargeMC: model.profile.phone.rxMilliamps * rx.rxSeconds)
        #expect(Self.within(rxCost.chargeMAh, 5.8, 1e-9))
        #expect(Self.within(RadioCost(chargeMC: model.profile.phone.txMilliamps * tx.txSeconds).chargeMAh, 20, 1e-9))
        // A continuous scan (Android 13 LOW_LATENCY, window = interval) for an hour: 5.8 mAh of rx.
        let hour = EnergyModel().scanTime(Self.scan(windowSlots: 160, intervalSlots: 160), duration: 3600)
        #expect(Self.within(hour.radio.rxSeconds * model.profile.phone.rxMilliamps / 3600, 5.8, 1e-9))
        // BALANCED (183 / 730 ms): 1.45 mA while it runs (ENERGY.md §3.2).
        let balanced = EnergyModel().scanCost(Self.scan(windowSlots: 293, intervalSlots: 1168), duration: 1)
        #expect(Self.within(balanced.chargeMC, 1.45, 0.01), "\(balanced.chargeMC)")
    }

    @Test("check 6: Nordic OPP, connectable advertising every 200 ms with 15 B: 58 µA (±10 %)")
    func onlinePowerProfiler() {
        let p = PeripheralProfile()
        let microamps = p.advertisingEventMicrocoulombs / 0.2 + p.sleepMicroamps
        #expect(Self.within(microamps, 58, 0.10), "\(microamps)")
    }

    @Test("check 8: measured nRF52 device (Espruino): a link at 7.5 ms ≈ 600 µA, at 200 ms ≈ 40 µA (±50 %)")
    func measuredPeripheral() {
        let model = EnergyModel()
        for (ms, expected) in [(7.5, 600.0), (200, 40.0)] {
            let parameters = ConnectionParameters(interval: UInt16(ms / 1.25), latency: 0, supervisionTimeout: 400)
            let cost = model.idleLink(seconds: 100, parameters: parameters).peripheral
            let microamps = cost.chargeMC / 100 * 1000
            #expect(Self.within(microamps, expected, 0.5), "\(ms) ms: \(microamps) µA")
        }
    }

    /// A legacy scan session with these parameters, for the model alone.
    static func scan(windowSlots: UInt16, intervalSlots: UInt16) -> ScanSession {
        ScanSession.forModel(active: false, interval: intervalSlots, window: windowSlots)
    }
}
