import BTWire
import BTTrack

/// `btlens energy`'s rows of the links judged before the capture ended (`LinkRetirement`): each priced, phase by
/// phase, when it was judged and before it was let go, and set aside (`SpilledRecords`: a temporary file whose
/// name is removed at once) as plain bytes — its row (with its `LinkSummary`), what an air capture heard on it and
/// its phases. Memory keeps 12 bytes per judged link, not its row: the report reads each row back as it prints it.
public final class EnergyLinkRows: @unchecked Sendable {
    /// A judged link's record, before its phases.
    struct Header {
        var row: EnergyReport.LinkTable.Row
        var heard: RadioTime?
    }

    let energy: EnergyModel
    /// Written on the link thread while the capture is read, read once it is finished.
    public let records: SpilledRecords
    /// One link priced at a time, its phases then written out: reused.
    private var scratch = EnergyReport.LinkTable()

    /// `spillDirectory`: where the rows are set aside (the system's temporary directory); nil keeps them in memory.
    public init(energy: EnergyModel, spillDirectory: String? = nil) {
        self.energy = energy
        records = SpilledRecords(directory: spillDirectory)
    }

    /// Rows set aside among other records (`SpilledRecords(sharing:)`).
    public init(energy: EnergyModel, records: SpilledRecords) {
        self.energy = energy
        self.records = records
    }

    /// Prices one judged link that stays in the model (`kept`) and sets its row aside.
    public func price(_ c: Connection, kept: Bool) {
        guard kept, let end = c.end?.timestamp else { return }
        scratch.removeAll()
        scratch.append(c, captureEnd: end, energy: energy)
        var row = scratch.rows[0]
        row.firstPhase = 0
        records.begin(id: c.id)
        records.spill.append(plain: Header(row: row, heard: scratch.heard[0]))
        scratch.phases.withUnsafeBytes { _ = records.spill.append($0) }
    }

    /// The tracker's side: prices each judged link that stays in the model; the row then holds all the report
    /// reads of it (its summary, phases and costs), so the tracker lets the link go (`LinkRetirement.Keeping.nothing`).
    public func retirement(window: Int = LinkRetirement.defaultWindow,
                           letGoBatch: Int = LinkRetirement.defaultLetGoBatch) -> LinkRetirement {
        LinkRetirement(window: window, keeping: .nothing, letGoBatch: letGoBatch) { [self] c, kept in price(c, kept: kept) }
    }
}

extension EnergyReport {
    /// The judged links' rows, in id order once the report is made (`EnergyLinkRows`).
    struct JudgedLinks: @unchecked Sendable {
        let records: SpilledRecords

        static let none = JudgedLinks(records: SpilledRecords(directory: nil))

        var count: Int { records.count }

        /// The header of the `i`th judged link. A read that fails (the spill's `failure` says why, and `energy`
        /// reports it) gives zeros: a link without phases, not a crash.
        func header(_ i: Int) -> EnergyLinkRows.Header {
            records.spill.read(plain: EnergyLinkRows.Header.self, at: records.offset(at: i))
        }

        /// The `i`th judged link, read back whole.
        func link(_ i: Int) -> Link {
            let header = header(i)
            let phases = records.spill.read(plain: LinkTable.PhaseRow.self, count: Int(header.row.phaseCount),
                                            at: records.offset(at: i) + Int64(MemoryLayout<EnergyLinkRows.Header>.stride))
            return LinkTable.link(header.row, phases: phases[...], heard: header.heard)
        }
    }
}
