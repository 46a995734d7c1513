import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// The HTML report's energy panel: the phone's radio charge per activity as bars (`EnergyReport`, what `btlens
/// energy` prints), and where the capture has them the controller's own activity counters beside the model's
/// radio time for the same intervals.
enum AuditHTMLEnergy {
    static func escape(_ s: String) -> String { MarkupEscaping.escape(s) }

    /// Bars drawn one per activity up to this many; the cheapest beyond it share one bar. Repeated sessions
    /// of one scan setting or advertising set are one activity already.
    static let barsShown = 40
    /// Controller counter intervals listed; a long capture reads them every few seconds.
    static let measuredShown = 60

    static func radioTitle(_ c: RadioCost) -> String {
        "radio \(DecimalText.fixed(c.radioSeconds, fractionDigits: 2)) s, \(DecimalText.fixed(c.chargeMC, fractionDigits: 2)) mC (\(DecimalText.fixed(c.lowMC, fractionDigits: 2))–\(DecimalText.fixed(c.highMC, fractionDigits: 2)))"
    }

    struct Activity {
        var label: String
        var kind: String
        var cost: RadioCost
        var count = 1
    }

    /// Scans by setting and advertising by set, summed; the connections, each an activity of its own, come after
    /// them in id order (`panel`).
    static func activities(_ r: EnergyReport) -> [Activity] {
        var order: [String] = []
        var byKey: [String: Activity] = [:]
        func add(_ key: String, _ a: Activity) {
            if var old = byKey[key] {
                old.cost = old.cost + a.cost
                old.count += 1
                byKey[key] = old
            } else {
                order.append(key)
                byKey[key] = a
            }
        }
        for s in r.scans {
            let duty = s.session.parametersKnown ? "duty \(Int((s.session.dutyCycle * 100).rounded())) %" : "duty unknown"
            let label = "scan hci\(s.session.controller) \(s.session.isActive ? "active" : "passive") \(duty)"
            add(label, Activity(label: label, kind: s.session.filterDuplicates ? "scan" : "scan-dup", cost: s.phone))
        }
        for a in r.advertising {
            let label = "advertising hci\(a.session.controller) set \(a.session.setHandle)"
            add(label, Activity(label: label, kind: "advertising", cost: a.phone))
        }
        return order.compactMap { byKey[$0] }
    }

    /// A connection's activity (its place among the report's links), made when it is drawn or summed.
    static func link(_ r: EnergyReport, _ position: Int) -> Activity {
        let l = r.links[position], c = l.connection
        return Activity(label: "connection #\(c.id) \(c.shortLinkName)" + (c.peerAddress.map { " \($0)" } ?? ""), kind: "link", cost: l.phone)
    }

    /// The activities to draw, costliest first: `barsShown` at most, the cheapest beyond sharing one. Every
    /// activity is sorted by its charge alone (`ShownKey`, 12 bytes each: a capture of 100,000 links), the
    /// connections' read back from the report when drawn or summed, in the order a sort of the whole activities gives.
    static func shown(_ r: EnergyReport) -> [Activity] {
        let fixed = activities(r)
        var keys: [ShownKey] = []
        keys.reserveCapacity(fixed.count + r.links.count)  // once: growing would copy them, and hold twice as many
        for i in fixed.indices { keys.append(ShownKey(charge: fixed[i].cost.chargeMC, activity: Int32(i))) }
        for position in r.links.indices {
            let l = r.links[position]
            guard l.modelled else { continue }
            keys.append(ShownKey(charge: l.phone.chargeMC, activity: Int32(-1 - position)))
        }
        keys.sort { $0.charge > $1.charge }
        func activity(_ key: ShownKey) -> Activity {
            key.activity >= 0 ? fixed[Int(key.activity)] : link(r, Int(-1 - key.activity))
        }
        guard keys.count > barsShown else { return keys.map(activity) }
        let rest = keys[(barsShown - 1)...]
        let sum = rest.reduce(RadioCost.zero) { $0 + activity($1).cost }
        return keys.prefix(barsShown - 1).map(activity) + [Activity(label: "\(rest.count) more activities", kind: "other", cost: sum, count: rest.count)]
    }

    /// An activity's charge and which it is: its place among the fixed activities (from 0), or -1 − a connection's
    /// place among the report's links. The charge is kept as two 32-bit halves, so a key takes 12 bytes, not 16.
    struct ShownKey {
        private var low: UInt32
        private var high: UInt32
        let activity: Int32

        init(charge: Double, activity: Int32) {
            low = UInt32(truncatingIfNeeded: charge.bitPattern)
            high = UInt32(truncatingIfNeeded: charge.bitPattern >> 32)
            self.activity = activity
        }

        var charge: Double { Double(bitPattern: UInt64(high) << 32 | UInt64(low)) }
    }

    static func panel(_ r: EnergyReport) -> String {
        let list = shown(r)
        let total = r.phoneTotal
        let most = max(list.map(\.cost.chargeMC).max() ?? 0, 1e-9)
        var out = "<section class=\"energy\"><h3>Energy: the phone's radio charge per activity (model, profile \(escape(r.profile.phone.name)))</h3>"
        if list.isEmpty {
            out += "<p>No scanning, advertising or LE link to price.</p>"
        } else {
            out += "<table class=\"energy-bars\">"
            for a in list {
                let share = total.chargeMC > 0 ? " · \(Int((a.cost.chargeMC / total.chargeMC * 100).rounded())) %" : ""
                out += "<tr><td class=\"label\">\(escape(a.label))\(a.count > 1 ? " <span class=\"count\">×\(a.count)</span>" : "")</td>"
                    + "<td class=\"bar\"><span class=\"energy-bar k-\(a.kind)\" style=\"width:\(DecimalText.fixed(max(0.2, a.cost.chargeMC / most * 100), fractionDigits: 1))%\" title=\"\(escape(radioTitle(a.cost)))\"></span></td>"
                    + "<td class=\"value\">\(escape(AuditCost.mAh(a.cost.chargeMC)))\(share)</td></tr>"
            }
            out += "</table>"
        }
        let seconds = r.captureSeconds
        let lead = r.accountedTotal.cost
        out += "<p>Total \(escape(AuditCost.mAh(lead.chargeMC))) (\(escape(radioTitle(lead))))"
            + (seconds > 0 ? ", \(escape(AuditCost.mAh(lead.chargeMC / seconds * 3600))) per hour of capture" : "")
            + (r.accountedTotal.measured.map { ", " + escape(EnergyText.countedPart($0, capture: seconds)) + "; the model alone \(escape(AuditCost.mAh(total.chargeMC)))" } ?? "")
            + "; host wake-ups: \(r.hostWakeups), about \(escape(AuditCost.mAh(r.host.chargeMC))) of the host kept awake (not in the radio total).</p>"
        if !r.measured.isEmpty { out += measured(r.measured) }
        if let t = r.measuredTotal { out += measuredTotal(t) }
        return out + "</section>"
    }

    /// The controller's counters (Android's activity info) against the model, tx and rx time per interval.
    static func measured(_ list: [EnergyReport.Measured]) -> String {
        let shown = list.prefix(measuredShown)
        let most = max(shown.map { max($0.txSeconds + $0.rxSeconds, $0.modelTxSeconds + $0.modelRxSeconds) }.max() ?? 0, 1e-9)
        func bar(_ tx: Double, _ rx: Double, _ cls: String) -> String {
            "<span class=\"energy-bar \(cls)-tx\" style=\"width:\(DecimalText.fixed(tx / most * 100, fractionDigits: 1))%\"></span>"
                + "<span class=\"energy-bar \(cls)-rx\" style=\"width:\(DecimalText.fixed(rx / most * 100, fractionDigits: 1))%\"></span>"
        }
        var out = "<h3>Controller activity counters against the model</h3><table class=\"measured\"><thead><tr><th>interval</th>"
            + "<th>measured tx / rx</th><th>model tx / rx</th><th>model vs measured</th></tr></thead><tbody>"
        for m in shown {
            let error = m.error.map { "\($0 >= 0 ? "+" : "")\(Int(($0 * 100).rounded())) %" } ?? "—"
            out += "<tr><td>\(escape(String(TimeFormat.utc(m.start, digits: 0).dropFirst(11)))) +\(escape(EnergyText.seconds(m.seconds)))</td>"
                + "<td class=\"bar\" title=\"tx \(escape(EnergyText.seconds(m.txSeconds))), rx \(escape(EnergyText.seconds(m.rxSeconds)))\">\(bar(m.txSeconds, m.rxSeconds, "measured"))</td>"
                + "<td class=\"bar\" title=\"tx \(escape(EnergyText.seconds(m.modelTxSeconds))), rx \(escape(EnergyText.seconds(m.modelRxSeconds)))\">\(bar(m.modelTxSeconds, m.modelRxSeconds, "model"))</td>"
                + "<td>\(error)\(m.brEdrActive ? " (BR/EDR active)" : "")\(m.gap.map { [.brEdrNotModelled].contains($0) ? "" : ": " + escape($0.explanation) } ?? "")</td></tr>"
        }
        out += "</tbody></table>"
        if list.count > shown.count { out += "<p>\(list.count - shown.count) more intervals: <code>btlens energy</code> lists them all.</p>" }
        return out
    }

    /// The counters over the capture: the phone's own figures, apportioned by the model's shares.
    static func measuredTotal(_ t: MeasuredTotal) -> String {
        let error = t.error.map { ", the model \($0 >= 0 ? "+" : "")\(Int(($0 * 100).rounded())) %" } ?? ""
        let parts = t.byActivity
        return "<p>Measured by the controller over \(t.intervals) intervals (\(escape(EnergyText.seconds(t.seconds)))"
            + (t.inconsistent > 0 ? "; \(t.inconsistent) left out, their counters stale or impossible" : "") + "): "
            + "tx \(escape(EnergyText.seconds(t.txSeconds))), rx \(escape(EnergyText.seconds(t.rxSeconds))), "
            + "\(escape(AuditCost.mAh(t.phoneChargeMC))) at the profile's currents\(error)"
            + (parts.isEmpty ? "" : "; by the model's shares: " + parts.map { "\($0.name) \(escape(EnergyText.seconds($0.seconds)))" }.joined(separator: ", "))
            + ".</p>"
    }
}
