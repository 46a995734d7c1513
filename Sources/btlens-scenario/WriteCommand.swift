import ArgumentParser
import BTScenario

extension ScenarioTool {
    /// `write NAME OUTPUT [--format F]`.
    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write one scenario to a capture file.",
            discussion: "Formats: \(ScenarioFormat.allCases.map(\.rawValue).joined(separator: ", ")).")

        @Argument(help: "Scenario name (see `list`).")
        var name: String

        @Argument(help: "Output file.")
        var output: String

        @Option(help: "Capture format.")
        var format: String = ScenarioFormat.default.rawValue

        func run() throws {
            let scenario = try ScenarioTool.scenario(named: name)
            let format = try ScenarioTool.format(named: format)
            try ScenarioTool.write(scenario, to: output, format: format)
        }
    }
}
