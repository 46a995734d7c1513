import BTCapture
import BTTrack
import BTEnergy

/// The energy model's charge over one controller's activities, as the Perfetto export's counters draw it: the
/// phone's (scans, advertising, links) and the peripherals' (links the phone is central of). Links drawn as they
/// are judged add theirs then (`LinkTraceStream`); the rest is added at the capture's end.
struct RadioCharge {
    var phone: StepCounter
    var peripheral: StepCounter

    /// `spillDirectory`: where the counters set their changes aside (`StepCounter`); nil keeps them in memory.
    init(spillDirectory: String? = nil) {
        phone = StepCounter(spillDirectory: spillDirectory)
        peripheral = StepCounter(spillDirectory: spillDirectory)
    }

    mutating func add(phone start: Timestamp, _ end: Timestamp, _ mC: Double) {
        phone.add(start: start.nanoseconds, end: end.nanoseconds, total: mC)
    }

    /// A link's phases, when the model prices it (LE, BR/EDR).
    mutating func add(_ l: EnergyReport.Link) {
        guard l.modelled else { return }
        for p in l.phases {
            add(phone: p.start, p.end, p.phone.chargeMC)
            if let q = p.peripheral, l.connection.role != .peripheral {
                peripheral.add(start: p.start.nanoseconds, end: p.end.nanoseconds, total: q.chargeMC)
            }
        }
    }
}
