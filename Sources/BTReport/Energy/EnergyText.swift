import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// `btlens energy` as text: per scan session, connection (and its phases) and advertising set, the duration,
/// radio-on time, charge (mC and mAh), share of the capture's total and the rate per hour; then the totals and
/// the controller's own counters beside the model's prediction.
public enum EnergyText {
    public enum Side: String, Sendable, CaseIterable { case phone, peripheral, both }

    static func mc(_ c: RadioCost) -> String {
        "\(DecimalText.fixed(c.chargeMC, fractionDigits: 2)) mC (\(DecimalText.fixed(c.lowMC, fractionDigits: 2))–\(DecimalText.fixed(c.highMC, fractionDigits: 2)))"
    }

    static func mAh(_ c: RadioCost) -> String {
        let v = c.chargeMAh
        return (v >= 0.1 ? DecimalText.fixed(v, fractionDigits: 2) : DecimalText.fixed(v, fractionDigits: 4)) + " mAh"
    }

    static func seconds(_ s: Double) -> String {
        s >= 10 ? "\(Int(s.rounded())) s" : s >= 0.1 ? DecimalText.fixed(s, fractionDigits: 2) + " s"
            : DecimalText.fixed(s * 1000, fractionDigits: 2) + " ms"
    }

    /// "12.3 mC (11.0–14.1) = 0.0034 mAh, 4.2 s radio, 18 % of the total, 3.1 mAh/h".
    static func line(_ c: RadioCost, duration: Double, total: RadioCost) -> String {
        var parts = ["\(mc(c)) = \(mAh(c))", "radio \(seconds(c.radioSeconds))"]
        if total.chargeMC > 0 { parts.append("\(Int((c.chargeMC / total.chargeMC * 100).rounded())) % of the total") }
        if duration > 0 { parts.append("\(DecimalText.fixed(c.chargeMAh / duration * 3600, fractionDigits: 3)) mAh/h while on") }
        return parts.joined(separator: ", ")
    }

    /// - Parameter full: every scan and advertising session on its own (otherwise repeats fold into one entry).
    public static func render(file: String, report r: EnergyReport, side: Side = .phone, full: Bool = false) -> String {
        var lines: [String] = []
        write(file: file, report: r, side: side, full: full) { lines.append($0) }
        return lines.joined(separator: "\n")
    }

    /// The report line by line (each without its newline) as it is made: `btlens energy` prints each at once, so
    /// a report of many links is never held whole (on 31,000 links it is 12 MB of text).
    public static func write(file: String, report r: EnergyReport, side: Side = .phone, full: Bool = false,
                             line out: (String) -> Void) {
        out(file)
        out("  profile: phone \(r.profile.phone.name); peripheral \(r.profile.peripheral.name)")
        if let v = r.controllerVersion { out("  controller: \(v.description) (Read Local Version Information)") }
        if r.phoneProfileGuessed, r.platformNotProfiled == nil {
            let which = r.capturePhoneName.map { "names the phone \"\($0)\"" } ?? "does not say which phone it comes from"
            out("  note: the capture \(which): the default profile's currents are a guess for it (give --profile with its power_profile.xml values)")
        }
        if let platform = r.platformNotProfiled {
            out("  note: the capture comes from \(platform), priced with the default Android phone profile: give --profile with its radio currents for its own figures")
        }
        let phone = side != .peripheral, peripheral = side != .phone
        let total = r.phoneTotal
        let capture = r.captureSeconds
        if phone {
            // Repeats (short scans, advertising sessions of one set with the same parameters) as one entry each.
            for group in full ? .alone(r.scans.count) : RepeatedEpisodes.scans(r.scans) {
                let s = r.scans[group[0]]
                let duty = s.session.parametersKnown ? "duty \(Int((s.session.dutyCycle * 100).rounded())) %" : "duty unknown"
                // Read one at a time: a group of tens of thousands of short scans is not copied.
                let sum = EpisodeSum(group.lazy.map { r.scans[$0] }, start: \.start, end: \.end, phone: \.phone)
                let ns = Int64(saturating: sum.rhythm.totalNanoseconds)
                let what = group.count > 1 ? " ×\(group.count) short scans" + sum.rhythm.text : ", \(TimeFormat.human(.nanoseconds(ns)))"
                let cost = sum.phone
                out("  Scan hci\(s.session.controller) \(s.session.isActive ? "active" : "passive") \(duty)\(what)")
                out("    phone: " + line(cost, duration: Double(ns) / 1e9, total: total))
            }
            for group in full ? .alone(r.advertising.count) : RepeatedEpisodes.advertising(r.advertising.lazy.map(\.session)) {
                let a = r.advertising[group[0]]
                let sum = EpisodeSum(group.lazy.map { r.advertising[$0] }, start: \.start, end: \.end, phone: \.phone)
                let ns = Int64(saturating: sum.rhythm.totalNanoseconds)
                let what = group.count > 1 ? " ×\(group.count) sessions" + sum.rhythm.text : ", \(TimeFormat.human(.nanoseconds(ns)))"
                let cost = sum.phone
                out("  Advertising hci\(a.session.controller) set \(a.session.setHandle)\(what)")
                out("    phone: " + line(cost, duration: Double(ns) / 1e9, total: total))
            }
        }
        let peripheralTotal = peripheral ? r.peripheralTotal : nil
        for l in r.links {
            let d = Double(l.end.nanoseconds - l.start.nanoseconds) / 1e9
            let c = l.connection
            out("  Connection #\(c.id) \(c.linkName)\(c.peerAddress.map { " to \($0)" } ?? "") \(c.transport.rawValue), \(TimeFormat.human(.nanoseconds(l.end.nanoseconds - l.start.nanoseconds)))\(l.modelled ? "" : " (not modelled)")")
            guard l.modelled else { continue }
            if phone { out("    phone: " + line(l.phone, duration: d, total: total)) }
            if let heard = l.heard {
                out("    heard on the air: packets \(seconds(heard.total)) (central \(seconds(heard.txSeconds)), peripheral "
                    + "\(seconds(heard.rxSeconds))); the model's radio time, listening between packets included: \(seconds(l.radio.total))")
            }
            if peripheral, let p = l.peripheral {
                out("    peripheral: " + line(p, duration: d, total: peripheralTotal ?? p))
            }
            if l.isClassic && l.phases.count > 1 {
                // A BR/EDR link changes mode every few seconds: its time and cost per mode, not per phase.
                for mode in l.modes {
                    out("      \(mode.name), \(TimeFormat.human(.nanoseconds(mode.nanoseconds))): phone \(mc(mode.phone))")
                }
            } else if l.phases.count > 1 {
                for p in l.phases {
                    var sides: [String] = []
                    if phone { sides.append("phone " + mc(p.phone)) }
                    if peripheral, let q = p.peripheral { sides.append("peripheral " + mc(q)) }
                    // The phase a heavy-retransmission report falls in: the cost the model misses is there.
                    let heavy = l.qualityReports.contains { $0.showsHeavyRetransmissions && $0.at.timestamp >= p.start && $0.at.timestamp <= p.end }
                    out("      \(p.name), \(TimeFormat.human(.nanoseconds(p.end.nanoseconds - p.start.nanoseconds))): "
                        + sides.joined(separator: "; ") + (heavy ? " (heavy retransmissions reported)" : ""))
                }
            }
            if let heavy = l.heavyRetransmissions { out("    " + heavyRetransmissions(heavy)) }
        }
        out("  Total over \(TimeFormat.human(.nanoseconds(Int64(saturating: capture * 1e9)))):")
        if phone {
            let lead = r.accountedTotal.cost
            out("    phone: \(mc(lead)) = \(mAh(lead)), radio \(seconds(lead.radioSeconds))"
                + (capture > 0 ? ", \(DecimalText.fixed(lead.chargeMAh / capture * 3600, fractionDigits: 3)) mAh per hour of capture" : "")
                + (r.accountedTotal.measured.map { ", " + countedPart($0, capture: capture) } ?? ""))
            if let m = r.accountedTotal.measured {
                out("    the model alone: \(mc(total)) = \(mAh(total)), radio \(seconds(total.radioSeconds)); over the counted intervals it gives these activities \(seconds(m.modelRadioSeconds)) of radio time, the counters \(seconds(m.radioSeconds))"
                    + (m.backgroundSeconds > 0 ? " (and \(seconds(m.backgroundSeconds)) to the BR/EDR page scan, paging and inquiry, not in the total)" : "")
                    + (m.unexplainedSeconds > 0 ? "; \(seconds(m.unexplainedSeconds)) counted while the model has nothing running, not in the total" : ""))
            }
        }
        if peripheral, let p = r.peripheralTotal { out("    peripherals: \(mc(p)) = \(mAh(p)), radio \(seconds(p.radioSeconds))") }
        out("    host wake-ups: \(r.hostWakeups) HCI events and ACL packets delivered to the host, keeping it awake about \(mc(r.host)) = \(mAh(r.host)) at \(DecimalText.fixed(r.profile.phone.awakeMilliamps, fractionDigits: 0)) mA (each holding it 1 s; the range bounds holds of 0.1–3 s; not in the radio totals)")
        if phone, !r.classicScans.isEmpty { out("    " + classicScans(r)) }
        if phone, !r.classicProcedures.isEmpty { out("    " + classicProcedures(r)) }
        if !r.measured.isEmpty {
            out("  Controller activity counters (Android 0xFD59) against the model:")
            for m in r.measured {
                let error = m.error.map { " (model \($0 >= 0 ? "+" : "")\(Int(($0 * 100).rounded())) %)" } ?? ""
                // BR/EDR and unknown parameters are said whether or not the model is far; the other reasons when it is.
                let family = r.controllerVersion.map { " (\($0.manufacturerName), LMP subversion \($0.lmpSubversion))" } ?? ""
                let gap = m.gap.map { [.brEdrNotModelled, .scanParametersBeforeCapture].contains($0) ? "" : ": " + $0.explanation + ($0 == .noProfile ? family : "") } ?? ""
                out("    \(TimeFormat.utc(m.start, digits: 0).dropFirst(11)) +\(seconds(m.seconds)): measured tx \(seconds(m.txSeconds)) rx \(seconds(m.rxSeconds)), model tx \(seconds(m.modelTxSeconds)) rx \(seconds(m.modelRxSeconds))\(error)\(m.brEdrActive ? ", BR/EDR active" + (m.brEdrUnpriced ? " (not all of it modelled)" : "") : "")\(m.scanParametersUnknown ? ", scan parameters unknown (set before the capture: the model guessed the duty cycle)" : "")\(gap)")
            }
            if let t = r.measuredTotal { measuredTotal(t, out: out) }
        }
        if !r.monitored.isEmpty {
            out("  Bluetooth Quality Report energy monitor (BQR v6) against the model:")
            for m in r.monitored {
                let error = m.error.map { " (model \($0 >= 0 ? "+" : "")\(Int(($0 * 100).rounded())) %)" } ?? ""
                let e = m.monitor
                let brEdr = m.brEdrActive
                    ? ", BR/EDR tx \(seconds(Double(e.brEdrTxMilliseconds) / 1000)) rx \(seconds(Double(e.brEdrRxMilliseconds) / 1000)) (not modelled)" : ""
                out("    \(TimeFormat.utc(m.start, digits: 0).dropFirst(11)) +\(seconds(m.seconds)): measured LE tx \(seconds(m.leTxSeconds)) rx \(seconds(m.leRxSeconds)), average \(e.averageCurrentMilliamps) mA, active \(seconds(Double(e.activeMilliseconds) / 1000)), model tx \(seconds(m.modelTxSeconds)) rx \(seconds(m.modelRxSeconds))\(error)\(brEdr)")
            }
        }
    }

    /// "BR/EDR paging and inquiry, not in the totals: …": connecting and discovering, summed by kind.
    static func classicProcedures(_ r: EnergyReport) -> String {
        let kinds = [EnergyReport.ClassicProcedure.Kind.paging, .inquiry].compactMap { kind -> String? in
            let list = r.classicProcedures.filter { $0.kind == kind }
            guard !list.isEmpty else { return nil }
            let ns = list.reduce(Int64(0)) { $0 + ($1.end.nanoseconds - $1.start.nanoseconds) }
            return "\(kind.rawValue) ×\(list.count), \(TimeFormat.human(.nanoseconds(ns)))"
        }
        let cost = r.classicProcedures.reduce(RadioCost.zero) { $0 + $1.phone }
        return "BR/EDR \(kinds.joined(separator: ", ")), not in the totals (ID-packet trains, listening half the time): "
            + "\(mc(cost)) = \(mAh(cost)), radio \(seconds(cost.radioSeconds))"
    }

    /// "OS background, not in the totals: BR/EDR page scan …": the phone's standing listening, summed.
    static func classicScans(_ r: EnergyReport) -> String {
        let cost = r.classicScans.reduce(RadioCost.zero) { $0 + $1.phone }
        let ns = r.classicScans.reduce(Int64(0)) { $0 + ($1.end.nanoseconds - $1.start.nanoseconds) }
        let duty = r.classicScans.map { ($0.pageScan?.dutyCycle ?? 0) + ($0.inquiryScan?.dutyCycle ?? 0) }.max() ?? 0
        let inquiry = r.classicScans.contains { $0.inquiryScan != nil }
        let assumed = r.classicScans.contains(where: \.assumed)
        return "OS background, not in the totals: BR/EDR page scan\(inquiry ? " and inquiry scan" : "") (the phone connectable), "
            + "up to \(DecimalText.fixed(duty * 100, fractionDigits: 1)) % of the time for \(TimeFormat.human(.nanoseconds(ns))): "
            + "\(mc(cost)) = \(mAh(cost)), radio \(seconds(cost.radioSeconds))"
            + (assumed ? " (until the capture shows the settings, Android's own are assumed: interlaced 11.25 ms every 1.28 s)" : "")
    }

    /// "measured by the controller over 2m 36s of it (5 intervals), the model elsewhere".
    static func countedPart(_ m: PhoneTotal.Measured, capture: Double) -> String {
        let all = m.seconds >= capture * 0.999
        return "measured by the controller's counters over " + (all ? "all of it" : "\(TimeFormat.human(.nanoseconds(Int64(saturating: m.seconds * 1e9)))) of it")
            + " (\(m.intervals) interval\(m.intervals == 1 ? "" : "s"), shared among the activities by the model)" + (all ? "" : ", the model elsewhere")
    }

    /// The counters over the whole capture, apportioned by the model's shares: the phone's own figures.
    static func measuredTotal(_ t: MeasuredTotal, out: (String) -> Void) {
        let error = t.error.map { ", model \($0 >= 0 ? "+" : "")\(Int(($0 * 100).rounded())) %" } ?? ""
        let left = t.inconsistent > 0 ? "; \(t.inconsistent) left out, their counters stale or impossible" : ""
        out("    measured in all (\(t.intervals) intervals, \(TimeFormat.human(.nanoseconds(Int64(saturating: t.seconds * 1e9))))\(left)): "
            + "tx \(seconds(t.txSeconds)) rx \(seconds(t.rxSeconds)), \(DecimalText.fixed(t.phoneChargeMC, fractionDigits: 2)) mC "
            + "= \(DecimalText.fixed(t.phoneChargeMC / 3600, fractionDigits: 4)) mAh at the profile's currents; model tx "
            + "\(seconds(t.modelTxSeconds)) rx \(seconds(t.modelRxSeconds))\(error)")
        if !t.gaps.isEmpty {
            out("    where the model is more than 25 % off: " + t.gaps.map { "\($0.gap.explanation) (\($0.intervals) interval\($0.intervals == 1 ? "" : "s"))" }.joined(separator: "; "))
        }
        let shown = t.byActivity.map { "\($0.name) \(seconds($0.seconds))" }
        guard !shown.isEmpty else { return }
        out("    measured radio time apportioned by the model's shares: " + shown.joined(separator: ", "))
    }

    /// "the controller reports heavy retransmissions (BQR …): 420 retransmissions of 1200 packets sent (35 %) …".
    static func heavyRetransmissions(_ r: QualityReport) -> String {
        guard let q = r.linkQuality else { return "" }
        let share = q.retransmissionShare.map { " of \(q.txPackets ?? 0) packets sent (\(Int(($0 * 100).rounded())) %)" } ?? ""
        return "the controller reports heavy retransmissions (Bluetooth Quality Report at \(TimeFormat.utc(r.at.timestamp, digits: 0).dropFirst(11))): "
            + "\(q.retransmissions) retransmissions\(share), rssi \(q.rssi) dBm: each costs radio time the model does not count"
    }
}

/// A group of priced episodes (`RepeatedEpisodes`) added up in one pass, in order: their rhythm and cost.
struct EpisodeSum {
    var rhythm = EpisodeRhythm()
    var phone = RadioCost.zero

    init<S: Sequence, T>(_ episodes: S, start: KeyPath<T, Timestamp>, end: KeyPath<T, Timestamp>, phone: KeyPath<T, RadioCost>)
        where S.Element == T {
        for e in episodes {
            rhythm.add(start: e[keyPath: start].nanoseconds, end: e[keyPath: end].nanoseconds)
            self.phone = self.phone + e[keyPath: phone]
        }
    }
}
