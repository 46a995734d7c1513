import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// `btlens energy --json`; schema in Schemas/energy.schema.json. Times in Unix seconds; a cost is
/// `{"radio_s", "charge_mc", "low_mc", "high_mc"}` (radio-on seconds, charge in millicoulombs and its range).
public enum EnergyJSON {
    /// A non-finite value (only a damaged capture could lead there) prints as 0: JSON has no infinity.
    static func round(_ v: Double, _ digits: Int = 6) -> JSONValue {
        .number(DecimalText.fixed(v.isFinite ? v : 0, fractionDigits: digits))
    }

    public static func cost(_ c: RadioCost) -> JSONValue {
        .object([("radio_s", round(c.radioSeconds)), ("charge_mc", round(c.chargeMC, 4)), ("low_mc", round(c.lowMC, 4)),
                 ("high_mc", round(c.highMC, 4))])
    }

    public static func cost(_ c: RadioCost?) -> JSONValue { c.map(cost) ?? .null }

    static func time(_ t: Timestamp) -> JSONValue { .number(t.decimalString()) }

    public static func object(file: String, report r: EnergyReport) -> JSONValue {
        .object(head(file: file, report: r) + [("scans", .array(r.scans.map(scan))), ("connections", .array(r.links.map(link))),
                                               ("advertising", .array(r.advertising.map(advertising)))] + tail(report: r))
    }

    /// The same object written piece by piece at nesting `level`, a connection at a time (`btlens energy --json`):
    /// a report of many links is never held whole.
    public static func write(file: String, report r: EnergyReport, to writer: JSONStreamWriter, level: Int = 0) {
        writer.object(level: level) { members in
            for (key, value) in head(file: file, report: r) { members.member(key, value) }
            // Scans, links and advertising sessions each made as it is written: a capture of many short scans
            // would otherwise hold a tree of every one.
            members.array("scans", r.scans, scan)
            members.array("connections", r.links, link)
            members.array("advertising", r.advertising, advertising)
            for (key, value) in tail(report: r) { members.member(key, value) }
        }
    }

    /// The members before "scans".
    static func head(file: String, report r: EnergyReport) -> [(String, JSONValue)] {
        [
            ("file", .string(file)),
            ("profile", .object([("phone", .string(r.profile.phone.name)), ("peripheral", .string(r.profile.peripheral.name)),
                                 ("phone_guessed", .bool(r.phoneProfileGuessed)),
                                 ("capture_phone_name", r.capturePhoneName.map(JSONValue.string) ?? .null),
                                 ("controller", r.controllerVersion.map(controller) ?? .null)])),
            ("total", .object([("phone", cost(r.accountedTotal.cost)), ("peripheral", cost(r.peripheralTotal)),
                               ("phone_model", cost(r.phoneTotal)),
                               ("phone_measured", r.accountedTotal.measured.map(counted) ?? .null)])),
            ("capture_s", round(r.captureSeconds, 3)),
        ]
    }

    /// A priced scan session, as in `scans`.
    static func scan(_ s: EnergyReport.Scan) -> JSONValue {
        .object([("start", time(s.start)), ("end", time(s.end)), ("controller", .int(Int(s.session.controller))),
                 ("duty_cycle", s.session.parametersShown ? round(s.session.dutyCycle, 4) : .null),
                 ("tx_s", round(s.radio.txSeconds)), ("rx_s", round(s.radio.rxSeconds)), ("phone", cost(s.phone))])
    }

    /// A priced advertising session, as in `advertising`.
    static func advertising(_ a: EnergyReport.Advertising) -> JSONValue {
        .object([("set", .int(Int(a.session.setHandle))), ("start", time(a.start)), ("end", time(a.end)),
                 ("phone", cost(a.phone))])
    }

    /// A priced link, as in `connections` (also the facts export's energy rows).
    public static func link(_ l: EnergyReport.Link) -> JSONValue {
        .object([
            ("id", .int(l.connection.id)), ("handle", .string(Hex.u16(l.connection.handle))),
            ("peer_address", l.connection.peerAddress.map { .string($0.description) } ?? .null),
            ("start", time(l.start)), ("end", time(l.end)), ("modelled", .bool(l.modelled)),
            ("phone", cost(l.phone)), ("peripheral", cost(l.peripheral)),
            ("heard", l.heard.map { .object([("tx_s", round($0.txSeconds)), ("rx_s", round($0.rxSeconds))]) } ?? .null),
            ("heavy_retransmissions", heavyRetransmissions(l)),
            ("phases", .array(l.phases.map { p in
                .object([("name", .string(p.name)), ("start", time(p.start)), ("end", time(p.end)),
                         ("phone", cost(p.phone)), ("peripheral", cost(p.peripheral))])
            })),
        ])
    }

    /// The members after "advertising".
    static func tail(report r: EnergyReport) -> [(String, JSONValue)] {
        [
            ("host_wakeups", .int(r.hostWakeups)),
            ("host", cost(r.host)),
            ("measured", .array(r.measured.map { m in
                .object([("start", time(m.start)), ("end", time(m.end)), ("tx_s", round(m.txSeconds, 3)),
                         ("rx_s", round(m.rxSeconds, 3)), ("idle_s", round(m.idleSeconds, 3)), ("energy", .int(Int(m.energy))),
                         ("model", .object([("tx_s", round(m.modelTxSeconds, 3)), ("rx_s", round(m.modelRxSeconds, 3))])),
                         ("error", m.error.map { round($0, 4) } ?? .null), ("br_edr_active", .bool(m.brEdrActive)),
                         ("scan_parameters_unknown", .bool(m.scanParametersUnknown)),
                         ("gap", m.gap.map { .string($0.rawValue) } ?? .null),
                         ("model_shares", shares(m.shares))])
            })),
            ("measured_total", r.measuredTotal.map(measuredTotal) ?? .null),
            ("classic_scans", .array(r.classicScans.map { c in
                .object([("controller", .int(Int(c.controller))), ("start", time(c.start)), ("end", time(c.end)),
                         ("page_scan_duty", c.pageScan.map { round($0.dutyCycle, 4) } ?? .null),
                         ("inquiry_scan_duty", c.inquiryScan.map { round($0.dutyCycle, 4) } ?? .null),
                         ("assumed", .bool(c.assumed)), ("rx_s", round(c.radio.rxSeconds)), ("phone", cost(c.phone))])
            })),
            ("energy_monitor", .array(r.monitored.map(monitored))),
        ]
    }

    /// The controller's chip (`ControllerVersion`).
    static func controller(_ v: ControllerVersion) -> JSONValue {
        .object([("manufacturer", .string(v.manufacturerName)), ("manufacturer_id", .int(Int(v.manufacturer))),
                 ("lmp_subversion", .int(Int(v.lmpSubversion))), ("hci_version", .int(Int(v.hciVersion))),
                 ("hci_revision", .int(Int(v.hciRevision))), ("core_version", .string(v.coreVersion))])
    }

    /// What the counters put in the total (`PhoneTotal.Measured`).
    static func counted(_ m: PhoneTotal.Measured) -> JSONValue {
        .object([("intervals", .int(m.intervals)), ("seconds", round(m.seconds, 3)), ("radio_s", round(m.radioSeconds)),
                 ("charge_mc", round(m.chargeMC, 4)), ("model_radio_s", round(m.modelRadioSeconds)),
                 ("model_charge_mc", round(m.modelChargeMC, 4)), ("background_s", round(m.backgroundSeconds)),
                 ("unexplained_s", round(m.unexplainedSeconds))])
    }

    /// The model's radio time by kind of activity (seconds).
    static func shares(_ s: EnergyReport.ModelShares) -> JSONValue {
        .object([("scans_s", round(s.scanTx + s.scanRx, 3)), ("links_s", round(s.links, 3)),
                 ("advertising_s", round(s.advertisingTx + s.advertisingRx, 3)), ("page_scan_s", round(s.classicRx, 3))])
    }

    /// The counters over the capture (`MeasuredTotal`), labelled as measured, with the model's view beside them.
    static func measuredTotal(_ t: MeasuredTotal) -> JSONValue {
        .object([("intervals", .int(t.intervals)), ("inconsistent", .int(t.inconsistent)), ("seconds", round(t.seconds, 3)), ("tx_s", round(t.txSeconds, 3)),
                 ("rx_s", round(t.rxSeconds, 3)), ("charge_mc", round(t.phoneChargeMC, 4)),
                 ("model", .object([("tx_s", round(t.modelTxSeconds, 3)), ("rx_s", round(t.modelRxSeconds, 3))])),
                 ("error", t.error.map { round($0, 4) } ?? .null),
                 ("gaps", .object(t.gaps.map { ($0.gap.rawValue, .int($0.intervals)) })),
                 ("apportioned", .object([("scans_s", round(t.apportioned { $0.scanTx + $0.scanRx }, 3)),
                                          ("links_s", round(t.apportioned { $0.links }, 3)),
                                          ("advertising_s", round(t.apportioned { $0.advertisingTx + $0.advertisingRx }, 3)),
                                          ("page_scan_s", round(t.apportioned { $0.classicRx }, 3))]))])
    }

    static func heavyRetransmissions(_ l: EnergyReport.Link) -> JSONValue {
        guard let q = l.heavyRetransmissions?.linkQuality else { return .null }
        let packets: JSONValue = q.txPackets.map { .int(Int($0)) } ?? .null
        return .object([("retransmissions", .int(Int(q.retransmissions))), ("tx_packets", packets), ("rssi", .int(Int(q.rssi)))])
    }

    /// A Bluetooth Quality Report Energy Monitor beside the model.
    static func monitored(_ m: EnergyReport.Monitored) -> JSONValue {
        let e = m.monitor
        let model: JSONValue = .object([("tx_s", round(m.modelTxSeconds, 3)), ("rx_s", round(m.modelRxSeconds, 3))])
        let error: JSONValue = m.error.map { round($0, 4) } ?? .null
        return .object([("start", time(m.start)), ("end", time(m.end)), ("le_tx_s", round(m.leTxSeconds, 3)),
                        ("le_rx_s", round(m.leRxSeconds, 3)),
                        ("br_edr_tx_s", round(Double(e.brEdrTxMilliseconds) / 1000, 3)),
                        ("br_edr_rx_s", round(Double(e.brEdrRxMilliseconds) / 1000, 3)),
                        ("active_s", round(Double(e.activeMilliseconds) / 1000, 3)),
                        ("idle_s", round(Double(e.idleMilliseconds) / 1000, 3)),
                        ("average_ma", .int(Int(e.averageCurrentMilliamps))), ("model", model), ("error", error),
                        ("br_edr_active", .bool(m.brEdrActive))])
    }
}
