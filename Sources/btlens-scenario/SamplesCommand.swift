import ArgumentParser
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `samples DIR`: the whole sample set (`SampleSet.files`).
    struct Samples: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every scenario as DIR/NAME.btsnoop, plus the other formats of some of them.")

        @Argument(help: "Directory to write into (created if missing).")
        var directory: String

        func run() throws {
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw ToolError.io("\(directory): \(String(cString: strerror(errno)))")
            }
            for file in SampleSet.files {
                guard let scenario = ScenarioRegistry.named(file.scenario) else { continue }
                let path = directory.hasSuffix("/") ? directory + file.name : directory + "/" + file.name
                try ScenarioTool.write(scenario, to: path, format: file.format, air: file.air)
                print(path)
            }
        }
    }
}
