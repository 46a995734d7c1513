/// Why the model's radio time for an interval is far from the controller's own counters: the likely reason, read
/// from what the model priced and what the counters show, so that a reader knows which figure to trust.
public enum MeasuredGap: String, Sendable, CaseIterable {
    /// The counters cannot be right (a read repeating the previous one's tx and rx, or more radio time than the
    /// interval: seen on some controllers' firmware): not compared, and left out of the totals and caps.
    case countersInconsistent = "counters_inconsistent"
    /// A BR/EDR link was up whose radio time the capture does not let the model price: joined midway (its mode
    /// unknown) or its ACL packets cut short (their size unknown).
    case brEdrNotModelled = "br_edr_not_modelled"
    /// A scan ran with parameters set before the capture: the model guessed its duty cycle.
    case scanParametersBeforeCapture = "scan_parameters_before_capture"
    /// The controller counted far less listening than the scans and page scan it was given: it filtered or
    /// offloaded them, or (seen on a 2016 phone and a Pixel 7 Pro) its rx counter holds received packets only.
    case listeningNotCounted = "listening_not_counted"
    /// The controller transmitted far more than the capture shows: advertising or activity it runs by itself
    /// (a vendor's offloaded beacons), or per-event radio time that no profile of this chip family gives.
    case transmitNotShown = "transmit_not_shown"
    /// The controller listened more than the capture shows: scans or settings made before it, or by the
    /// controller itself.
    case listeningNotShown = "listening_not_shown"
    /// Far in either direction with none of the above: no profile for this controller's family.
    case noProfile = "no_profile"

    /// Within this share of the counters the model agrees with them: no reason needed.
    public static let agreement = 0.25
    /// The controller counts less than this share of the listening the model gives scans and the page scan.
    static let uncountedListening = 0.25
    /// Measured tx beyond the model's by this factor (and by at least `notableSeconds`): tx not shown.
    static let excessFactor = 2.0
    static let notableShare = 0.002

    public var explanation: String {
        switch self {
        case .countersInconsistent: "the counters cannot be right (stale, or more radio time than the interval): not compared"
        case .brEdrNotModelled: "a BR/EDR link the capture joined midway or cut short: its radio time could not be priced"
        case .scanParametersBeforeCapture: "scan parameters set before the capture: the model guessed the duty cycle"
        case .listeningNotCounted: "the controller counted little of the listening (scan, page scan) it was given: filtered or offloaded, or it counts received packets only"
        case .transmitNotShown: "the controller transmitted more than the capture shows (advertising it runs by itself, or per-event radio time no profile gives)"
        case .listeningNotShown: "the controller listened more than the capture shows (scans or settings from before the capture)"
        case .noProfile: "no profile for this controller family"
        }
    }

    static func explain(_ m: EnergyReport.Measured) -> MeasuredGap? {
        guard let error = m.error, abs(error) > agreement else { return nil }
        if !m.countersConsistent { return .countersInconsistent }
        if m.brEdrActive && m.brEdrUnpriced { return .brEdrNotModelled }
        if m.scanParametersUnknown { return .scanParametersBeforeCapture }
        let seconds = max(m.seconds, 1e-9)
        let listening = m.shares.scanRx + m.shares.classicRx
        if error > 0, listening > 0, m.rxSeconds < uncountedListening * listening {
            return .listeningNotCounted
        }
        if error < 0 {
            if m.txSeconds > excessFactor * m.modelTxSeconds && (m.txSeconds - m.modelTxSeconds) / seconds > notableShare {
                return .transmitNotShown
            }
            if (m.rxSeconds - m.modelRxSeconds) / seconds > notableShare { return .listeningNotShown }
        }
        return .noProfile
    }
}
