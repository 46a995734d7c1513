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

    /// A judged link's record: this header, its phases, then its object's text. The phases and parameters name
    /// the phase of a quality report about it (`QualityReportText`), added when it is written.
    struct Header {
        var link: LinkSummary
        var parameters: ConnectionParameters?
        var phaseCount: Int32
        var textBytes: Int64
    }

    /// Serialises a judged link's object (as the whole capture's report would at the end), its closing brace left
    /// for `write`, and sets it aside.
    public func keep(_ c: Connection) {
        guard connectionFilter == nil || connectionFilter == c.id else { return }
        var text = ""
        TimelineReport.connectionJSON(c, captureEnd: c.end?.timestamp, qualityReports: [], seriesAndEvents: true)
            .write(to: &text, indent: 2, level: Self.level)
        text.removeLast(Self.closing.count)
        records.begin(id: c.id)
        let spill = records.spill
        spill.append(plain: Header(link: LinkSummary(c), parameters: c.parameters, phaseCount: Int32(c.phases.count),
                                   textBytes: Int64(text.utf8.count)))
        spill.append(plain: c.phases)
        spill.append(text)
    }

    /// "\n    }": how an object at `level` ends.
    static let closing = "\n" + String(repeating: " ", count: 2 * level) + "}"

    /// The ids of the links set aside, in id order.
    var ids: [Int32] {
        records.sortByID()
        return records.ids
    }

    /// Whether the link of `id` was judged early and set aside.
    func contains(id: Int) -> Bool {
        records.sortByID()
        return records.index(of: id) != nil
    }

    /// Writes the object whose record is `i`th in id order at nesting `level`, with the quality reports of
    /// `reports` about it as its last member.
    func write(at i: Int, reports: [QualityReport], level: Int, to writer: JSONStreamWriter) {
        let spill = records.spill
        var cursor = spill.cursor(at: records.offsets[i])
        let header = cursor.next(Header.self)
        let phasesAt = cursor.offset
        cursor.skip(LinkPhase.self, count: Int(header.phaseCount))
        var text = cursor.text(count: Int(header.textBytes))
        let about = QualityReport.about(header.link, in: reports)
        if !about.isEmpty {
            let phases = spill.read(plain: LinkPhase.self, count: Int(header.phaseCount), at: phasesAt)
            var member = ",\n" + String(repeating: " ", count: 2 * (Self.level + 1)) + "\"quality_reports\": "
            TimelineReport.qualityReportsJSON(about) { QualityReportText.line($0, phases: phases, parameters: header.parameters) }
                .write(to: &member, indent: 2, level: Self.level + 1)
            text += member
        }
        text += Self.closing
        // Serialised for a capture's report at the top; deeper (in an array of captures), every line goes further in.
        if level > Self.level {
            text = text.split(separator: "\n", omittingEmptySubsequences: false)
                .joined(separator: "\n" + String(repeating: " ", count: 2 * (level - Self.level)))
        }
        writer.raw(text)
    }
}
