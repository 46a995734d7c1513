import BTWire
import BTCapture
import BTTrack
import BTEnergy
import BTRules

/// One capture as rows of the facts tables, built from what `timeline`, `devices`, `energy` and `audit --format
/// json` print (their JSON builders, flattened by `FactsFlattening`), so a column means what the same field means
/// there. Every row begins with `schema_version`, `sha256` and `file`: rows join across tables and captures and
/// point back to the exact bytes (records by number and byte offset).
public struct FactsCapture: Sendable {
    /// The capture as named on the command line (an archive member as `archive:member`).
    public var file: String
    /// Of the file on disk that held the capture; nil when it could not be read at all.
    public var sha256: String?
    public var size: Int64

    /// Where rows are set aside while the capture is read and until they are written (`Spill`): the export's
    /// output directory; nil holds them in memory.
    public var spillDirectory: String?
    /// Bytes of a capture's finished rows held in memory before they are set aside (`FactsRows`).
    public var memoryLimit = FactsRows.defaultMemoryLimit

    public init(file: String, sha256: String?, size: Int64, spillDirectory: String? = nil) {
        self.file = file
        self.sha256 = sha256
        self.size = size
        self.spillDirectory = spillDirectory
    }

    var key: [(String, JSONValue)] {
        [("schema_version", .int(FactsTable.schemaVersion)), ("sha256", sha256.map { .string($0) } ?? .null), ("file", .string(file))]
    }

    /// The `captures` row of a capture that could not be read; no other table has rows for it.
    public func unreadable(_ error: String, format: String? = nil) -> FactsRows {
        var rows = FactsRows()
        rows.append(.captures, .object(key + [
            ("size", .int(Int(size))), ("format", format.map { .string($0) } ?? .null), ("platform", .null),
            ("first_timestamp", .null), ("last_timestamp", .null), ("capture_s", .null), ("records", .int(0)),
            ("problems", .int(0)), ("air", .bool(false)), ("connections", .int(0)), ("failed_connections", .int(0)),
            ("scans", .int(0)), ("advertisers", .int(0)), ("findings", .int(0)), ("radio_charge_mc", .null),
            ("peripheral_charge_mc", .null), ("error", .string(error)),
        ]))
        return rows
    }

    /// Every table's rows for a capture that was read. `problems`: its malformed records. `judged`: the rows of
    /// the links judged (and slimmed) before the capture ended, made then; the other links are priced here.
    public func rows(format: String, model: CaptureModel, problems: Int, findings: [Finding], energy: EnergyModel,
                     judged: FactsLinkRows? = nil) -> FactsRows {
        rows(format: format, model: model, problems: problems, findings: StoredFindings(findings), energy: energy, judged: judged)
    }

    /// `rows(format:model:problems:findings:energy:judged:)` with the findings read back one at a time (set aside
    /// as `btlens audit` sets them aside). Scans, advertising sessions and findings are made into rows one at a time:
    /// a capture of tens of thousands of each never holds them all.
    public func rows(format: String, model: CaptureModel, problems: Int, findings: StoredFindings, energy: EnergyModel,
                     judged: FactsLinkRows? = nil) -> FactsRows {
        var rows = FactsRows(spillingTo: spillDirectory, memoryLimit: memoryLimit)
        let parts = judged?.byID() ?? .none
        func early(_ c: Connection) -> FactsLinkRows.Parts? { c.isJudged ? parts[c.id] : nil }
        let whole = Dictionary(uniqueKeysWithValues: model.connections.map { ($0.id, $0) })
        // The links not priced when judged; the others' costs are in their records (`FactsLinkRows`).
        var rest = model
        rest.connections = model.connections.filter { early($0) == nil }
        let report = EnergyReport(model: rest, energy: energy)
        var position: [Int: Int] = [:]  // by link id
        for (i, l) in report.links.enumerated() { position[l.connection.id] = i }
        // Every link in id order: the model's (whole, slim or summarised) and the judged links let go whole, of
        // which only the record in the spill is left; with its parts and record when it was judged early.
        func forEachLink(_ body: (LinkSummary, FactsLinkRows.Parts?, FactsLinkRows.Header?) -> Void) {
            let links = model.links
            var i = 0, k = 0
            while i < links.count || k < parts.count {
                let partID = k < parts.count ? Int(parts[position: k].id) : .max
                if i < links.count && links[i].id <= partID {
                    let l = links[i]
                    i += 1
                    if l.id == partID { k += 1 }
                    let p = whole[l.id].map(early) ?? parts[l.id]
                    body(l, p, p.flatMap { judged?.header($0) })
                } else if let judged {
                    let p = parts[position: k]
                    k += 1
                    let h = judged.header(p)
                    body(h.summary, p, h)
                } else {
                    k += 1
                }
            }
        }
        // The totals, summed in id order as over whole links: a pass of its own over the records, read again for
        // the rows below (keeping each link's costs would cost memory per link).
        var linksPhone = RadioCost.zero, linksPeripheral: RadioCost?
        forEachLink { l, _, h in
            // A link without a record was priced here (every link of the model's not judged early is in `rest`).
            let priced = h == nil ? position[l.id].map { report.links[$0] } : nil
            linksPhone = linksPhone + (h?.phone ?? priced?.phone ?? .zero)
            if let p = h.map(\.peripheral) ?? priced?.peripheral { linksPeripheral = (linksPeripheral ?? .zero) + p }
        }
        let phone = report.phoneTotal(links: CollectionOfOne(linksPhone))
        let peripheral = linksPeripheral
        let capture: [(String, JSONValue)] = [
            ("size", .int(Int(size))), ("format", .string(format)),
            ("platform", model.platform.platform.map { .string($0.rawValue) } ?? .null),
            ("first_timestamp", model.firstTimestamp.map { .number($0.decimalString()) } ?? .null),
            ("last_timestamp", model.lastTimestamp.map { .number($0.decimalString()) } ?? .null),
            ("capture_s", EnergyJSON.round(report.captureSeconds, 3)),
            ("records", .int(model.records)), ("problems", .int(problems)), ("air", .bool(model.isAirCapture)),
            ("connections", .int(model.linkCount)), ("failed_connections", .int(model.failedConnections.count)),
            ("scans", .int(model.scans.count)), ("advertisers", .int(model.advertisers.count)),
            ("findings", .int(findings.count)),
            ("radio_charge_mc", FactsFlattening.member(EnergyJSON.cost(phone), "charge_mc")),
            ("peripheral_charge_mc", FactsFlattening.member(EnergyJSON.cost(peripheral), "charge_mc")),
            ("error", .null),
        ]
        rows.append(.captures, .object(key + capture))

        // `energy`: the totals and scans, each link, then advertising and the host; `phases`: each link's.
        let span = Self.spanColumns
        rows.append(.energy, serialized: energyRow("total", .null, .object([
            ("start", .null), ("end", .null), ("phone", EnergyJSON.cost(phone)), ("peripheral", EnergyJSON.cost(peripheral)),
        ]), keep: span))
        // As `energy --json` gives them (`EnergyJSON`), each made as its row is.
        for (index, scan) in report.scans.enumerated() {
            rows.append(.energy, serialized: energyRow("scan", .int(index + 1), EnergyJSON.scan(scan), keep: span))
        }
        let peers = FactsPeerInformation.byPeer(model, judged: judged)
        forEachLink { l, p, h in
            let c = whole[l.id]
            // A link let go has no database (`Connection.isReadAfterJudgement`): nothing of its own to tell.
            let peer = l.peerAddress.flatMap { peers[$0] } ?? c.map { FactsPeerInformation.of([$0]) } ?? FactsPeerInformation()
            let qualityReports = QualityReport.about(l, in: model.qualityReports).count
            if let judged, let p, let h {
                let link = judged.rows(p, h)
                rows.append(.connections, serialized: FactsLinkRows.Link.row(head: link.head, tail: link.tail,
                                                                             qualityReports: qualityReports, peer: peer))
                rows.append(.attSeries, lines: link.series, count: link.seriesRows)
                rows.append(.phases, lines: link.phases, count: link.phaseRows)
                rows.append(.energy, serialized: link.energy)
            } else if let c {
                let link = self.link(c, captureEnd: model.lastTimestamp)
                rows.append(.connections, serialized: link.row(qualityReports: qualityReports, peer: peer))
                for series in link.series { rows.append(.attSeries, serialized: series) }
                let energy = linkEnergy(EnergyJSON.link(report.links[position[c.id]!]))
                for phase in energy.phases { rows.append(.phases, serialized: phase) }
                rows.append(.energy, serialized: energy.activity)
            }
        }
        for session in report.advertising {
            let advertising = EnergyJSON.advertising(session)
            rows.append(.energy, serialized: energyRow("advertising", FactsFlattening.member(advertising, "set"), advertising, keep: span))
        }
        rows.append(.energy, serialized: energyRow("host", .null, .object([
            ("start", .null), ("end", .null), ("phone", EnergyJSON.cost(report.host)), ("peripheral", .null),
        ]), keep: span))

        for (index, scan) in model.scans.enumerated() { rows.append(.scans, scanRow(scan, number: index + 1)) }
        for advertiser in model.advertisers {
            rows.append(.advertisers, FactsFlattening.row(key, DevicesJSON.advertiser(advertiser, digits: 6),
                                                          nullObjects: ["rssi": ["min", "median", "max", "samples"],
                                                                        "ibeacon": ["uuid", "major", "minor", "measured_power"]]))
        }
        for i in 0..<findings.count { rows.append(.findings, Self.finding(key, findings[i])) }
        if let failure = findings.failure { rows.fail("\(failure)") }
        if let failure = judged?.failure { rows.fail(failure) }
        return rows
    }

    /// A scan's row: its object in `btlens timeline --json` flattened, whose list of the links that came up
    /// during the scan is only counted (`connections_while_scanning_count`): the list is left out of the object
    /// and its count put in its place, as a scan left on through a 10 GB capture lists 300,000 links.
    func scanRow(_ scan: ScanSession, number: Int) -> JSONValue {
        var unlisted = scan
        unlisted.connectionsWhileScanning = []
        let row = FactsFlattening.row(key + [("scan", .int(number))], ScanSessionJSON.object(unlisted))
        guard case .object(var members) = row,
              let i = members.firstIndex(where: { $0.0 == "connections_while_scanning_count" }) else { return row }
        members[i].1 = .int(scan.connectionsWhileScanningCount)
        return .object(members)
    }

    /// A link's rows as far as the link alone tells them: what a judged link's rows are made of before it is
    /// slimmed (`FactsLinkRows`), and any other link's at the capture's end.
    func link(_ c: Connection, captureEnd: Timestamp?) -> FactsLinkRows.Link {
        // Quality reports are the capture's (counted at its end): the timeline object without them.
        let timeline = TimelineReport.connectionJSON(c, captureEnd: captureEnd, qualityReports: [], seriesAndEvents: false)
        let row = FactsFlattening.row(key, timeline, dropping: ["air"], nullObjects: [
            "parameters": ["interval_ms", "latency", "supervision_timeout_ms"],
        ])
        var after: [(String, JSONValue)] = []
        after.append(("air", .bool(c.air != nil)))
        after.append(("series", .int(c.series.count)))
        after.append(("events", .int(c.events.count)))
        let discovery = FactsPeerInformation.discovery(c)
        after.append(("discovery_procedures", .int(c.discoveries.count)))
        after.append(("discovery_start", discovery.map { .number($0.start.decimalString()) } ?? .null))
        after.append(("discovery_s", discovery.map {
            .number(Timestamp(nanoseconds: $0.end.nanoseconds - $0.start.nanoseconds).decimalString())
        } ?? .null))
        var series: [String] = []
        let cited = c.recordsOfEverySeries()
        for index in c.series.indices {
            let json = TimelineReport.seriesJSON(at: index, records: cited[index], in: c)
            var seriesRow = FactsFlattening.row(key + [("connection_id", .int(c.id))], json)
            if case .object(var m) = seriesRow {
                m.append(("first_record", cited[index].first.map { .int($0.number) } ?? .null))
                m.append(("first_byte_offset", cited[index].first.map { .int(Int($0.offset)) } ?? .null))
                seriesRow = .object(m)
            }
            series.append(seriesRow.serialized(indent: nil))
        }
        return FactsLinkRows.Link(head: FactsRows.members(row), tail: FactsRows.members(.object(after)), series: series)
    }

    /// The costs of an activity for the `energy` table (from `btlens energy --json`), its `keep` members.
    func energyRow(_ kind: String, _ id: JSONValue, _ object: JSONValue, keep: [String]) -> String {
        var picked: [(String, JSONValue)] = []
        for k in keep { picked.append((k, FactsFlattening.member(object, k))) }
        return FactsFlattening.row(key + [("activity", .string(kind)), ("id", id)], .object(picked),
                                   nullObjects: Self.costs).serialized(indent: nil)
    }

    static let costs: [String: [String]] = ["phone": FactsFlattening.costColumns, "peripheral": FactsFlattening.costColumns]
    /// The members of an activity's object an `energy` row keeps.
    static let spanColumns = ["start", "end", "phone", "peripheral"]

    /// A priced link's `energy` row and its `phases` rows (each parameter period, priced), from its object in
    /// `btlens energy --json` (`EnergyJSON.link`).
    func linkEnergy(_ link: JSONValue) -> (activity: String, phases: [String]) {
        let id = FactsFlattening.member(link, "id")
        let phases = FactsFlattening.items(FactsFlattening.member(link, "phases")).enumerated().map { index, phase in
            FactsFlattening.row(key + [("connection_id", id), ("phase", .int(index + 1))], phase,
                                nullObjects: Self.costs).serialized(indent: nil)
        }
        return (energyRow("connection", id, link, keep: Self.spanColumns), phases)
    }

    /// A finding from `audit --format json`, with its first record's number and byte offset as columns and every
    /// record's in two lists, so a query joins straight back to the bytes.
    static func finding(_ key: [(String, JSONValue)], _ f: Finding) -> JSONValue {
        let row = FactsFlattening.row(key, AuditJSON.finding(f), dropping: ["file"], nullObjects: [
            "connection": ["id", "handle", "peer_address", "start"],
            "cost": ["phone_radio_s", "phone_charge_mc", "phone_low_mc", "phone_high_mc", "peripheral_radio_s",
                     "peripheral_charge_mc", "peripheral_low_mc", "peripheral_high_mc", "host_mc"],
            "cost_peripheral": FactsFlattening.costColumns,
        ])
        guard case .object(var members) = row else { return row }
        let first = f.records.first
        members.append(("record", first.map { .int($0.number) } ?? .null))
        members.append(("byte_offset", first.map { .int(Int($0.offset)) } ?? .null))
        members.append(("length", first.map { .int($0.length) } ?? .null))
        members.append(("record_numbers", .array(f.records.map { .int($0.number) })))
        members.append(("byte_offsets", .array(f.records.map { .int(Int($0.offset)) })))
        return .object(members)
    }
}
