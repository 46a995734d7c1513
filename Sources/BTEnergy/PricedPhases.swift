import BTWire
import BTTrack

/// The phone's cost of the links judged before the capture ended (`LinkRetirement`), priced phase by phase
/// before their phases were let go: what `EnergyReport.phoneTotal` adds for them. A running sum, so it costs
/// nothing per link; added in the order links were judged rather than by id, it can differ from pricing them
/// at the end in the last bits of a double, which the reports' rounding never shows. Their phases and a BR/EDR
/// link's paging are also spread over time (`bins`), for the counters to replace where they count
/// (`PhoneTotal`).
public struct PricedPhases: Sendable {
    public private(set) var total = RadioCost.zero
    public private(set) var links = 0
    public private(set) var bins = ActivityBins()

    public init() {}

    /// Prices a closed LE or BR/EDR link's phases (a link that is still open at the capture's end is not judged early).
    public mutating func price(_ c: Connection, energy: EnergyModel) {
        guard c.transport == .le || c.transport == .unknown || c.isClassic, let end = c.end?.timestamp else { return }
        EnergyReport.phaseCosts(c, captureEnd: end, energy: energy) { cost, from, to in
            total += cost
            bins.spread(from, to, cost)
        }
        if c.transport == .brEdr, let asked = c.connectRequested?.timestamp {
            EnergyReport.spreadPaging(&bins, from: asked, to: c.start.timestamp, energy: energy)
        }
        links += 1
    }
}
