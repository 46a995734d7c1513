import BTWire
import BTCapture
import BTTrack

/// The text timeline's lines of the links judged before the capture ended (`LinkRetirement`), written when each
/// was judged and before its history was let go, and set aside (`SpilledRecords`: a temporary file whose name is
/// removed at once) until the report prints them: memory keeps 12 bytes per judged link, not its lines. The record
/// holds all the report reads of the link (its heading and summary too), so the model may let the link go
/// (`LinkRetirement.Keeping.summary`). With a connection filter only that link's lines are kept.
public final class TimelineLinkLines: @unchecked Sendable {
    /// What the text timeline prints of a link: made from the link, or read back from its record.
    public struct Link: Sendable {
        /// What the report and its overview read of the link: the model may have let it go (`Keeping.summary`).
        var link: LinkSummary
        var heading: TimelineReport.Heading
        var lines: [(at: RecordRef, text: String)]
        var summary: String
        var droppedEvents: Int
        /// For the lines of Bluetooth Quality Reports about the link (`QualityReportText`), added at the end.
        var phases: [LinkPhase]
        var parameters: ConnectionParameters?
    }

    /// A judged link's record in the spill: this header, its phases, a `LineHeader` per line, then its heading's,
    /// its summary's and its lines' text one after the other. Plain bytes, written and read back as they are.
    struct Header {
        var link: LinkSummary
        var droppedEvents: Int
        var parameters: ConnectionParameters?
        var phaseCount: Int32
        var lineCount: Int32
        var headBytes: Int32
        /// -1: no opening line.
        var openingBytes: Int32
        var summaryBytes: Int32
    }

    struct LineHeader {
        var at: RecordRef
        var bytes: Int32
    }

    let connectionFilter: Int?
    /// Written on the link thread while the capture is read, read once it is finished.
    public let records: SpilledRecords

    /// `spillDirectory`: where the lines are set aside (the system's temporary directory); nil keeps them in memory.
    public init(connectionFilter: Int? = nil, spillDirectory: String? = nil) {
        precondition(_isPOD(LinkPhase.self) && _isPOD(LineHeader.self) && _isPOD(Header.self) && _isPOD(LinkSummary.self),
                     "set aside as bytes")
        self.connectionFilter = connectionFilter
        records = SpilledRecords(directory: spillDirectory)
    }

    /// Lines set aside among other records (`SpilledRecords(sharing:)`).
    init(records: SpilledRecords) {
        connectionFilter = nil
        self.records = records
    }

    /// Writes what the report prints of a judged link (as `TimelineReport.text` would at the end) and sets it aside.
    public func keep(_ c: Connection) {
        guard connectionFilter == nil || connectionFilter == c.id else { return }
        keep(Link(c, model: .links([c])))
    }

    /// Sets aside `link`, made of a judged link (`Link(_:model:)` with the link alone).
    func keep(_ link: Link) {
        records.begin(id: link.link.id)
        let spill = records.spill
        spill.append(plain: Header(link: link.link, droppedEvents: link.droppedEvents, parameters: link.parameters,
                                   phaseCount: Int32(link.phases.count), lineCount: Int32(link.lines.count),
                                   headBytes: Int32(link.heading.head.utf8.count),
                                   openingBytes: link.heading.opening.map { Int32($0.utf8.count) } ?? -1,
                                   summaryBytes: Int32(link.summary.utf8.count)))
        spill.append(plain: link.phases)
        spill.append(plain: link.lines.map { LineHeader(at: $0.at, bytes: Int32($0.text.utf8.count)) })
        spill.append(link.heading.head)
        if let opening = link.heading.opening { spill.append(opening) }
        spill.append(link.summary)
        for line in link.lines { spill.append(line.text) }
    }

    /// The ids of the judged links set aside, in id order.
    var ids: PackedIDs {
        records.sortByID()
        return records.ids
    }

    /// Whether the link of `id` was judged early and set aside.
    func contains(id: Int) -> Bool {
        records.sortByID()
        return records.index(of: id) != nil
    }

    /// The judged link of `id`, when it was set aside.
    func link(id: Int) -> Link? {
        records.sortByID()
        return records.index(of: id).map(link(at:))
    }

    /// The judged link whose record is `i`th in id order (after `records.sortByID()`).
    func link(at i: Int) -> Link {
        var cursor = records.spill.cursor(at: records.offset(at: i))
        let header = cursor.next(Header.self)
        let phases = cursor.next(LinkPhase.self, count: Int(header.phaseCount))
        let heads = cursor.next(LineHeader.self, count: Int(header.lineCount))
        let textBytes = heads.reduce(max(0, Int(header.headBytes)) + max(0, Int(header.openingBytes))
                                     + max(0, Int(header.summaryBytes))) { $0 + max(0, Int($1.bytes)) }
        let text = cursor.next(UInt8.self, count: textBytes)
        var next = 0
        func take(_ n: Int) -> String {
            let n = max(0, n)
            defer { next += n }
            return String(decoding: text[min(next, text.count)..<min(next + n, text.count)], as: UTF8.self)
        }
        let head = take(Int(header.headBytes))
        let opening = header.openingBytes < 0 ? nil : take(Int(header.openingBytes))
        let summary = take(Int(header.summaryBytes))
        let lines = heads.map { (at: $0.at, text: take(Int($0.bytes))) }
        return Link(link: header.link, heading: TimelineReport.Heading(head: head, opening: opening), lines: lines,
                    summary: summary, droppedEvents: header.droppedEvents, phases: phases, parameters: header.parameters)
    }
}

extension TimelineLinkLines.Link {
    /// `model`: the capture's, or the link alone (`CaptureModel.links`) for a closed link judged early, whose lines
    /// depend on it alone.
    init(_ c: Connection, model: CaptureModel) {
        self.init(link: LinkSummary(c), heading: TimelineReport.Heading(c), lines: TimelineReport.linesWithPhases(c),
                  summary: TimelineReport.summaryLine(c, model: model), droppedEvents: c.droppedEvents, phases: c.phases,
                  parameters: c.parameters)
    }
}
