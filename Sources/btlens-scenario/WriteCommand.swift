import ArgumentParser
import BTScenario

extension ScenarioTool {
    /// `write NAME OUTPUT [--format F] [air options]`.
    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write one scenario to a capture file.",
            discussion: """
                Formats: \(ScenarioFormat.allCases.map(\.rawValue).joined(separator: ", ")).

                The air-* formats write what an LE air sniffer following the scenario's links captures instead of \
                its HCI packets: air-272 the nRF Sniffer (NORDIC_BLE, header version 3), air-256 \
                LE_LL_WITH_PHDR, air-251 the bare link layer, air-ppi PPI with Ubertooth's BTLE field. Advertising \
                reports become advertising PDUs, each connection a CONNECT_IND and connection events (empty PDUs \
                when idle), ACL data LL data PDUs, and updates, PHY and data length changes, encryption and \
                disconnections the LL procedures behind them. The --air-* options plant impairments, seeded and \
                deterministic.
                """)

        @Argument(help: "Scenario name (see `list`).")
        var name: String

        @Argument(help: "Output file.")
        var output: String

        @Option(help: "Capture format.")
        var format: String = ScenarioFormat.default.rawValue

        @OptionGroup var air: AirArguments

        func run() throws {
            let scenario = try ScenarioTool.scenario(named: name)
            let format = try ScenarioTool.format(named: format)
            try ScenarioTool.write(scenario, to: output, format: format, air: air.options())
        }
    }
}

/// The options of the air formats (`write`, `bench`).
struct AirArguments: ParsableArguments {
    @Option(name: .customLong("air-crc-errors"), help: ArgumentHelp(
        "Air formats: share (0–1) of new central→peripheral PDUs heard with a bad CRC, then resent correctly.",
        valueName: "rate"))
    var crcErrors: Double = 0

    @Option(name: .customLong("air-retransmissions"), help: ArgumentHelp(
        "Air formats: share (0–1) of new PDUs the receiver does not acknowledge, so they are sent again.",
        valueName: "rate"))
    var retransmissions: Double = 0

    @Option(name: .customLong("air-sniffer-loss"), help: ArgumentHelp(
        "Air formats: share (0–1) of data-channel packets the sniffer itself does not hear (left out of the file).",
        valueName: "rate"))
    var snifferLoss: Double = 0

    @Flag(name: .customLong("air-miss-connect"), help: "Air formats: leave out the first connection's CONNECT_IND.")
    var missConnect = false

    @Flag(name: .customLong("air-encrypted"),
          help: "Air formats: write encrypted PDUs as ciphertext (a sniffer without the key); by default decrypted.")
    var encrypted = false

    @Option(name: .customLong("air-nordic-version"), help: ArgumentHelp(
        "air-272: the nRF Sniffer header version (0–3).", valueName: "n"))
    var nordicVersion: UInt8 = 3

    @Option(name: .customLong("air-seed"), help: ArgumentHelp(
        "Air formats: seed for what the HCI stream does not say (access addresses, channels, impairments).",
        valueName: "n"))
    var seed: UInt64 = AirOptions.defaultSeed

    func validate() throws {
        for (name, rate) in [("--air-crc-errors", crcErrors), ("--air-retransmissions", retransmissions),
                             ("--air-sniffer-loss", snifferLoss)]
        where !(0...1).contains(rate) {
            throw ValidationError("\(name) takes a share from 0 to 1, not \(rate)")
        }
        guard nordicVersion <= 3 else { throw ValidationError("--air-nordic-version takes 0, 1, 2 or 3") }
    }

    /// The options; the container is the format's (air-272 takes the header version from here).
    func options() -> AirOptions {
        AirOptions(container: .nordic(version: nordicVersion, board: 0),
                   impairments: AirImpairments(crcErrorRate: crcErrors, retransmissionRate: retransmissions,
                                               missConnect: missConnect, snifferLossRate: snifferLoss),
                   decrypt: !encrypted, seed: seed)
    }
}
