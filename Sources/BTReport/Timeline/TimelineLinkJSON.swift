import BTWire
import BTCapture
import BTTrack

/// `timeline --json`'s connection objects of the links judged before the capture ended (`LinkRetirement`),
/// serialised when each was judged and set aside (`SpilledRecords`) until the report is written: memory keeps 12
/// bytes per judged link, not its events. Bluetooth Quality Reports about a link may come after it was judged:
/// they are the object's last member, added when it is written (`write`).
public final class TimelineLinkJSON: @unchecked Sendable {
    let connectionFilter: Int?
    /// Written on the link thread while the capture is read, read once it is finished.
    public let records: SpilledRecords
    /// The nesting level the objects are serialised at: a connection in a capture's report at the top.
    static let level = 2

    /// `spillDirectory`: where the objects are set aside (the system's temporary directory); nil keeps them in memory.
    public init(connectionFilter: Int? = nil, spillDirectory: String? = nil) {
        precondition(_isPOD(LinkPhase.self) && _isPOD(Header.self), "set aside as bytes")
        self.connectionFilter = connectionFilter
        records = SpilledRecords(directory: spillDirectory)
    }

    /// A judged link's record: its object's text, then (where the record begins) this header and its phases. The
    /// phases and parameters name the phase of a quality report about it (`QualityReportText`), added when it is
    /// written.
    struct Header {
        var link: LinkSummary
        var parameters: ConnectionParameters?
        var phaseCount: Int32
        /// The object's text, just before the header.
        var textBytes: Int64
    }

    /// Serialises a judged link's object (as the whole capture's report would at the end), its closing brace left
    /// for `write`, and sets it aside: written as it is made, a member and an event at a time.
    public func keep(_ c: Connection) {
        guard connectionFilter == nil || connectionFilter == c.id else { return }
        let spill = records.spill
        let textStart = spill.size
        var members = JSONStreamWriter.Members(writer: JSONStreamWriter { spill.append($0) }, level: Self.level)
        TimelineReport.connectionMembers(c, captureEnd: c.end?.timestamp, qualityReports: [], seriesAndEvents: true, to: &members)
        let textBytes = spill.size - textStart
        records.begin(id: c.id)
        spill.append(plain: Header(link: LinkSummary(c), parameters: c.parameters, phaseCount: Int32(c.phases.count),
                                   textBytes: textBytes))
        spill.append(plain: c.phases)
    }

    /// "\n    }": how an object at `level` ends.
    static let closing = "\n" + String(repeating: " ", count: 2 * level) + "}"

    /// The ids of the links set aside, in id order.
    var ids: PackedIDs {
        records.sortByID()
        return records.ids
    }

    /// Whether the link of `id` was judged early and set aside.
    func contains(id: Int) -> Bool {
        records.sortByID()
        return records.index(of: id) != nil
    }

    /// Writes the object whose record is `i`th in id order at nesting `level`, with the quality reports of
    /// `reports` about it as its last member: the text set aside a piece at a time.
    func write(at i: Int, reports: [QualityReport], level: Int, to writer: JSONStreamWriter) {
        let spill = records.spill
        let at = records.offset(at: i)
        let header = spill.read(plain: Header.self, at: at)
        let phasesAt = at + Int64(MemoryLayout<Header>.stride)
        // Serialised for a capture's report at the top; deeper (in an array of captures), every line goes further in.
        let indented: (String) -> String = level > Self.level
            ? { [pad = "\n" + String(repeating: " ", count: 2 * (level - Self.level))] in
                $0.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: pad) }
            : { $0 }
        spill.readText(at: at - header.textBytes, count: Int(header.textBytes)) { writer.raw(indented($0)) }
        var tail = ""
        let about = QualityReport.about(header.link, in: reports)
        if !about.isEmpty {
            let phases = spill.read(plain: LinkPhase.self, count: Int(header.phaseCount), at: phasesAt)
            tail = ",\n" + String(repeating: " ", count: 2 * (Self.level + 1)) + "\"quality_reports\": "
            TimelineReport.qualityReportsJSON(about) { QualityReportText.line($0, phases: phases, parameters: header.parameters) }
                .write(to: &tail, indent: 2, level: Self.level + 1)
        }
        tail += Self.closing
        writer.raw(indented(tail))
    }
}
