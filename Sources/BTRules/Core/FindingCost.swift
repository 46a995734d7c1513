import BTWire
import BTCapture
import BTTrack
import BTEnergy

/// What fixing a finding would save: the rule's own counterfactual priced by the energy model, for the phone
/// and, where the capture shows enough, the peripheral.
public struct FindingCost: Sendable, Equatable {
    public var phone: RadioCost
    public var peripheral: RadioCost?
    /// The part of `phone.chargeMC` that is the host's (its processor kept awake by HCI traffic), not the
    /// radio's: duplicate-scan's saving. Reports keep it apart from radio totals.
    public var hostMC: Double
    /// The radio part was capped at what the controller's own counters measured over the finding's span
    /// (`MeasuredCap`): the figure is the phone's own accounting, not the model's.
    public var measuredCap = false

    public init(phone: RadioCost, peripheral: RadioCost? = nil, hostMC: Double = 0) {
        self.phone = phone.atLeastZero
        self.peripheral = peripheral?.atLeastZero
        self.hostMC = max(0, hostMC)
    }

    /// A host-only saving (duplicate-scan's) scaled down to at most `budget` millicoulombs: what `energy` counts
    /// for the host's wake-ups over the whole capture, less what earlier findings already claimed. A saving is
    /// never more than the cost of what it covers.
    public func hostCapped(at budget: Double) -> FindingCost {
        guard hostMC > budget, hostMC > 0 else { return self }
        let scale = max(0, budget) / hostMC
        var c = self
        c.phone = RadioCost(radioSeconds: phone.radioSeconds, chargeMC: phone.chargeMC * scale, lowMC: phone.lowMC * scale,
                            highMC: phone.highMC * scale)
        c.hostMC = hostMC * scale
        return c
    }

    /// The radio part of the saving scaled down to `seconds` of radio time (the controller's own measure of the
    /// span it covers, `MeasuredCap`); the host's part is kept.
    public func radioCapped(at seconds: Double) -> FindingCost {
        guard phone.radioSeconds > seconds, phone.radioSeconds > 0 else { return self }
        let scale = max(0, seconds) / phone.radioSeconds
        let radio = phoneRadioMC
        var c = self
        c.phone = RadioCost(radioSeconds: max(0, seconds), chargeMC: hostMC + radio * scale,
                            lowMC: min(phone.lowMC, hostMC + radio * scale), highMC: hostMC + max(0, phone.highMC - hostMC) * scale)
        c.measuredCap = true
        return c
    }

    /// The phone's radio part of the saving.
    public var phoneRadioMC: Double { max(0, phone.chargeMC - hostMC) }
}

/// The counterfactuals rules price (docs/USAGE.md, "What findings cost", lists them with their formulas).
public enum RuleCost {
    /// Scanning at `s`'s duty cycle for `seconds` more than needed (scan-after-connect, reconnect-by-scan).
    public static func scanning(_ s: ScanSession, seconds: Double, _ context: RuleContext) -> FindingCost {
        FindingCost(phone: context.energy.scanListening(s, seconds: seconds))
    }

    /// A link kept `seconds` with nothing to send, against disconnecting (lingering-connection, att-timeout).
    public static func idleLink(_ c: Connection, seconds: Double, _ context: RuleContext) -> FindingCost {
        let cost = context.energy.idleLink(seconds: seconds, parameters: c.parameters, phoneIsCentral: c.role != .peripheral)
        return FindingCost(phone: cost.phone, peripheral: c.role == .peripheral ? nil : cost.peripheral)
    }

    /// Idle events at `intervalMs` against the same time at `relaxedMs` (idle-fast-interval).
    public static func relaxedInterval(_ c: Connection, seconds: Double, intervalMs: Double, relaxedMs: Double,
                                       _ context: RuleContext) -> FindingCost {
        func parameters(_ ms: Double) -> ConnectionParameters {
            ConnectionParameters(interval: UInt16(clamping: Int((ms / 1.25).rounded())), latency: c.parameters?.latency ?? 0,
                                 supervisionTimeout: c.parameters?.supervisionTimeout ?? 0)
        }
        let central = c.role != .peripheral
        let fast = context.energy.idleLink(seconds: seconds, parameters: parameters(intervalMs), phoneIsCentral: central)
        let relaxed = context.energy.idleLink(seconds: seconds, parameters: parameters(max(intervalMs, relaxedMs)), phoneIsCentral: central)
        return FindingCost(phone: fast.phone - relaxed.phone, peripheral: central ? fast.peripheral - relaxed.peripheral : nil)
    }

    /// Typical request and response sizes of discovery and reads, LL payload bytes with the L2CAP header: a
    /// Read By Group Type / Read By Type / Find Information request is 7 bytes of ATT, its response fills a
    /// default-MTU PDU (23).
    public static let requestBytes = 4 + 7
    public static let responseBytes = 4 + 23

    /// `n` request/response transactions that need not have happened (discovery, failed requests).
    public static func transactions(_ n: Int, on c: Connection?, _ context: RuleContext) -> FindingCost {
        let t = context.energy.transactions(max(0, n), requestBytes: requestBytes, responseBytes: responseBytes,
                                            encrypted: c?.encrypted ?? false)
        return FindingCost(phone: t.phone, peripheral: c?.role == .peripheral ? nil : t.peripheral)
    }

    /// Host wake-ups: the host stays awake `hold` seconds after each delivered packet (ENERGY.md §2.4, §3.2),
    /// so `reports` spread over `seconds` keep it awake min(seconds, reports × hold).
    static func awake(reports: Int, seconds: Double, hold: Double) -> Double { min(seconds, Double(reports) * hold) }

    /// What the reports beyond the first per device cost the host (duplicate-scan): the awake time of all the
    /// reports (spread over the scan) against that of one per device — which come within the devices' first
    /// advertising intervals, so at most two holds — at the profile's awake current. Duplicate filtering
    /// changes no radio time, so `radio_s` is 0; the range is the hold time's, 0.1–3 s.
    public static func redundantReports(_ r: AppScan.Received, seconds: Double, _ context: RuleContext) -> FindingCost {
        let p = context.energy.profile.phone
        let unique = min(r.reports - r.redundant, 2)
        func charge(_ hold: Double) -> Double {
            p.awakeMilliamps * (awake(reports: r.reports, seconds: seconds, hold: hold) - awake(reports: unique, seconds: seconds, hold: hold))
        }
        return FindingCost(phone: RadioCost(radioSeconds: 0, chargeMC: charge(p.holdSeconds),
                                            lowMC: min(charge(0.1), charge(3)), highMC: max(charge(0.1), charge(3))),
                           hostMC: charge(p.holdSeconds))
    }

    /// Own advertising kept `seconds` longer than needed (advertising-after-connect).
    public static func advertising(_ a: AdvertisingSession, seconds: Double, _ context: RuleContext) -> FindingCost {
        FindingCost(phone: context.energy.advertisingCost(a, seconds: seconds))
    }

    /// Listening to initiate connections for `seconds` (the initiator scans continuously until it connects):
    /// connections that one long link would have spared, failed attempts.
    public static func initiating(seconds: Double, _ context: RuleContext) -> FindingCost {
        let p = context.energy.profile.phone
        return FindingCost(phone: RadioCost(radioSeconds: seconds, chargeMC: p.rxMilliamps * seconds,
                                            lowMC: p.rxMilliamps * seconds * (1 - p.coexistenceShare), highMC: p.rxMilliamps * seconds))
    }

    /// Polling with `reads` Read Requests against notifications: at least the requests go (the value might
    /// change before every read), at most the whole reads (it might never change). `responseBytes` is the mean
    /// value size returned.
    public static func polling(reads: Int, valueBytes: Int, on c: Connection, _ context: RuleContext) -> FindingCost {
        let request = context.energy.transactions(reads, requestBytes: 4 + 3, responseBytes: 0, encrypted: c.encrypted)
        let whole = context.energy.transactions(reads, requestBytes: 4 + 3, responseBytes: 4 + 1 + valueBytes, encrypted: c.encrypted)
        func range(_ low: RadioCost, _ high: RadioCost) -> RadioCost {
            RadioCost(radioSeconds: low.radioSeconds, chargeMC: low.chargeMC, lowMC: low.lowMC, highMC: high.highMC)
        }
        return FindingCost(phone: range(request.phone, whole.phone),
                           peripheral: c.role == .peripheral ? nil : range(request.peripheral, whole.peripheral))
    }
}

extension Finding {
    /// The finding with what fixing it would save.
    public func costing(_ cost: FindingCost?) -> Finding {
        var f = self
        f.cost = cost
        return f
    }
}
