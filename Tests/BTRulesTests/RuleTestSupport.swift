import Foundation
import BTCapture
import BTTrack
import TestSupport
import BTWire
import BTDecode
import BTScenario
import BTRules

final class NSLockShim: @unchecked Sendable {
    let inner = NSLock()
    func lock() { inner.lock() }
    func unlock() { inner.unlock() }
}

func trackScenario(_ name: String) throws -> CaptureModel {
    let capture = try OpenedCapture.open(path: try writeScenario(name))
    var collector = TrackingCollector()
    return try capture.accept(&collector)
}

/// Plays a hand-built script's packets straight into the tracker (without the advertiser table, as
/// `btlens audit` tracks a capture) and returns the model, for rule tests that need a situation no sample has.
final class ScriptTracker: PacketSink {
    let tracker = CaptureTracker(options: .withoutAdvertisers)
    var decoder = PacketDecoder(issues: IssueLog())
    private var records = 0

    init() { decoder.validatesAdvertisingReports = false }

    /// Runs `body` as a script starting at `HCIScript.defaultStart` and tracks what it emits.
    /// Records the capture leaves out (a capture that begins after the link came up lacks its Connection Complete).
    var drops: ((RecordKind, UnsafeRawBufferPointer) -> Bool)?

    static func model(seed: UInt64 = 1, dropping drops: ((RecordKind, UnsafeRawBufferPointer) -> Bool)? = nil,
                      _ body: (HCIScript) -> Void) -> CaptureModel {
        let sink = ScriptTracker()
        sink.drops = drops
        let script = HCIScript(sink: sink, controller: SampleDevices.phoneController, seed: seed, title: "rule test")
        body(script)
        try? script.finish()
        return sink.tracker.finish()
    }

    func begin(controller: ControllerIdentity, title: String, timestamp: Timestamp) throws {}
    func note(_ text: String, timestamp: Timestamp) throws {}
    func finish() throws {}

    func packet(kind: RecordKind, direction: Direction, timestamp: Timestamp, payload: UnsafeRawBufferPointer) throws {
        if let drops, drops(kind, payload) { return }
        records += 1
        let record = CaptureRecord(number: records, offset: Int64(records) * 100, timestamp: timestamp,
                                   direction: direction, kind: kind, controller: 0, sourceType: 0,
                                   originalLength: payload.count, payload: payload)
        tracker.observe(decoder.decode(record))
    }
}

/// Runs rule `R` on `model` with its defaults, overridden by `options`.
func findings<R: Rule>(_ rule: R.Type, _ model: CaptureModel, options: [String: Double] = [:]) -> [Finding] {
    R().evaluate(model, context: RuleContext(description: R.description, overrides: options))
}

/// Shorthands for rule scripts: the phone as central on the environmental sensor's database.
enum RuleScript {
    static let sensor = SampleDevices.enviroSensor
    static let database: BTScenario.GATTDatabase = SampleProfiles.enviroSensor
    /// Sensor Data (read + notify) and its CCCD; Config (read/write).
    static var data: GATTCharacteristicLayout { database.characteristic(uuid: SampleProfiles.enviroSensorData)! }
    static var config: GATTCharacteristicLayout { database.characteristic(uuid: SampleProfiles.enviroConfig)! }
    static let fastInterval = HCIUnits.connectionInterval(microseconds: 7_500)
    static let scanInterval = HCIUnits.slots(microseconds: Micros.ms(10))

    /// Connects at `interval` (7.5 ms unless told) and returns the ATT bearer with the phone as client.
    static func connect(_ s: HCIScript, handle: UInt16 = 0x0040, interval: UInt16 = fastInterval) -> ATTChannel {
        let parameters = BTScenario.ConnectionParameters(intervalMin: interval, intervalMax: interval,
                                              supervisionTimeout: HCIUnits.supervisionTimeout(microseconds: Micros.seconds(2)))
        let link = s.connect(to: sensor, handle: handle, parameters: parameters, scanInterval: scanInterval,
                             scanWindow: scanInterval, chosenInterval: interval)
        return ATTChannel(script: s, connection: link, server: GATTServer(database: database), clientSide: .local)
    }
}
