import BTWire
import BTCapture
import BTDecode
import BTTrack

/// A Bluetooth Quality Report on its link's timeline: what the controller said about the link, and when it shows
/// heavy retransmissions, that they explain a costly phase.
enum QualityReportText {
    static func line(_ r: QualityReport, in c: Connection) -> String {
        line(r, phases: c.phases, parameters: c.parameters)
    }

    /// `phases` and `parameters`: the link's (kept apart for a link judged before the capture ended).
    static func line(_ r: QualityReport, phases: [LinkPhase], parameters: ConnectionParameters?) -> String {
        var text = "Bluetooth Quality Report: " + QualityReportDescription.describe(r.report).0.replacingOccurrences(of: "BQR ", with: "")
        if r.showsHeavyRetransmissions {
            let phase = phases.last { $0.start.number <= r.at.number }
            let name = (phase?.parameters ?? parameters).map { "interval \(Format.ms($0.intervalMilliseconds)) ms latency \($0.latency)" }
            text += ": heavy retransmissions" + (name.map { " in this phase (\($0))" } ?? "")
                + ", each costing radio time the model does not count"
        }
        return text + "  [record \(r.at.number)]"
    }
}
