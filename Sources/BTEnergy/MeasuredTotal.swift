/// The controller's own counters summed over every interval a capture holds (`EnergyReport.Measured`): the
/// phone's accounting of the time they cover, which BatteryStats and Battery Historian show, apportioned among
/// scans, links, advertising and the page scan by the model's shares of the same intervals.
public struct MeasuredTotal: Sendable {
    public var intervals: Int
    /// Intervals left out because their counters do not add up (`Measured.countersConsistent`).
    public var inconsistent: Int
    /// Seconds the intervals cover (the capture's span between the first and the last read).
    public var seconds: Double
    public var txSeconds: Double
    public var rxSeconds: Double
    public var modelTxSeconds: Double
    public var modelRxSeconds: Double
    /// The phone's charge at the profile's currents for the measured tx and rx time.
    public var phoneChargeMC: Double
    public var shares: EnergyReport.ModelShares
    /// Why the model was far in the intervals where it was (`Measured.gap`), the most frequent first, with the
    /// number of intervals each explains (ties in the order the reasons are declared).
    public var gaps: [(gap: MeasuredGap, intervals: Int)]

    /// (model − measured) / measured of tx + rx; nil when the controller measured none.
    public var error: Double? {
        let measured = txSeconds + rxSeconds
        return measured > 0 ? (modelTxSeconds + modelRxSeconds - measured) / measured : nil
    }

    /// The measured radio time of one kind of activity: the counters' total split as the model splits its own
    /// (nothing when the model priced nothing).
    public func apportioned(_ share: (EnergyReport.ModelShares) -> Double) -> Double {
        let model = shares.total
        return model > 0 ? (txSeconds + rxSeconds) * share(shares) / model : 0
    }

    /// The measured radio time per kind of activity the model priced in the intervals, in report order, those with
    /// none left out: what the text and HTML reports list.
    public var byActivity: [(name: String, seconds: Double)] {
        [("scans", apportioned { $0.scanTx + $0.scanRx }), ("links", apportioned { $0.links }),
         ("advertising", apportioned { $0.advertisingTx + $0.advertisingRx }), ("page scan", apportioned { $0.classicRx })]
            .filter { $0.1 > 0 }
    }

    init?(_ all: [EnergyReport.Measured], profile: PhoneProfile) {
        let list = all.filter(\.countersConsistent)
        guard !list.isEmpty else { return nil }
        intervals = list.count
        inconsistent = all.count - list.count
        seconds = list.reduce(0) { $0 + $1.seconds }
        txSeconds = list.reduce(0) { $0 + $1.txSeconds }
        rxSeconds = list.reduce(0) { $0 + $1.rxSeconds }
        modelTxSeconds = list.reduce(0) { $0 + $1.modelTxSeconds }
        modelRxSeconds = list.reduce(0) { $0 + $1.modelRxSeconds }
        shares = list.reduce(EnergyReport.ModelShares()) { $0 + $1.shares }
        phoneChargeMC = profile.txMilliamps * txSeconds + profile.rxMilliamps * rxSeconds
        var counts: [MeasuredGap: Int] = [:]
        for m in list { if let g = m.gap { counts[g, default: 0] += 1 } }
        gaps = MeasuredGap.allCases.enumerated().compactMap { i, g in counts[g].map { (i, g, $0) } }
            .sorted { $0.2 != $1.2 ? $0.2 > $1.2 : $0.0 < $1.0 }.map { ($0.1, $0.2) }
    }
}

extension EnergyReport {
    /// The controller's counters over the whole capture, where it holds them.
    public var measuredTotal: MeasuredTotal? { MeasuredTotal(measured, profile: profile.phone) }
}
