import ArgumentParser
import BTScenario

extension ScenarioTool {
    /// `list`: every scenario with its one-line summary.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the named scenarios.")

        func run() throws {
            let width = ScenarioRegistry.names.map(\.count).max() ?? 0
            for s in ScenarioRegistry.all {
                print(s.name + String(repeating: " ", count: width - s.name.count + 2) + s.summary)
            }
        }
    }
}
