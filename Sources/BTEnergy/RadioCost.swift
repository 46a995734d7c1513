/// Radio-on time and the charge it cost, with the range that what a capture cannot see leaves open
/// (ENERGY.md §3.6): `low`…`high` around the estimate, never a false precision.
public struct RadioCost: Sendable, Equatable {
    /// Radio-on seconds (transmitting and receiving).
    public var radioSeconds: Double
    /// Charge in millicoulombs (mA·s): the estimate and its range.
    public var chargeMC: Double
    public var lowMC: Double
    public var highMC: Double

    public init(radioSeconds: Double = 0, chargeMC: Double = 0, lowMC: Double? = nil, highMC: Double? = nil) {
        self.radioSeconds = radioSeconds
        self.chargeMC = chargeMC
        self.lowMC = lowMC ?? chargeMC
        self.highMC = highMC ?? chargeMC
    }

    public static let zero = RadioCost()

    /// Millicoulombs in a milliampere-hour.
    public static let millicoulombsPerMilliampHour = 3600.0
    public var chargeMAh: Double { chargeMC / Self.millicoulombsPerMilliampHour }

    public static func + (a: RadioCost, b: RadioCost) -> RadioCost {
        RadioCost(radioSeconds: a.radioSeconds + b.radioSeconds, chargeMC: a.chargeMC + b.chargeMC,
                  lowMC: a.lowMC + b.lowMC, highMC: a.highMC + b.highMC)
    }

    public static func += (a: inout RadioCost, b: RadioCost) { a = a + b }

    public static func - (a: RadioCost, b: RadioCost) -> RadioCost {
        RadioCost(radioSeconds: a.radioSeconds - b.radioSeconds, chargeMC: a.chargeMC - b.chargeMC,
                  lowMC: a.lowMC - b.lowMC, highMC: a.highMC - b.highMC)
    }

    /// The same cost over a `share` of its time (an activity cut to an interval).
    public func scaled(_ share: Double) -> RadioCost {
        RadioCost(radioSeconds: radioSeconds * share, chargeMC: chargeMC * share, lowMC: lowMC * share,
                  highMC: highMC * share)
    }

    /// No negative savings: a counterfactual that would cost more saves nothing.
    public var atLeastZero: RadioCost {
        RadioCost(radioSeconds: max(0, radioSeconds), chargeMC: max(0, chargeMC), lowMC: max(0, min(lowMC, highMC)),
                  highMC: max(0, max(lowMC, highMC)))
    }
}

/// Radio time split by direction, before it is priced by a profile.
public struct RadioTime: Sendable, Equatable {
    public var txSeconds: Double = 0
    public var rxSeconds: Double = 0
    public init(txSeconds: Double = 0, rxSeconds: Double = 0) {
        self.txSeconds = txSeconds
        self.rxSeconds = rxSeconds
    }
    public var total: Double { txSeconds + rxSeconds }
    public static func + (a: RadioTime, b: RadioTime) -> RadioTime {
        RadioTime(txSeconds: a.txSeconds + b.txSeconds, rxSeconds: a.rxSeconds + b.rxSeconds)
    }
}
