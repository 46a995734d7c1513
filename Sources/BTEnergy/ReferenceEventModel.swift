/// Kindt, Yunge, Diemer and Chakraborty's phase model of BLE events (arXiv:1403.2919; the LGPL library bleemod),
/// with its BLE112 (CC2540) constants (ENERGY.md §1.3): the published reference that the per-event charges of
/// `PeripheralProfile` are scaled from, and that the tests reproduce figure by figure (ENERGY.md §4, checks 1–4).
/// Durations in ms, currents in mA, charges in µC.
public enum ReferenceEventModel {
    struct Phase { let ms: Double; let mA: Double; var charge: Double { ms * mA } }

    // Connection-event phases (bleemod `ble_model_params_connected.h`).
    static let head = Phase(ms: 0.578, mA: 5.924)
    static let preProcessing = Phase(ms: 0.305, mA: 7.691)
    static let preamble = Phase(ms: 0.073, mA: 12.238)
    static let transient = Phase(ms: 0.066, mA: 11.636)
    static let post = Phase(ms: 0.860, mA: 7.980)
    static let tail = Phase(ms: 0.080, mA: 4.129)
    /// Before the first reception: the central's, and the peripheral's (longer: it must catch the anchor).
    static let preRXCentral = 0.123, preRXPeripheral = 0.388, rxMilliamps = 26.505
    static let preTX = 0.053, txMilliamps = 36.445
    static let rxToTX = Phase(ms: 0.080, mA: 14.128)
    static let txToRX = Phase(ms: 0.057, mA: 15.125)
    /// A correction per TX/RX sequence, µC.
    static let correction = -1.2
    public static let sleepMilliamps = 0.0009
    public static let sleepClockPPM = 50.0
    /// ms per byte on 1M.
    static let byteMs = 0.008

    /// The phases every event has.
    static var fixedCharge: Double { [head, preProcessing, preamble, transient, post, tail].reduce(0) { $0 + $1.charge } }

    /// One connection event with one exchange of `rxBytes` and `txBytes` packets (10 bytes when empty), µC.
    /// The peripheral receives first and widens its window by 2 × SCA × the interval; the central sends first.
    public static func connectionEvent(peripheral: Bool, intervalMs: Double, rxBytes: Int = 10, txBytes: Int = 10) -> Double {
        let widening = peripheral ? 2 * sleepClockPPM * 1e-6 * intervalMs : 0
        let rx = ((peripheral ? preRXPeripheral : preRXCentral) + widening + byteMs * Double(rxBytes)) * rxMilliamps
        let tx = (preTX + byteMs * Double(txBytes)) * txMilliamps
        // One turnaround between the two packets: RX→TX on the peripheral, TX→RX on the central.
        let turnaround = peripheral ? rxToTX.charge : txToRX.charge
        return fixedCharge + rx + tx + turnaround + correction
    }

    /// Average current in µA of an event every `intervalMs`, with sleep between.
    public static func averageMicroamps(eventCharge: Double, intervalMs: Double) -> Double {
        eventCharge / intervalMs * 1000 + sleepMilliamps * 1000
    }

    /// One advertising event: three TX-only sequences of a `pduBytes` packet (ADV_IND with 31 bytes of data is 37),
    /// the event's fixed phases on both sides of the three channels.
    public static func advertisingEvent(pduBytes: Int = 37) -> Double {
        2 * fixedCharge + 3 * ((preTX + byteMs * Double(pduBytes)) * txMilliamps + correction)
    }

    // Scanning phases (bleemod `ble_model_params_scanning.h`).
    static let scanRXMilliamps = 26.399
    /// The part of each window not spent receiving (wake-up, pre- and post-processing).
    static let scanWindowOverheadMs = 1.85
    static let channelChange = Phase(ms: 1.325, mA: 8.550)

    /// Average current in mA of a continuous scan (window = interval) of `intervalMs`.
    public static func continuousScanMilliamps(intervalMs: Double) -> Double {
        (channelChange.charge + (intervalMs - scanWindowOverheadMs) * scanRXMilliamps) / intervalMs
    }
}
