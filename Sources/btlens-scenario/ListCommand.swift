import ArgumentParser
import BTScenario

extension ScenarioTool {
    /// `list`: every scenario with its one-line summary, then the formats `write` takes.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the named scenarios and the capture formats.")

        func run() throws {
            let width = max(ScenarioRegistry.names.map(\.count).max() ?? 0, ScenarioFormat.allCases.map(\.rawValue.count).max() ?? 0)
            for s in ScenarioRegistry.all {
                print(s.name + String(repeating: " ", count: width - s.name.count + 2) + s.summary)
            }
            print("\nWritten on demand (not samples):")
            for s in ScenarioRegistry.features {
                print(s.name + String(repeating: " ", count: max(1, width - s.name.count + 2)) + s.summary)
            }
            print("\nFormats (--format):")
            for f in ScenarioFormat.allCases {
                print(f.rawValue + String(repeating: " ", count: width - f.rawValue.count + 2) + f.summary)
            }
        }
    }
}
