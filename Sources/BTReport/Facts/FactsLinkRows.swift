import BTWire
import BTTrack
import BTEnergy
import BTRules

/// `btlens export --format jsonl`'s rows of the links judged before the capture ended (`LinkRetirement`): a
/// link's `connections` and `att_series` rows, its findings (`LinkJudgement`) and its energy (`EnergyLinkRows`)
/// are made when it is judged, before it is slimmed, so memory holds what will be written instead of the
/// links' histories. What a row needs from the rest of the capture is added at its end: the quality reports
/// about the link, and the peer's Device Information values over all its links (`FactsPeerInformation`), for
/// which a judged link that lets go of its use of attributes leaves its last values with its peer.
public final class FactsLinkRows: @unchecked Sendable {
    /// A link's rows as far as the link alone tells them.
    struct Link {
        /// The `connections` row's columns up to `dropped_events` (its timeline object, without quality reports).
        var head: String
        /// Its columns from `air` to `discovery_s`.
        var tail: String
        /// Its `att_series` rows.
        var series: [String]

        /// The whole `connections` row: as one serialisation of the flattened object would write it.
        func row(qualityReports: Int, peer: FactsPeerInformation) -> String {
            var out = "{" + head
            if qualityReports > 0 { out += "," + FactsRows.members(.object([("quality_reports_count", .int(qualityReports))])) }
            out += "," + tail + "," + FactsRows.members(.object(peer.columns)) + "}"
            return out
        }
    }

    let facts: FactsCapture
    /// The per-link rules' findings on judged links, for `Auditor.audit(_:file:judged:)`.
    public let judgement: LinkJudgement
    /// Their energy, for `EnergyReport(model:energy:rows:)`.
    public let energy: EnergyLinkRows
    /// By link id; written on the link thread while the capture is read, read once it is finished.
    var links: [Int: Link] = [:]
    /// Per peer address, the last values of judged links that the capture's end no longer sees.
    var peerValues: [BDAddr: FactsPeerInformation.JudgedValues] = [:]

    public init(_ facts: FactsCapture, auditor: Auditor) {
        self.facts = facts
        judgement = auditor.linkJudgement()
        energy = EnergyLinkRows(energy: auditor.energy)
    }

    /// Judges one link (rules, energy, rows) before it is slimmed; `kept`: it stays in the model.
    public func judge(_ c: Connection, kept: Bool) {
        judgement.judge(c, kept: kept)
        energy.price(c, kept: kept)
        guard kept else { return }
        // A link judged early has ended (`LinkRetirement`): its duration is its own.
        links[c.id] = facts.link(c, captureEnd: c.end?.timestamp)
        // A slimmed link without a database keeps neither its use of attributes nor what made it one of its
        // peer's GATT links (`GATTReport.peers`): its last values stay with the peer.
        if c.gatt.isEmpty, GATTReport.showsGATT(c), let address = c.peerAddress,
           c.usage.contains(where: { $0.value.lastValue != nil }) {
            peerValues[address, default: FactsPeerInformation.JudgedValues()].add(c)
        }
    }

    /// The tracker's side.
    public func retirement(window: Int = LinkRetirement.defaultWindow) -> LinkRetirement {
        LinkRetirement(window: window) { [self] c, kept in judge(c, kept: kept) }
    }
}
