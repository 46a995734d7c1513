import BTWire
import BTTrack

/// The text timeline's lines of the links judged before the capture ended (`LinkRetirement`), written when each
/// was judged and before its history was let go: a finished link costs memory in proportion to the lines it
/// prints, not to its packets. With a connection filter only that link's lines are kept.
public final class TimelineLinkLines: @unchecked Sendable {
    public struct Link: Sendable {
        var lines: [(at: RecordRef, text: String)]
        var summary: String
        var droppedEvents: Int
        /// For the lines of Bluetooth Quality Reports about the link (`QualityReportText`), added at the end.
        var phases: [LinkPhase]
        var parameters: ConnectionParameters?
    }

    let connectionFilter: Int?
    /// By link id; written on the link thread while the capture is read, read once it is finished.
    var links: [Int: Link] = [:]

    public init(connectionFilter: Int? = nil) { self.connectionFilter = connectionFilter }

    /// Writes a judged link's lines (as `TimelineReport.text` would at the end: a closed link's lines depend on it
    /// alone).
    public func keep(_ c: Connection) {
        guard connectionFilter == nil || connectionFilter == c.id else { return }
        links[c.id] = Link(lines: TimelineReport.linesWithPhases(c), summary: TimelineReport.summaryLine(c, model: .links([c])),
                           droppedEvents: c.droppedEvents, phases: c.phases, parameters: c.parameters)
    }

    func lines(of c: Connection) -> Link? { links[c.id] }
}
