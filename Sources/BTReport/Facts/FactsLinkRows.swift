import BTWire
import BTTrack
import BTEnergy
import BTRules

/// `btlens export --format jsonl`'s rows of the links judged before the capture ended (`LinkRetirement`): a
/// link's `connections`, `att_series`, `phases` and `energy` rows and its findings (`LinkJudgement`) are made when
/// it is judged, before it is slimmed, and its rows are set aside (`SpilledRecords`, a temporary file in the
/// output directory) after a header with its summary and costs, only their place kept, so memory holds neither
/// the finished links' histories nor their rows. What a row needs from the rest of the capture is added at its end: the
/// quality reports about the link, and the peer's Device Information values over all its links
/// (`FactsPeerInformation`), for which a judged link that lets go of its use of attributes leaves its last values
/// with its peer.
public final class FactsLinkRows: @unchecked Sendable {
    /// A link's rows as far as the link alone tells them.
    struct Link {
        /// The `connections` row's columns up to `dropped_events` (its timeline object, without quality reports).
        var head: String
        /// Its columns from `air` to `discovery_s`.
        var tail: String
        /// Its `att_series` rows.
        var series: [String]

        func row(qualityReports: Int, peer: FactsPeerInformation) -> String {
            Self.row(head: head, tail: tail, qualityReports: qualityReports, peer: peer)
        }

        /// The whole `connections` row: as one serialisation of the flattened object would write it.
        static func row(head: String, tail: String, qualityReports: Int, peer: FactsPeerInformation) -> String {
            var out = "{" + head
            if qualityReports > 0 { out += "," + FactsRows.members(.object([("quality_reports_count", .int(qualityReports))])) }
            out += "," + tail + "," + FactsRows.members(.object(peer.columns)) + "}"
            return out
        }
    }

    /// A judged link's record in the spill, before its rows (one after the other; a part of several rows joins
    /// them with newlines): its summary, its costs for the capture's energy totals and its parts' lengths. Plain
    /// bytes, written and read back as they are.
    struct Header {
        var summary: LinkSummary
        var phone: RadioCost
        var peripheral: RadioCost?
        var head: Int32, tail: Int32, series: Int32, phases: Int32, energy: Int32
        var seriesRows: Int32, phaseRows: Int32
    }

    /// Where a judged link's record is in the spill (`records`): all that memory keeps of it (its summary is let
    /// go too unless a capture-wide rule reads it, `LinkInterest`).
    struct Parts {
        var id: Int32
        var offset: Int64
    }

    /// A judged link's rows read back from the spill.
    struct Rows {
        var head: String, tail: String
        var series: String, phases: String, energy: String
        var seriesRows: Int, phaseRows: Int
    }

    let facts: FactsCapture
    let energyModel: EnergyModel
    /// The per-link rules' findings on judged links, for `Auditor.audit(_:file:judged:)`.
    public let judgement: LinkJudgement
    /// Each judged link's record (header and rows), by id.
    let records: SpilledRecords
    var spill: Spill { records.spill }
    /// Why a spill could not be a file (it is then memory).
    var spillFailure: String?
    /// The values of judged links that the capture's end no longer sees, a line per value (peer address, link,
    /// handle, value in hex): read back at the end for the peers that then have a database, as most never do.
    let peerValues: Spill

    /// Bytes of judged links' rows held in memory: none when they are set aside in a file.
    public var heldBytes: Int64 { spill.isFile ? 0 : spill.size }
    /// Bytes of judged links' rows set aside.
    public var spilledBytes: Int64 { spill.size }

    /// `facts.spillDirectory`: where the judged links' rows are set aside (nil: memory). `findings`: where the
    /// judged links' findings are set aside as they are made (`Auditor.audit(_:file:judged:spill:finishing:)`
    /// with the same spill); nil holds them.
    public init(_ facts: FactsCapture, auditor: Auditor, findings: FindingSpill? = nil) {
        self.facts = facts
        energyModel = auditor.energy
        judgement = auditor.linkJudgement(spill: findings)
        records = SpilledRecords(directory: facts.spillDirectory)
        let values = Spill.fileOrMemory(in: facts.spillDirectory)
        peerValues = values.spill
        spillFailure = (records.spillError ?? values.error)?.cause
    }

    /// Judges one link (rules, energy, rows) before it is slimmed; `kept`: it stays in the model.
    public func judge(_ c: Connection, kept: Bool) {
        judgement.judge(c, kept: kept)
        // A link judged early has ended (`LinkRetirement`): its duration is its own.
        guard kept, let end = c.end?.timestamp else { return }
        let link = facts.link(c, captureEnd: end)
        let priced = EnergyReport.link(c, captureEnd: end, energy: energyModel)
        let energy = facts.linkEnergy(EnergyJSON.link(priced))
        let series = link.series.joined(separator: "\n"), phases = energy.phases.joined(separator: "\n")
        var blob = link.head
        blob += link.tail
        blob += series
        blob += phases
        blob += energy.activity
        let header = Header(summary: LinkSummary(c), phone: priced.phone, peripheral: priced.peripheral,
                            head: Self.length(link.head), tail: Self.length(link.tail), series: Self.length(series),
                            phases: Self.length(phases), energy: Self.length(energy.activity),
                            seriesRows: Int32(link.series.count), phaseRows: Int32(energy.phases.count))
        records.begin(id: c.id)
        spill.append(plain: header)
        spill.append(blob)
        // A slimmed link without a database keeps neither its use of attributes nor what made it one of its
        // peer's GATT links (`GATTReport.peers`): its last values stay with the peer.
        if c.gatt.isEmpty, GATTReport.showsGATT(c), let address = c.peerAddress {
            for (handle, u) in c.usage {
                guard let value = u.lastValue else { continue }
                peerValues.append("\(address.rawValue) \(c.id) \(handle) " + Hex.string(value) + "\n")
            }
        }
    }

    /// The judged links' values of `wanted` peers' attributes (by handle), the latest link's of each.
    /// `chunk`: bytes read from the spill at a time.
    func peerValues(_ wanted: [BDAddr: [UInt16]], chunk: Int = Spill.chunk) -> [BDAddr: FactsPeerInformation.JudgedValues] {
        guard !wanted.isEmpty, peerValues.size > 0 else { return [:] }
        var out: [BDAddr: FactsPeerInformation.JudgedValues] = [:]
        func take(_ line: some Collection<UInt8>) {
            let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard fields.count == 4, let raw = UInt64(String(decoding: fields[0], as: UTF8.self)),
                  let handles = wanted[BDAddr(rawValue: raw)],
                  let link = Int(String(decoding: fields[1], as: UTF8.self)),
                  let handle = UInt16(String(decoding: fields[2], as: UTF8.self)), handles.contains(handle),
                  let value = Hex.bytes(fields[3]) else { return }
            out[BDAddr(rawValue: raw), default: FactsPeerInformation.JudgedValues()].add(link: link, handle: handle, value: value)
        }
        // Line by line as the spill is copied out (a line may straddle two chunks): the values are a line per
        // judged link's attribute, too many to read whole.
        var carry: [UInt8] = []
        try? peerValues.copy(chunk: chunk) { bytes in
            var start = bytes.startIndex
            for i in bytes.indices where bytes[i] == UInt8(ascii: "\n") {
                if carry.isEmpty {
                    take(bytes[start..<i])
                } else {
                    carry.append(contentsOf: bytes[start..<i])
                    take(carry)
                    carry.removeAll(keepingCapacity: true)
                }
                start = i + 1
            }
            carry.append(contentsOf: bytes[start...])
        }
        if !carry.isEmpty { take(carry) }
        return out
    }

    static func length(_ s: String) -> Int32 { Int32(s.utf8.count) }

    /// A judged link's header, read back.
    func header(_ p: Parts) -> Header { spill.read(plain: Header.self, at: p.offset) }

    /// The rows of a judged link, read back.
    func rows(_ p: Parts, _ h: Header) -> Rows {
        let lengths = [h.head, h.tail, h.series, h.phases, h.energy].map { max(0, Int($0)) }
        let at = p.offset + Int64(MemoryLayout<Header>.stride)
        let blob = spill.read(plain: UInt8.self, count: lengths.reduce(0, +), at: at)
        var next = 0
        func take(_ n: Int) -> String {
            defer { next += n }
            return String(decoding: blob[min(next, blob.count)..<min(next + n, blob.count)], as: UTF8.self)
        }
        return Rows(head: take(lengths[0]), tail: take(lengths[1]), series: take(lengths[2]), phases: take(lengths[3]),
                    energy: take(lengths[4]), seriesRows: Int(h.seriesRows), phaseRows: Int(h.phaseRows))
    }

    /// What went wrong setting rows aside, if anything (once the capture has been read).
    var failure: String? { spillFailure ?? spill.failure ?? peerValues.failure }

    /// The judged links' parts by id, for `FactsCapture.rows` (once the capture is finished).
    func byID() -> PartsByID {
        records.sortByID()
        return PartsByID(records: records)
    }

    /// The judged links' records in id order.
    struct PartsByID {
        let records: SpilledRecords?
        static let none = PartsByID(records: nil)

        var count: Int { records?.count ?? 0 }

        /// The record at `position` in id order.
        subscript(position position: Int) -> Parts { Parts(id: records!.ids[position], offset: records!.offset(at: position)) }

        subscript(id: Int) -> Parts? { records?.index(of: id).map { self[position: $0] } }
    }

    /// The tracker's side. A judged link is let go (its summary too, unless a capture-wide rule reads it:
    /// `LinkInterest`, as in `btlens audit`) unless more of it is still read: its rows and summary are in the spill.
    public func retirement(window: Int = LinkRetirement.defaultWindow,
                           letGoBatch: Int = LinkRetirement.defaultLetGoBatch) -> LinkRetirement {
        LinkRetirement(window: window, keeping: .summary, interest: judgement.interest, letGoBatch: letGoBatch) { [self] c, kept in
            judge(c, kept: kept)
        }
    }
}
