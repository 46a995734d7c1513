/// The files `btlens-scenario samples DIR` writes: every scenario as btsnoop H4 (what Android produces), plus
/// each other format once, on a scenario where that format has something to show.
public enum SampleSet {
    public struct File: Sendable {
        public let name: String
        public let scenario: String
        public let format: ScenarioFormat
        /// For the air formats: the sniffer's container and what it shows of a real radio.
        public let air: AirOptions

        init(name: String, scenario: String, format: ScenarioFormat, air: AirOptions = AirOptions()) {
            self.name = name
            self.scenario = scenario
            self.format = format
            self.air = air
        }
    }

    /// The air samples' radio: a few CRC errors and retransmissions, as a real sniffer hears.
    static let airImpairments = AirImpairments(crcErrorRate: 0.02, retransmissionRate: 0.03)

    public static let files: [File] = ScenarioRegistry.names.map { File(name: "\($0).btsnoop", scenario: $0, format: .btsnoopH4) } + [
        File(name: "heart-rate-session.pklg", scenario: HeartRateSession.name, format: .packetLoggerLE),
        File(name: "heart-rate-session.be.pklg", scenario: HeartRateSession.name, format: .packetLoggerBE),
        File(name: "heart-rate-session.pcap", scenario: HeartRateSession.name, format: .pcapH4WithDirection),
        File(name: "heart-rate-session.h1.btsnoop", scenario: HeartRateSession.name, format: .btsnoopH1),
        File(name: "beacons.pcap", scenario: Beacons.name, format: .pcapH4),
        File(name: "peripheral-role.monitor.btsnoop", scenario: PeripheralRole.name, format: .btsnoopMonitor),
        File(name: "fragmented-acl.monitor.pcap", scenario: FragmentedACL.name, format: .pcapMonitor),
        File(name: "wasteful-central.air.pcap", scenario: WastefulCentral.name, format: .air272,
             air: AirOptions(impairments: airImpairments)),
        File(name: "heart-rate-session.air.pcap", scenario: HeartRateSession.name, format: .air256,
             air: AirOptions(container: .pseudoHeader, impairments: airImpairments)),
    ]
}
