import BTWire
import BTTrack

/// `btlens energy`'s rows of the links judged before the capture ended (`LinkRetirement`): each priced, phase by
/// phase, when it was judged and before it was let go, and set aside in a spill (`Spill`: a temporary file whose
/// name is removed at once) as plain bytes — its row (with its `LinkSummary`), what an air capture heard on it and
/// its phases. Memory keeps 12 bytes per judged link (its id and where its row is), not its row: the report reads
/// each row back as it prints it.
public final class EnergyLinkRows: @unchecked Sendable {
    /// A judged link's record in the spill, before its phases.
    struct Header {
        var row: EnergyReport.LinkTable.Row
        var heard: RadioTime?
    }

    let energy: EnergyModel
    let spill: Spill
    /// Why the spill is memory rather than a file (it could not be made in the directory given).
    public let spillFailure: String?
    /// Written on the link thread while the capture is read, read once it is finished: each judged link's id and
    /// where its record is, in judging order.
    var ids: [Int32] = []
    var offsets: [Int64] = []
    /// One link priced at a time, its phases then written out: reused.
    private var scratch = EnergyReport.LinkTable()

    /// `spillDirectory`: where the rows are set aside (the system's temporary directory); nil keeps them in memory.
    public init(energy: EnergyModel, spillDirectory: String? = nil) {
        self.energy = energy
        let made = Spill.fileOrMemory(in: spillDirectory)
        spill = made.spill
        spillFailure = made.error.map { "\($0)" }
    }

    /// Whether the judged links' rows are in a file (not held in memory).
    public var isFile: Bool { spill.isFile }
    /// Bytes of judged links' rows set aside.
    public var spilledBytes: Int64 { spill.size }

    /// What went wrong writing or reading the rows (a full disk), if anything: the report would then miss links.
    public var failure: String? {
        spill.flush()
        return spill.failure
    }

    /// Prices one judged link that stays in the model (`kept`) and sets its row aside.
    public func price(_ c: Connection, kept: Bool) {
        guard kept, let end = c.end?.timestamp else { return }
        scratch.removeAll()
        scratch.append(c, captureEnd: end, energy: energy)
        var row = scratch.rows[0]
        row.firstPhase = 0
        let header = Header(row: row, heard: scratch.heard[0])
        let at = spill.append(plain: header)
        scratch.phases.withUnsafeBytes { _ = spill.append($0) }
        ids.append(Int32(clamping: c.id))
        offsets.append(at)
    }

    /// The tracker's side: prices each judged link that stays in the model; the row then holds all the report
    /// reads of it (its summary, phases and costs), so the tracker lets the link go (`LinkRetirement.Keeping.nothing`).
    public func retirement(window: Int = LinkRetirement.defaultWindow,
                           letGoBatch: Int = LinkRetirement.defaultLetGoBatch) -> LinkRetirement {
        LinkRetirement(window: window, keeping: .nothing, letGoBatch: letGoBatch) { [self] c, kept in price(c, kept: kept) }
    }

    /// The judged links in id order, to read back (once the capture is finished): sorts the places and lets the
    /// ids go.
    func sortedByID() -> EnergyReport.JudgedLinks {
        var order = Array(0..<Int32(ids.count))
        order.sort { ids[Int($0)] < ids[Int($1)] }
        let sortedIDs = order.map { ids[Int($0)] }
        let sortedOffsets = order.map { offsets[Int($0)] }
        ids = []
        offsets = []
        return EnergyReport.JudgedLinks(spill: spill, ids: sortedIDs, offsets: sortedOffsets)
    }
}

extension EnergyReport {
    /// The judged links' rows in the spill, in id order (`EnergyLinkRows`).
    struct JudgedLinks: @unchecked Sendable {
        let spill: Spill
        var ids: [Int32]
        var offsets: [Int64]

        static let none = JudgedLinks(spill: (try? Spill(directory: nil))!, ids: [], offsets: [])

        var count: Int { offsets.count }

        /// Whether link `id` is among them.
        func contains(id: Int) -> Bool {
            let i = ids.partitioningIndex { Int($0) >= id }
            return i < ids.count && Int(ids[i]) == id
        }

        /// The header of the `i`th judged link. A read that fails (the spill's `failure` says why, and `energy`
        /// reports it) gives zeros: a link without phases, not a crash.
        func header(_ i: Int) -> EnergyLinkRows.Header { spill.read(plain: EnergyLinkRows.Header.self, at: offsets[i]) }

        /// The `i`th judged link, read back whole.
        func link(_ i: Int) -> Link {
            let header = header(i)
            let count = max(0, Int(header.row.phaseCount))
            let phases = [LinkTable.PhaseRow](unsafeUninitializedCapacity: count) { buffer, initialised in
                let ok = spill.read(at: offsets[i] + Int64(MemoryLayout<EnergyLinkRows.Header>.stride),
                                    into: UnsafeMutableRawBufferPointer(buffer))
                initialised = ok ? count : 0
            }
            return LinkTable.link(header.row, phases: phases[...], heard: header.heard)
        }
    }
}
