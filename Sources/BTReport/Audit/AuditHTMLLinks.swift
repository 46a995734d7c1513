import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// What the HTML report draws and prints of the links judged before the capture ended (`LinkRetirement`), made
/// when each link is judged and set aside until the page is written, so that the audit lets its links go as the
/// other formats do. The records wait in one temporary file; memory keeps 6 bytes per judged link (the index of
/// its phases, through which its priced row and GATT, written just before, are found) and, for the connection
/// panels' budget, the line counts of the first links.
///
/// - the link's timeline phases (`AuditHTMLTimeline.phases`), with its summary and end (`records`);
/// - its priced row for the energy panel and the timeline's lanes (`rows`, `EnergyLinkRows`);
/// - its GATT (`gatt`, `GATTLinkSpill`), gathered into its peer's when the page is written;
/// - its text timeline (`lines`, `TimelineLinkLines`), only while the panels' line budget
///   (`AuditHTML.panelLineBudget`, counted in id order) may still reach it: a link whose lower-id links already
///   judged fill the budget is shown as a pointer only, so needs no text.
///
/// The judge runs on the link thread; the page is written once the capture is read.
public final class AuditHTMLLinks: @unchecked Sendable {
    /// A judged link's record: this header, a `PhaseHeader` per phase, then the phases' titles.
    struct Header {
        var link: LinkSummary
        /// Where its timeline lane ends (its end).
        var end: Timestamp
        var phaseCount: Int32
        /// Its phases but the connecting and link ones (`AuditHTMLTimeline.eventPhaseBudget`).
        var events: Int32
    }

    struct PhaseHeader {
        var start: Timestamp
        var end: Timestamp
        var kind: UInt8
        var titleBytes: Int32
    }

    /// The judged links' timeline phases.
    public let records: SpilledRecords
    /// The text timelines of the judged links the connection panels may show.
    let lines: TimelineLinkLines
    /// The judged links priced (the energy panel, and each lane's charge).
    public let rows: EnergyLinkRows
    /// The judged links' GATT (the panels' GATT trees).
    let gatt: GATTLinkSpill
    /// Links whose text was set aside, by id, with the fewest lines the panels will count for each.
    private var counted: [(id: Int32, lines: Int32)] = []
    /// The lowest id of a judged link the panels show as a pointer: every later link is one too.
    private var firstPointer = Int.max

    /// `energy`: what the energy panel prices with. `spillDirectory`: where the records are set aside (the system's
    /// temporary directory); nil keeps them in memory.
    public init(energy: EnergyModel = EnergyModel(), spillDirectory: String? = nil) {
        precondition(_isPOD(Header.self) && _isPOD(PhaseHeader.self), "set aside as bytes")
        // One file for the four kinds of record (each written whole, one after another, on the link thread): a
        // directory of captures holds one open file per capture for them.
        records = SpilledRecords(directory: spillDirectory)
        lines = TimelineLinkLines(records: SpilledRecords(sharing: records))
        // Each priced row and GATT is written just before its link's phases and found through their index.
        rows = EnergyLinkRows(energy: energy, records: SpilledRecords(following: records))
        gatt = GATTLinkSpill(records: SpilledRecords(following: records))
    }

    /// Why the records are in memory rather than a file, when they are.
    public var spillFailure: String? { records.spillFailure }

    /// What went wrong writing or reading the records (a full disk), if anything.
    public var failure: String? { records.failure }

    /// Sets aside what the page reads of a judged link that stays in the model (`kept`).
    public func keep(_ c: Connection, kept: Bool) {
        rows.price(c, kept: kept)
        guard kept else { return }
        gatt.keep(c)
        let end = c.end?.timestamp ?? c.start.timestamp
        let phases = AuditHTMLTimeline.phases(c, model: .links([c]), end: end)
        records.begin(id: c.id)
        let spill = records.spill
        spill.append(plain: Header(link: LinkSummary(c), end: end, phaseCount: Int32(phases.count),
                                   events: Int32(AuditHTMLTimeline.eventCount(phases))))
        let titles = phases.map { Array($0.title.utf8) }
        for (p, title) in zip(phases, titles) {
            spill.append(plain: PhaseHeader(start: p.start, end: p.end, kind: p.kind.code, titleBytes: Int32(title.count)))
        }
        for title in titles { spill.append(plain: title) }
        keepText(c)
    }

    /// The link's text timeline, unless the panels' budget is certainly spent by the lower-id links before it.
    private func keepText(_ c: Connection) {
        guard c.id < firstPointer else { return }
        // The lines counted before this link are at least those of the lower-id links whose text is kept.
        var before = 0
        for k in counted where Int(k.id) < c.id { before += Int(k.lines) }
        guard before < AuditHTML.panelLineBudget else {
            firstPointer = c.id
            return
        }
        let link = TimelineLinkLines.Link(c, model: .links([c]))
        lines.keep(link)
        counted.append((Int32(clamping: c.id), Int32(clamping: AuditHTML.fewestPanelLines(link))))
    }

    /// The judged link of the `i`th record in id order (after `records.sortByID()`): its summary, end, phases
    /// and how many of them are events.
    func link(at i: Int) -> (link: LinkSummary, end: Timestamp, phases: [AuditHTMLTimeline.Phase], events: Int) {
        var cursor = records.spill.cursor(at: records.offset(at: i))
        let header = cursor.next(Header.self)
        let heads = cursor.next(PhaseHeader.self, count: Int(header.phaseCount))
        let bytes = cursor.next(UInt8.self, count: heads.reduce(0) { $0 + max(0, Int($1.titleBytes)) })
        var next = 0
        let phases = heads.map { h in
            let n = max(0, Int(h.titleBytes))
            defer { next += n }
            let title = String(decoding: bytes[min(next, bytes.count)..<min(next + n, bytes.count)], as: UTF8.self)
            return AuditHTMLTimeline.Phase(start: h.start, end: h.end, kind: AuditHTMLTimeline.Kind(code: h.kind), title: title)
        }
        return (header.link, header.end, phases, Int(header.events))
    }

    /// The header of the `i`th record in id order: what the lanes' packing reads.
    func header(at i: Int) -> (link: LinkSummary, end: Timestamp, firstStart: Timestamp, events: Int) {
        let spill = records.spill
        let at = records.offset(at: i)
        let header = spill.read(plain: Header.self, at: at)
        let first = header.phaseCount > 0 ? spill.read(plain: PhaseHeader.self, at: at + Int64(MemoryLayout<Header>.stride)).start
            : header.link.start.timestamp
        return (header.link, header.end, first, Int(header.events))
    }
}
