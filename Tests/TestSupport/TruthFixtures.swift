import BTScenario

/// Writes a ground-truth capture playing `episodes` (names from `GroundTruth.episodeNames`) with `seed`, as btsnoop.
public func writeTruthCapture(seed: UInt64, episodes: [String], to path: String) throws {
    let (scenario, _) = GroundTruth.scenario(seed: seed, episodes: episodes)
    try scenario.write(to: path)
}
