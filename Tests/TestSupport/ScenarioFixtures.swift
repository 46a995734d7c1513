import BTScenario
import Foundation

/// Scenario captures for tests. Each (scenario, format) is written once per test process into a shared
/// temporary directory (removed when the process exits) and reused, since the files are deterministic.
public enum ScenarioFixtures {
    static let lock = NSLock()
    nonisolated(unsafe) static var written: [String: String] = [:]
    nonisolated(unsafe) static var directory: TemporaryDirectory?

    /// The path of scenario `name` written in `format`. Throws for an unknown name or a write error.
    public static func path(_ name: String, format: ScenarioFormat = .default) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let key = "\(name).\(format.rawValue).\(format.fileExtension)"
        if let done = written[key] { return done }
        guard let scenario = ScenarioRegistry.named(name) else { throw FixtureError.unknownScenario(name) }
        if directory == nil {
            directory = try TemporaryDirectory(prefix: "btlens-fixtures")
            atexit { ScenarioFixtures.directory = nil }
        }
        guard let directory else { throw FixtureError.unknownScenario(name) }
        let file = directory.file(key)
        try scenario.write(to: file, format: format)
        written[key] = file
        return file
    }

    public enum FixtureError: Error, CustomStringConvertible {
        case unknownScenario(String)
        public var description: String {
            switch self {
            case .unknownScenario(let n): "no scenario named '\(n)' (known: \(ScenarioRegistry.names.joined(separator: ", ")))"
            }
        }
    }
}

/// Writes (once per process) scenario `name` in `format` and returns the file's path.
public func writeScenario(_ name: String, format: ScenarioFormat = .default) throws -> String {
    try ScenarioFixtures.path(name, format: format)
}

extension TemporaryDirectory {
    /// A capture of `shape` from `btlens-scenario bench`, about `bytes` long, written here as `SHAPE.btsnoop`,
    /// and an empty directory beside it (`spill`) for what the code under test sets aside, which must be empty
    /// again at the end.
    public func benchCapture(_ shape: BenchShape, bytes: Int64) throws -> (capture: String, spill: String) {
        let capture = file("\(shape).btsnoop")
        _ = try BenchmarkGenerator.write(to: capture, targetBytes: bytes, shape: shape)
        let spill = file("spill")
        try FileManager.default.createDirectory(atPath: spill, withIntermediateDirectories: false)
        return (capture, spill)
    }
}
