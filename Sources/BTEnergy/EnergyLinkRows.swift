import BTWire
import BTTrack

/// `btlens energy`'s rows of the links judged before the capture ended (`LinkRetirement`): each priced, phase by
/// phase, when it was judged and before its phases were let go, so the report is the same and memory holds a
/// row per finished link instead of the link's whole history.
public final class EnergyLinkRows: @unchecked Sendable {
    let energy: EnergyModel
    /// Written on the link thread while the capture is read, read once it is finished: the rows, and each
    /// link's row by link id.
    var table = EnergyReport.LinkTable()
    var rowOf: [Int: Int32] = [:]

    public init(energy: EnergyModel) { self.energy = energy }

    /// Prices one judged link that stays in the model (`kept`), before it is slimmed.
    public func price(_ c: Connection, kept: Bool) {
        guard kept, let end = c.end?.timestamp else { return }
        rowOf[c.id] = Int32(table.append(c, captureEnd: end, energy: energy))
    }

    /// The tracker's side: prices each judged link that stays in the model; the row then holds all the report
    /// reads of it (its summary, phases and costs), so the tracker lets the link go (`LinkRetirement.Keeping.nothing`).
    public func retirement(window: Int = LinkRetirement.defaultWindow,
                           letGoBatch: Int = LinkRetirement.defaultLetGoBatch) -> LinkRetirement {
        LinkRetirement(window: window, keeping: .nothing, letGoBatch: letGoBatch) { [self] c, kept in price(c, kept: kept) }
    }
}
