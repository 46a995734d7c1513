import BTCapture
import BTRules

extension PerfettoTraceWriter {
    /// A finding as an instant where it happened, on `track` (its connection's, or the scan, advertising or attempt
    /// it falls in, or the process's own findings track), with what `audit --format json` says of it.
    func finding(_ f: Finding, on track: UInt64) throws {
        var a: [Annotation] = [.string("rule", f.id), .string("name", f.rule), .string("severity", f.severity.rawValue),
                               .string("message", f.message), .string("end", TimeFormat.utc(f.end, digits: 3)),
                               .string("records", f.records.map { "#\($0.number)" }.joined(separator: " ")),
                               .string("fingerprint", f.fingerprint)]
        if let c = f.connection { a.append(.int("connection", c.id)) }
        if let owner = f.owner {
            a.append(.string("owner", owner.name))
            a.append(.string("owner_evidence", owner.evidence))
        }
        if let cost = f.cost {
            a.append(.double("cost_phone_mc", cost.phone.chargeMC))
            a.append(.double("cost_phone_low_mc", cost.phone.lowMC))
            a.append(.double("cost_phone_high_mc", cost.phone.highMC))
            a.append(.double("cost_radio_s", cost.phone.radioSeconds))
            if let p = cost.peripheral { a.append(.double("cost_peripheral_mc", p.chargeMC)) }
        }
        try instant(track: track, at: f.start.nanoseconds, name: "\(f.id) \(f.severity.rawValue): \(f.message)",
                    category: "finding", annotations: a)
    }
}
