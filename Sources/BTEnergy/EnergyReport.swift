import BTWire
import BTCapture
import BTDecode
import BTTrack

/// Every activity of a capture priced by `EnergyModel`: what `btlens energy` prints and what findings' costs are
/// shares of.
public struct EnergyReport: Sendable {
    public struct Scan: Sendable {
        public var session: ScanSession
        public var start: Timestamp
        public var end: Timestamp
        public var radio: RadioTime
        public var phone: RadioCost
    }

    public struct Phase: Sendable {
        /// nil when the capture never showed the link's parameters.
        public var parameters: ConnectionParameters?
        /// "interval 7.5 ms latency 0": made when asked, since audits price every phase and print none.
        public var name: String {
            parameters.map { "interval \(Format.ms($0.intervalMilliseconds)) ms latency \($0.latency)" } ?? "parameters unknown"
        }
        public var start: Timestamp
        public var end: Timestamp
        public var radio: RadioTime
        public var phone: RadioCost
        public var peripheral: RadioCost?
    }

    public struct Link: Sendable {
        public var connection: Connection
        public var start: Timestamp
        public var end: Timestamp
        public var phases: [Phase]
        /// Whether the model prices this link: LE only (BR/EDR and SCO links are counted, not priced).
        public var modelled: Bool
        public var phone: RadioCost { phases.reduce(.zero) { $0 + $1.phone } }
        public var peripheral: RadioCost? {
            guard modelled, connection.role != .peripheral else { return nil }
            return phases.reduce(.zero) { $0 + ($1.peripheral ?? .zero) }
        }
        public var radio: RadioTime { phases.reduce(RadioTime()) { $0 + $1.radio } }
    }

    public struct Advertising: Sendable {
        public var session: AdvertisingSession
        public var start: Timestamp
        public var end: Timestamp
        public var phone: RadioCost
    }

    /// The controller's own counters between two reads (`ControllerActivityReport`), and the model's tx and rx
    /// time for the same interval.
    public struct Measured: Sendable {
        public var start: Timestamp
        public var end: Timestamp
        public var txSeconds: Double
        public var rxSeconds: Double
        public var idleSeconds: Double
        public var energy: UInt32
        public var modelTxSeconds: Double
        public var modelRxSeconds: Double
        /// A BR/EDR link was up, or the controller paged for one, in the interval: the counters include classic
        /// radio time the LE model does not price.
        public var brEdrActive: Bool
        public var seconds: Double { Double(end.nanoseconds - start.nanoseconds) / 1e9 }
        /// (model − measured) / measured of tx + rx time; nil when the controller measured none.
        public var error: Double? {
            let measured = txSeconds + rxSeconds
            return measured > 0 ? (modelTxSeconds + modelRxSeconds - measured) / measured : nil
        }
    }

    public var profile: EnergyProfile
    public var scans: [Scan] = []
    public var links: [Link] = []
    public var advertising: [Advertising] = []
    public var measured: [Measured] = []
    public var hostWakeups: Int
    /// The host kept awake by them (the profile's awake current; the range is the hold's, 0.1–3 s). Never in
    /// the radio totals.
    public var host: RadioCost
    public var firstTimestamp: Timestamp?
    public var lastTimestamp: Timestamp?

    public var phoneTotal: RadioCost {
        scans.reduce(.zero) { $0 + $1.phone } + links.reduce(.zero) { $0 + $1.phone } + advertising.reduce(.zero) { $0 + $1.phone }
    }

    /// The peripherals' total, over the links whose peripheral side is priced; nil when there is none.
    public var peripheralTotal: RadioCost? {
        let priced = links.compactMap(\.peripheral)
        return priced.isEmpty ? nil : priced.reduce(.zero, +)
    }

    /// Seconds the capture spans.
    public var captureSeconds: Double {
        guard let f = firstTimestamp, let l = lastTimestamp else { return 0 }
        return max(0, Double(l.nanoseconds - f.nanoseconds) / 1e9)
    }

    static func seconds(_ a: Timestamp, _ b: Timestamp) -> Double { max(0, Double(b.nanoseconds - a.nanoseconds) / 1e9) }

    public init(model: CaptureModel, energy: EnergyModel = EnergyModel()) {
        profile = energy.profile
        hostWakeups = model.hostWakeups.count
        let awake = model.hostWakeups.awakeSeconds, current = energy.profile.phone.awakeMilliamps
        host = RadioCost(radioSeconds: 0, chargeMC: current * awake.typical, lowMC: current * awake.low,
                         highMC: current * awake.high)
        firstTimestamp = model.firstTimestamp
        lastTimestamp = model.lastTimestamp
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: 0)
        for s in model.scans {
            let end = s.endTimestamp ?? captureEnd
            let t = energy.scanTime(s, duration: Self.seconds(s.start.timestamp, end))
            scans.append(Scan(session: s, start: s.start.timestamp, end: end, radio: t.radio,
                              phone: energy.scanCost(s, duration: Self.seconds(s.start.timestamp, end))))
        }
        for a in model.ownAdvertising {
            let end = a.end?.timestamp ?? captureEnd
            advertising.append(Advertising(session: a, start: a.start.timestamp, end: end,
                                           phone: energy.advertisingCost(a, seconds: Self.seconds(a.start.timestamp, end))))
        }
        for c in model.connections {
            links.append(Self.link(c, captureEnd: captureEnd, energy: energy))
        }
        let paging = model.failedConnections.filter { $0.transport == .brEdr }.map { f in
            (start: f.requested?.timestamp ?? f.at.timestamp, end: f.at.timestamp)
        }
        measured = Self.measured(model.controllerActivity, report: self, paging: paging)
    }

    /// The phone's total alone (what an audit's summary needs), without keeping each activity: no array per link.
    public static func phoneTotal(model: CaptureModel, energy: EnergyModel = EnergyModel()) -> RadioCost {
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: 0)
        var total = RadioCost.zero
        for s in model.scans {
            total += energy.scanCost(s, duration: seconds(s.start.timestamp, s.endTimestamp ?? captureEnd))
        }
        for a in model.ownAdvertising {
            total += energy.advertisingCost(a, seconds: seconds(a.start.timestamp, a.end?.timestamp ?? captureEnd))
        }
        for c in model.connections where c.transport == .le || c.transport == .unknown {
            let end = c.end?.timestamp ?? captureEnd
            let central = c.role != .peripheral
            func add(_ p: LinkPhase, from: Timestamp, to: Timestamp) {
                let t = energy.linkTime(seconds: seconds(from, to), parameters: p.parameters, txPHY: p.txPHY, rxPHY: p.rxPHY,
                                        sent: p.sent, received: p.received, encrypted: c.encrypted, phoneIsCentral: central)
                total += energy.phoneCost(t)
            }
            // The phases tile the link: each from its start (the first from the link's) to the next one's.
            let closed = c.closedPhases, current = c.currentPhase ?? LinkPhase.whole(c)
            for i in 0...closed.count {
                let p = i < closed.count ? closed[i] : current
                let to = i + 1 < closed.count ? closed[i + 1].start.timestamp : i < closed.count ? current.start.timestamp : end
                add(p, from: i == 0 ? c.start.timestamp : p.start.timestamp, to: to)
            }
        }
        return total
    }

    static func link(_ c: Connection, captureEnd: Timestamp, energy: EnergyModel) -> Link {
        let end = c.end?.timestamp ?? captureEnd
        let modelled = c.transport == .le || c.transport == .unknown
        var phases: [Phase] = []
        var source = c.closedPhases
        source.append(c.currentPhase ?? LinkPhase.whole(c))
        phases.reserveCapacity(source.count)
        for (i, p) in source.enumerated() {
            let from = i == 0 ? c.start.timestamp : p.start.timestamp
            let to = i + 1 < source.count ? source[i + 1].start.timestamp : end
            let seconds = Self.seconds(from, to)
            guard modelled else {
                phases.append(Phase(parameters: p.parameters, start: from, end: to, radio: RadioTime(), phone: .zero, peripheral: nil))
                continue
            }
            let central = c.role != .peripheral
            let t = energy.linkTime(seconds: seconds, parameters: p.parameters, txPHY: p.txPHY, rxPHY: p.rxPHY,
                                    sent: p.sent, received: p.received, encrypted: c.encrypted, phoneIsCentral: central)
            let peripheral = central
                ? energy.peripheralCost(t, seconds: seconds, peripheralSent: t.dataAirReceived, peripheralReceived: t.dataAirSent)
                : nil
            phases.append(Phase(parameters: p.parameters, start: from, end: to, radio: t.phoneLow, phone: energy.phoneCost(t),
                                peripheral: peripheral))
        }
        return Link(connection: c, start: c.start.timestamp, end: end, phases: phases, modelled: modelled)
    }

    /// The intervals between consecutive controller activity reports, with the model's tx and rx time for each:
    /// every scan and link prorated by its overlap with the interval.
    static func measured(_ reports: [ControllerActivityReport], report: EnergyReport,
                         paging: [(start: Timestamp, end: Timestamp)]) -> [Measured] {
        var out: [Measured] = []
        for (a, b) in zip(reports, reports.dropFirst()) where b.at.controller == a.at.controller {
            // Each answer counts since the stack's previous read (AOSP resets the counters on read), so the
            // second of two reads in the capture measures the interval between them; the first read's interval
            // began before the capture.
            guard b.at.timestamp > a.at.timestamp else { continue }
            let from = a.at.timestamp, to = b.at.timestamp
            var model = RadioTime()
            var brEdr = paging.contains { $0.start < to && $0.end > from }
            func share(_ s: Timestamp, _ e: Timestamp) -> Double {
                let total = Self.seconds(s, e)
                let overlap = Self.seconds(max(s, from), min(e, to))
                return total > 0 ? overlap / total : 0
            }
            for s in report.scans {
                let f = share(s.start, s.end)
                model = model + RadioTime(txSeconds: s.radio.txSeconds * f, rxSeconds: s.radio.rxSeconds * f)
            }
            for l in report.links {
                if !l.modelled && l.start < to && l.end > from && l.connection.transport == .brEdr { brEdr = true }
                for p in l.phases {
                    let f = share(p.start, p.end)
                    model = model + RadioTime(txSeconds: p.radio.txSeconds * f, rxSeconds: p.radio.rxSeconds * f)
                }
            }
            out.append(Measured(start: from, end: to, txSeconds: Double(b.txMilliseconds) / 1000,
                                rxSeconds: Double(b.rxMilliseconds) / 1000, idleSeconds: Double(b.idleMilliseconds) / 1000,
                                energy: b.energy, modelTxSeconds: model.txSeconds, modelRxSeconds: model.rxSeconds,
                                brEdrActive: brEdr))
        }
        return out
    }
}

extension LinkPhase {
    /// A link with no phase recorded (no traffic, parameters from its start): one phase for all of it.
    static func whole(_ c: Connection) -> LinkPhase {
        LinkPhase(start: c.start, parameters: c.parameters, txPHY: c.txPHY, rxPHY: c.rxPHY)
    }
}
