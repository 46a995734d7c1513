import Foundation
import Testing
import BTScenario
import TestSupport

/// samples/ holds captures btlens generates itself; `make samples` must rebuild them byte for byte.
@Suite("bundled samples")
struct SamplesTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    @Test("every sample equals what its scenario generates", arguments: SampleSet.files.map(\.name))
    func upToDate(name: String) throws {
        let file = try #require(SampleSet.files.first { $0.name == name })
        let committed = try TemporaryDirectory.contents(of: Self.samples.appendingPathComponent(name).path)
        let dir = try TemporaryDirectory()
        let path = dir.file(name)
        try #require(ScenarioRegistry.named(file.scenario)).write(to: path, format: file.format, air: file.air)
        let fresh = try TemporaryDirectory.contents(of: path)
        #expect(committed == fresh, "samples/\(name) is stale: run `make samples`")
    }
}
