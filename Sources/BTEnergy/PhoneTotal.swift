import BTTrack

/// The capture's phone total as the reports lead with it: the model's, except over the intervals the controller's
/// own counters (Android `0xFD59`, what BatteryStats and Battery Historian read) cover, where the counters replace
/// it. Within an interval the counted radio time goes to the totals' activities (scans, links, advertising) by
/// their share of the model's time there, the rest to the OS's BR/EDR page scan, paging and inquiry, which the
/// totals leave out; counted time the model has no activity for is left out too, and said. Counters that cannot
/// be right (`EnergyReport.Measured.consistent`) measure nothing: the model stands there.
public struct PhoneTotal: Sendable {
    /// The counters' part.
    public struct Measured: Sendable, Equatable {
        public var intervals: Int
        /// Seconds the intervals cover.
        public var seconds: Double
        /// The counted radio time given to the totals' activities, and its charge at the profile's currents.
        public var radioSeconds: Double
        public var chargeMC: Double
        /// The model's own time and charge of the same activities over the same intervals (what was replaced).
        public var modelRadioSeconds: Double
        public var modelChargeMC: Double
        /// Counted radio time given to the OS's BR/EDR background (page and inquiry scan, paging, inquiry).
        public var backgroundSeconds: Double
        /// Counted radio time in intervals where the model has nothing running: not in the total.
        public var unexplainedSeconds: Double
    }

    /// The model's own total.
    public var model: RadioCost
    /// nil when the capture holds no consistent pair of counter reads.
    public var measured: Measured?

    /// What the reports lead with: the model's total with the counted intervals' part replaced by the counters'.
    /// The range is the model's outside the counted intervals (a count has none).
    public var cost: RadioCost {
        guard let m = measured else { return model }
        let charge = max(0, model.chargeMC - m.modelChargeMC + m.chargeMC)
        // The model's charge outside the counted intervals, and its range scaled to it.
        let outside = max(0, model.chargeMC - m.modelChargeMC)
        let k = model.chargeMC > 0 ? outside / model.chargeMC : 0
        return RadioCost(radioSeconds: max(0, model.radioSeconds - m.modelRadioSeconds + m.radioSeconds), chargeMC: charge,
                         lowMC: model.lowMC * k + m.chargeMC, highMC: model.highMC * k + m.chargeMC)
    }

    /// The model's total alone (no counters).
    public init(model: RadioCost) {
        self.model = model
        measured = nil
    }

    /// `model` with the counters of `reports` put in over the intervals they cover, the model's activities read
    /// from `bins`.
    public init(model: RadioCost, reports: [ControllerActivityReport], bins: ActivityBins, profile: PhoneProfile) {
        self.model = model
        var m = Measured(intervals: 0, seconds: 0, radioSeconds: 0, chargeMC: 0, modelRadioSeconds: 0, modelChargeMC: 0,
                         backgroundSeconds: 0, unexplainedSeconds: 0)
        for interval in CountedInterval.of(reports) {
            let seconds = interval.seconds, tx = interval.txSeconds, rx = interval.rxSeconds
            let inside = bins.amount(from: interval.start, to: interval.end)
            let modelled = inside.radioSeconds + inside.backgroundRadioSeconds
            m.intervals += 1
            m.seconds += seconds
            m.modelRadioSeconds += inside.radioSeconds
            m.modelChargeMC += inside.chargeMC
            guard modelled > 0 else {
                m.unexplainedSeconds += tx + rx
                continue
            }
            let share = inside.radioSeconds / modelled
            m.radioSeconds += (tx + rx) * share
            m.chargeMC += (profile.txMilliamps * tx + profile.rxMilliamps * rx) * share
            m.backgroundSeconds += (tx + rx) * (1 - share)
        }
        measured = m.intervals > 0 ? m : nil
    }
}
