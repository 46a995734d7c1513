import BTCapture
import BTWire

/// A named, scripted capture: what the project's samples, fixtures and tests are built from. Running one
/// twice, in any format, gives the same packets at the same times.
public struct Scenario: Sendable {
    public let name: String
    /// One line for `btlens-scenario list`.
    public let summary: String
    /// Seeds the script's generator; part of the scenario's identity.
    public let seed: UInt64
    let body: @Sendable (HCIScript) -> Void

    public init(name: String, summary: String, seed: UInt64, body: @escaping @Sendable (HCIScript) -> Void) {
        self.name = name
        self.summary = summary
        self.seed = seed
        self.body = body
    }

    /// Plays the scenario into `sink` and finishes it.
    public func run(into sink: any PacketSink) throws {
        let script = HCIScript(sink: sink, controller: SampleDevices.phoneController, seed: seed,
                               title: "btlens-scenario \(name)")
        body(script)
        try script.finish()
    }

    /// Writes the scenario to `path` in `format` (`air`: how an air format is written).
    public func write(to path: String, format: ScenarioFormat = .default, air: AirOptions = AirOptions()) throws {
        try run(into: try format.makeSink(path: path, air: air))
    }
}

/// Every named scenario, in `list` order.
public enum ScenarioRegistry {
    public static let all: [Scenario] = [
        HeartRateSession.scenario,
        WastefulCentral.scenario,
        TidyCentral.scenario,
        PeripheralRole.scenario,
        Beacons.scenario,
        FragmentedACL.scenario,
        ConnectionChurn.scenario,
        EnhancedATTLogger.scenario,
        AndroidScanChurn.scenario,
        RepeatingEpisodes.scenario,
    ]

    /// Scenarios written on demand, not among the samples (nor in the tests that run every sample).
    public static let features: [Scenario] = RadioFeatureLinks.all

    public static func named(_ name: String) -> Scenario? { all.first { $0.name == name } ?? features.first { $0.name == name } }

    public static var names: [String] { all.map(\.name) }
}
