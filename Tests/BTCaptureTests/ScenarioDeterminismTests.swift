import BTCapture
import BTScenario
import Testing
import TestSupport

/// The captures are the project's fixtures and samples, so they must rebuild byte for byte.
@Suite struct ScenarioDeterminismTests {
    @Test(arguments: ScenarioRegistry.names, ScenarioFormat.allCases)
    func sameBytesTwice(name: String, format: ScenarioFormat) throws {
        let dir = try TemporaryDirectory()
        let scenario = try #require(ScenarioRegistry.named(name))
        try scenario.write(to: dir.file("a"), format: format)
        try scenario.write(to: dir.file("b"), format: format)
        let a = try TemporaryDirectory.contents(of: dir.file("a"))
        let b = try TemporaryDirectory.contents(of: dir.file("b"))
        #expect(a.count > 1_000)
        #expect(a == b)
    }

    @Test func scenariosHaveDistinctNamesAndSeeds() {
        let all = ScenarioRegistry.all
        #expect(Set(all.map(\.name)).count == all.count)
        #expect(Set(all.map(\.seed)).count == all.count)
        #expect(all.count >= 5)
        #expect(all.allSatisfy { !$0.summary.isEmpty && !$0.summary.contains("\n") })
    }

    @Test func benchIsDeterministicAndGrowsByExtension() throws {
        let dir = try TemporaryDirectory()
        let megabyte: Int64 = 1 << 20
        _ = try BenchmarkGenerator.write(to: dir.file("a"), targetBytes: megabyte)
        _ = try BenchmarkGenerator.write(to: dir.file("b"), targetBytes: megabyte)
        _ = try BenchmarkGenerator.write(to: dir.file("c"), targetBytes: 2 * megabyte)
        let a = try TemporaryDirectory.contents(of: dir.file("a"))
        let b = try TemporaryDirectory.contents(of: dir.file("b"))
        let c = try TemporaryDirectory.contents(of: dir.file("c"))
        #expect(a == b)
        // The target only decides where the capture stops: a smaller one is a prefix of a larger one.
        #expect(c.count > a.count)
        #expect(Array(c.prefix(a.count)) == a)
    }

    @Test func samplesListEveryScenarioAndEveryFormat() {
        let files = SampleSet.files
        #expect(Set(files.map(\.name)).count == files.count)
        #expect(Set(files.map(\.scenario)) == Set(ScenarioRegistry.names))
        // Every HCI format, and the two air containers the generator models fully (ScenarioAirTests writes the others).
        #expect(Set(files.map(\.format)) == Set(ScenarioFormat.hciFormats + [.air272, .air256]))
        for name in ScenarioRegistry.names {
            #expect(files.contains { $0.name == "\(name).btsnoop" && $0.format == .btsnoopH4 })
        }
    }
}
