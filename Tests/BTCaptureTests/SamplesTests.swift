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
        let fresh = try TemporaryDirectory.contents(of: try ScenarioFixtures.path(file.scenario, format: file.format))
        #expect(committed == fresh, "samples/\(name) is stale: run `make samples`")
    }
}
