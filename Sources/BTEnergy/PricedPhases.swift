import BTWire
import BTTrack

/// The phone's cost of each phase of the links judged before the capture ended (`LinkRetirement`), priced
/// before their phases were let go: what `EnergyReport.phoneTotal` adds for them. A flat array of costs and,
/// by link id, where each link's run of them is: about 32 bytes a phase.
public struct PricedPhases: Sendable {
    var costs: [RadioCost] = []
    /// By link id − 1: the link's costs in `costs` (start, count); count −1 = not priced.
    var runs: [(start: Int32, count: Int32)] = []

    public init() {}

    /// Prices a closed LE link's phases (a link that is still open at the capture's end is not judged early).
    public mutating func price(_ c: Connection, energy: EnergyModel) {
        guard c.transport == .le || c.transport == .unknown, let end = c.end?.timestamp, c.id > 0 else { return }
        let start = costs.count
        EnergyReport.phaseCosts(c, captureEnd: end, energy: energy) { costs.append($0) }
        if runs.count < c.id { runs.append(contentsOf: repeatElement((start: Int32(0), count: Int32(-1)), count: c.id - runs.count)) }
        runs[c.id - 1] = (Int32(clamping: start), Int32(clamping: costs.count - start))
    }

    func costs(of c: Connection) -> ArraySlice<RadioCost>? {
        guard c.id > 0, c.id <= runs.count, runs[c.id - 1].count >= 0 else { return nil }
        let r = runs[c.id - 1]
        return costs[Int(r.start)..<Int(r.start) + Int(r.count)]
    }
}
