import BTWire
import BTCapture
import BTDecode
import BTTrack

/// Every activity of a capture priced by `EnergyModel`: what `btlens energy` prints and what findings' costs are
/// shares of.
public struct EnergyReport: Sendable {
    public struct Scan: Sendable {
        /// What the reports read of the session (not the session: a capture of many short scans has thousands).
        public var session: ScanSessionSummary
        public var start: Timestamp
        public var end: Timestamp
        public var radio: RadioTime
        public var phone: RadioCost
    }

    public struct Phase: Sendable {
        /// nil when the capture never showed the link's parameters.
        public var parameters: ConnectionParameters?
        /// A BR/EDR phase's mode (nil on LE links).
        public var classic: ClassicLinkMode? = nil
        /// "interval 7.5 ms latency 0", "sniff 498.75 ms": made when asked, since audits price every phase and print
        /// none.
        public var name: String {
            if let classic { return classic.name }
            return parameters.map { p in
                "interval \(Format.ms(p.intervalMilliseconds)) ms latency \(p.latency)"
                    + (p.subrateFactor > 1 ? ", subrated ×\(p.subrateFactor): effective interval \(Format.ms(p.effectiveIntervalMilliseconds)) ms" : "")
            } ?? "parameters unknown"
        }
        public var start: Timestamp
        public var end: Timestamp
        public var radio: RadioTime
        public var phone: RadioCost
        public var peripheral: RadioCost?
    }

    public struct Link: Sendable {
        /// What the report names of the link.
        public var connection: LinkSummary
        public var start: Timestamp
        public var end: Timestamp
        public var phases: [Phase]
        /// Whether the model prices this link: LE links, and BR/EDR ACL and SCO/eSCO links by their modes and
        /// traffic (a link whose transport the capture never showed is priced as LE).
        public var modelled: Bool
        /// A BR/EDR ACL or SCO/eSCO link.
        public var isClassic: Bool { connection.transport == .brEdr || connection.transport == .sco }
        /// A BR/EDR link's phases summed by mode (`Phase.name`), in order of first appearance.
        public var modes: [(name: String, nanoseconds: Int64, phone: RadioCost)] {
            var list: [(name: String, nanoseconds: Int64, phone: RadioCost)] = []
            var index: [String: Int] = [:]
            for p in phases {
                let name = p.name, ns = p.end.nanoseconds - p.start.nanoseconds
                if let i = index[name] {
                    list[i].nanoseconds += ns
                    list[i].phone = list[i].phone + p.phone
                } else {
                    index[name] = list.count
                    list.append((name, ns, p.phone))
                }
            }
            return list
        }
        public var phone: RadioCost { phases.reduce(.zero) { $0 + $1.phone } }
        /// The peripheral's side: LE links where the phone is central (a BR/EDR peer's side is not priced).
        public var peripheral: RadioCost? {
            guard modelled, !isClassic, connection.role != .peripheral else { return nil }
            return phases.reduce(.zero) { $0 + ($1.peripheral ?? .zero) }
        }
        public var radio: RadioTime { phases.reduce(RadioTime()) { $0 + $1.radio } }
        /// Bluetooth Quality Reports about this link (link quality, supervision timeout approaching, choppy audio).
        public var qualityReports: [QualityReport] = []
        /// The first link-quality report that shows heavy retransmissions: it explains a costly link.
        public var heavyRetransmissions: QualityReport? { qualityReports.first(where: \.showsHeavyRetransmissions) }
        /// Air captures: the air time of the packets the sniffer heard, the central's as `txSeconds` and the
        /// peripheral's as `rxSeconds` (the phone is the central), at each phase's PHYs; nil for HCI links. Packet
        /// time only: the model's `radio` also has the receiver listening between packets (T_IFS and its guard),
        /// and packets the sniffer missed are not in it.
        public var heard: RadioTime?
    }

    public struct Advertising: Sendable {
        public var session: AdvertisingSession
        public var start: Timestamp
        public var end: Timestamp
        public var phone: RadioCost
        /// Its tx and rx time.
        public var radio = RadioTime()
    }

    /// The controller's BR/EDR page and inquiry scan (`ClassicScanSpan`): the listening that keeps the phone
    /// connectable, which the controller's counters include and no app asked for.
    public struct ClassicScan: Sendable {
        public var controller: UInt16
        public var start: Timestamp
        public var end: Timestamp
        public var pageScan: ClassicScanActivity?
        public var inquiryScan: ClassicScanActivity?
        /// The capture had not shown the controller's settings yet: Android's own (`ClassicScanActivity.android`)
        /// are assumed, as its stack keeps the phone connectable while Bluetooth is on.
        public var assumed: Bool
        public var radio: RadioTime
        public var phone: RadioCost
    }

    /// BR/EDR paging (Create Connection until Connection Complete) and inquiry (Inquiry until Inquiry Complete or
    /// Cancel): the ID-packet train and listening for responses. Apart from the totals, as the page scan is; in
    /// the comparison with the controller's counters.
    public struct ClassicProcedure: Sendable {
        public enum Kind: String, Sendable { case paging, inquiry }
        public var kind: Kind
        public var controller: UInt16
        public var start: Timestamp
        public var end: Timestamp
        public var radio: RadioTime
        public var phone: RadioCost
    }

    /// The model's radio time in an interval by kind of activity: what the controller's counters are apportioned
    /// by, and what says why the model is far from them.
    public struct ModelShares: Sendable, Equatable {
        public var scanTx = 0.0, scanRx = 0.0, linkTx = 0.0, linkRx = 0.0, advertisingTx = 0.0, advertisingRx = 0.0
        /// BR/EDR page and inquiry scan listening (`ClassicScan`).
        public var classicRx = 0.0
        /// BR/EDR links (ACL, SCO/eSCO), paging and inquiry (`ClassicProcedure`): reported with the links.
        public var brEdrTx = 0.0, brEdrRx = 0.0
        public var tx: Double { scanTx + linkTx + advertisingTx + brEdrTx }
        public var rx: Double { scanRx + linkRx + advertisingRx + classicRx + brEdrRx }
        public var total: Double { tx + rx }
        /// Links of either transport, paging and inquiry: what reports call links.
        public var links: Double { linkTx + linkRx + brEdrTx + brEdrRx }
        /// Each kind's time from `a`'s and `b`'s.
        static func combine(_ a: ModelShares, _ b: ModelShares, _ f: (Double, Double) -> Double) -> ModelShares {
            ModelShares(scanTx: f(a.scanTx, b.scanTx), scanRx: f(a.scanRx, b.scanRx), linkTx: f(a.linkTx, b.linkTx),
                        linkRx: f(a.linkRx, b.linkRx), advertisingTx: f(a.advertisingTx, b.advertisingTx),
                        advertisingRx: f(a.advertisingRx, b.advertisingRx), classicRx: f(a.classicRx, b.classicRx),
                        brEdrTx: f(a.brEdrTx, b.brEdrTx), brEdrRx: f(a.brEdrRx, b.brEdrRx))
        }
        /// The time between two points of the running integral (never below 0).
        static func - (a: ModelShares, b: ModelShares) -> ModelShares { combine(a, b) { max(0, $0 - $1) } }
        static func + (a: ModelShares, b: ModelShares) -> ModelShares { combine(a, b, +) }
        func scaled(by k: Double) -> ModelShares { Self.combine(self, self) { v, _ in v * k } }
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
        /// A BR/EDR link was up, or the controller paged for one, in the interval: the counters include BR/EDR
        /// radio time (priced by the model, `ModelShares.brEdrTx`/`brEdrRx`).
        public var brEdrActive: Bool
        /// Of that, some the model cannot price from the capture: a link it joined midway (its mode unknown) or
        /// whose ACL packets the capture cut short (their size unknown).
        public var brEdrUnpriced = false
        /// A scan in the interval ran with parameters the capture does not show (set before it began): the model
        /// guessed its duty cycle.
        public var scanParametersUnknown = false
        /// The model's time by activity (its sums are `modelTxSeconds` and `modelRxSeconds`).
        public var shares = ModelShares()
        public var seconds: Double { Double(end.nanoseconds - start.nanoseconds) / 1e9 }
        /// (model − measured) / measured of tx + rx time; nil when the controller measured none.
        public var error: Double? {
            let measured = txSeconds + rxSeconds
            return measured > 0 ? (modelTxSeconds + modelRxSeconds - measured) / measured : nil
        }
        /// Whether the counters can be compared: not when tx + rx exceed the interval (impossible) or a read
        /// repeats the previous read's tx and rx (stale: seen on a 2017 MediaTek phone). The idle counter is not
        /// judged: many controllers leave it at 0 or count only part of the time.
        public var countersConsistent = true

        /// tx + rx may exceed the interval by this share (the reads' own timing) before they are impossible.
        public static let timingSlack = 0.05
        public static func consistent(tx: UInt32, rx: UInt32, previous: ControllerActivityReport, seconds: Double) -> Bool {
            let radio = Double(UInt64(tx) + UInt64(rx)) / 1000
            let stale = tx + rx > 0 && tx == previous.txMilliseconds && rx == previous.rxMilliseconds
            return !stale && radio <= seconds * (1 + timingSlack) + 0.01
        }
        /// Why the model is far from the counters, when it is (`MeasuredGap`).
        public var gap: MeasuredGap? { MeasuredGap.explain(self) }
    }

    /// A Bluetooth Quality Report Energy Monitor (BQR v6): the controller's own LE and BR/EDR tx and rx time and
    /// average current over the period before the report, and the model's LE tx and rx time for that period.
    public struct Monitored: Sendable {
        public var start: Timestamp
        public var end: Timestamp
        public var monitor: BluetoothQualityReport.EnergyMonitor
        public var modelTxSeconds: Double
        public var modelRxSeconds: Double
        public var leTxSeconds: Double { Double(monitor.leTxMilliseconds) / 1000 }
        public var leRxSeconds: Double { Double(monitor.leRxMilliseconds) / 1000 }
        /// The controller spent radio time on BR/EDR in the period, which the LE model does not price.
        public var brEdrActive: Bool { monitor.brEdrTxMilliseconds + monitor.brEdrRxMilliseconds > 0 }
        public var seconds: Double { Double(end.nanoseconds - start.nanoseconds) / 1e9 }
        /// (model − measured) / measured of LE tx + rx time; nil when the controller measured none.
        public var error: Double? {
            let measured = leTxSeconds + leRxSeconds
            return measured > 0 ? (modelTxSeconds + modelRxSeconds - measured) / measured : nil
        }
    }

    public var profile: EnergyProfile
    /// Set aside as the model's sessions are (`SetAsideArray`): a capture of tens of thousands of scans prices each.
    public var scans = SetAsideArray<Scan>()
    /// Read once made: its totals are summed when the report is made (`Links.phone`).
    public private(set) var links = Links()
    public var advertising: SetAsideArray<Advertising> = []
    /// The controller's BR/EDR page and inquiry scan: the OS's standing cost, apart from the totals (which price
    /// what the capture's activities cost), in the comparison with the controller's counters.
    public var classicScans: [ClassicScan] = []
    /// BR/EDR paging and inquiry, in time order.
    public var classicProcedures: [ClassicProcedure] = []
    public var measured: [Measured] = []
    public var monitored: [Monitored] = []
    public var hostWakeups: Int
    /// The host kept awake by them (the profile's awake current; the range is the hold's, 0.1–3 s). Never in
    /// the radio totals.
    public var host: RadioCost
    public var firstTimestamp: Timestamp?
    public var lastTimestamp: Timestamp?
    /// The system the capture shows when it is not Android's (whose phones the default profile describes) and
    /// the profile is the default: the report says it prices another system's radio with an Android profile.
    public var platformNotProfiled: String?
    /// The name the capture gives its controller (`CaptureModel.localName`), often the phone's model.
    public var capturePhoneName: String?
    /// The controller's chip, where the capture shows the host reading it (`ControllerVersion`).
    public var controllerVersion: ControllerVersion?
    /// The default phone profile prices a phone it was not made from: a capture that names another phone, or an
    /// Android capture that names none. A `--profile` is never a guess.
    public var phoneProfileGuessed: Bool {
        guard profile.phone == PhoneProfile() else { return false }
        if let name = capturePhoneName { return !PhoneProfile.describes(name) }
        return platformNotProfiled != nil || isAndroid
    }
    var isAndroid = false

    public var phoneTotal: RadioCost { phoneTotal(links: CollectionOfOne(links.phone)) }

    /// The total the reports lead with: `phoneTotal`, with the controller's counters in its place over the
    /// intervals they cover (`PhoneTotal`).
    public private(set) var accountedTotal = PhoneTotal(model: .zero)

    /// The phone's total with `links` as every link's cost, in the model's order: the export's links priced when
    /// they were judged are not in the report (`FactsLinkRows`), only their costs are kept.
    public func phoneTotal(links: some Sequence<RadioCost>) -> RadioCost {
        scans.reduce(.zero) { $0 + $1.phone } + links.reduce(.zero, +) + advertising.reduce(.zero) { $0 + $1.phone }
    }

    /// The peripherals' total, over the links whose peripheral side is priced; nil when there is none.
    public var peripheralTotal: RadioCost? { links.peripheral }

    /// Seconds the capture spans.
    public var captureSeconds: Double {
        guard let f = firstTimestamp, let l = lastTimestamp else { return 0 }
        return max(0, Double(l.nanoseconds - f.nanoseconds) / 1e9)
    }

    static func seconds(_ a: Timestamp, _ b: Timestamp) -> Double { max(0, Double(b.nanoseconds - a.nanoseconds) / 1e9) }

    /// `rows` holds the links judged (and slimmed) before the capture ended, priced then.
    public init(model: CaptureModel, energy: EnergyModel = EnergyModel(), rows: EnergyLinkRows? = nil) {
        profile = energy.profile
        hostWakeups = model.hostWakeups.count
        capturePhoneName = model.localName
        controllerVersion = model.controllerVersion
        isAndroid = model.platform.platform == .android
        if let platform = model.platform.platform, platform != .android, platform != .linux, energy.profile.phone == PhoneProfile() {
            platformNotProfiled = platform.rawValue
        }
        let awake = model.hostWakeups.awakeSeconds, current = energy.profile.phone.awakeMilliamps
        host = RadioCost(radioSeconds: 0, chargeMC: current * awake.typical, lowMC: current * awake.low,
                         highMC: current * awake.high)
        firstTimestamp = model.firstTimestamp
        lastTimestamp = model.lastTimestamp
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: 0)
        scans = model.scans.emptyCopy(of: Scan.self)
        for s in model.scans {
            let end = s.endTimestamp ?? captureEnd
            let t = energy.scanTime(s, duration: Self.seconds(s.start.timestamp, end))
            scans.append(Scan(session: ScanSessionSummary(s), start: s.start.timestamp, end: end, radio: t.radio,
                              phone: energy.scanCost(s, duration: Self.seconds(s.start.timestamp, end))))
        }
        advertising = model.ownAdvertising.emptyCopy(of: Advertising.self)
        for a in model.ownAdvertising {
            let end = a.end?.timestamp ?? captureEnd
            advertising.append(Advertising(session: a, start: a.start.timestamp, end: end,
                                           phone: energy.advertisingCost(a, seconds: Self.seconds(a.start.timestamp, end)),
                                           radio: energy.advertisingTime(a, seconds: Self.seconds(a.start.timestamp, end))))
        }
        classicScans = Self.classicScans(model, captureEnd: captureEnd, energy: energy)
        // Every link by id: the judged ones' rows (`EnergyLinkRows`: their links are let go, or kept slim) and the
        // model's other links, priced now; both in id order, merged.
        if let rows {
            rows.records.sortByID()
            links.judged = JudgedLinks(records: rows.records)
        }
        let judged = links.judged.records
        var others: [(id: Int, row: Int32)] = []
        for c in model.connections where !(c.isJudged && judged.index(of: c.id) != nil) {
            others.append((c.id, Int32(links.others.append(c, captureEnd: captureEnd, energy: energy))))
        }
        others.sort { $0.id < $1.id }
        var j = 0, o = 0
        while j < links.judged.count || o < others.count {
            if o == others.count || (j < links.judged.count && Int(judged.ids[j]) < others[o].id) {
                links.order.appendFirst()
                j += 1
            } else {
                links.order.appendSecond(Int(others[o].row))
                o += 1
            }
        }
        // One pass over the links (the judged ones read back from their spill): the quality reports about each and
        // the totals, summed in id order as a sum over every link would be.
        var phone = RadioCost.zero, peripheral: RadioCost?
        var procedures: [ClassicProcedure] = []
        func procedure(_ kind: ClassicProcedure.Kind, controller: UInt16, from: Timestamp, to: Timestamp) {
            guard to > from else { return }
            let t = energy.classicTrainTime(seconds: Self.seconds(from, to))
            procedures.append(ClassicProcedure(kind: kind, controller: controller, start: from, end: to, radio: t,
                                               phone: energy.classicCost(t)))
        }
        for position in links.indices {
            let link = links[position]
            phone = phone + link.phone
            if let p = link.peripheral { peripheral = (peripheral ?? .zero) + p }
            // Paging that succeeded: from the Create Connection to the link.
            if link.connection.transport == .brEdr, let asked = link.connection.connectRequestedTime {
                procedure(.paging, controller: link.connection.controller, from: asked, to: link.start)
            }
            guard !model.qualityReports.isEmpty else { continue }
            let about = QualityReport.about(link.connection, in: model.qualityReports)
            if !about.isEmpty { links.qualityReports[position] = about }
        }
        links.phone = phone
        links.peripheral = peripheral
        let failedPages = model.failedConnections.filter { $0.transport == .brEdr }
        let paging = failedPages.map { f in (start: f.requested?.timestamp ?? f.at.timestamp, end: f.at.timestamp) }
        for f in failedPages {
            procedure(.paging, controller: f.at.controller, from: f.paging.start, to: f.paging.end)
        }
        for i in model.inquiries { procedure(.inquiry, controller: i.controller, from: i.start, to: i.end(captureEnd: captureEnd)) }
        procedures.sort { $0.start < $1.start }
        classicProcedures = procedures
        measured = Self.measured(model.controllerActivity, report: self, paging: paging)
        monitored = Self.monitored(model.qualityReports, report: self)
        accountedTotal = PhoneTotal(model: phoneTotal, reports: model.controllerActivity,
                                    bins: model.controllerActivity.count > 1 ? bins() : ActivityBins(), profile: profile.phone)
    }

    /// Every activity the report priced, spread over time (`ActivityBins`).
    func bins() -> ActivityBins {
        var bins = ActivityBins()
        for s in scans { bins.spread(s.start, s.end, s.phone) }
        for a in advertising { bins.spread(a.start, a.end, a.phone) }
        for l in links { for p in l.phases { bins.spread(p.start, p.end, p.phone) } }
        for c in classicScans { bins.spread(c.start, c.end, c.phone, background: true) }
        for c in classicProcedures { bins.spread(c.start, c.end, c.phone, background: true) }
        return bins
    }

    /// Paging from `from` to `to` spread as the OS's background (what `ClassicProcedure` prices).
    static func spreadPaging(_ bins: inout ActivityBins, from: Timestamp, to: Timestamp, energy: EnergyModel) {
        guard to > from else { return }
        bins.spread(from, to, energy.classicCost(energy.classicTrainTime(seconds: seconds(from, to))), background: true)
    }

    /// `phoneTotal(model:energy:priced:)` with the controller's counters in its place over the intervals they
    /// cover (`PhoneTotal`): what an audit's summary leads with, without keeping each activity.
    public static func accountedTotal(model: CaptureModel, energy: EnergyModel = EnergyModel(),
                                      priced: PricedPhases? = nil) -> PhoneTotal {
        let total = phoneTotal(model: model, energy: energy, priced: priced)
        guard model.controllerActivity.count > 1 else {
            return PhoneTotal(model: total)
        }
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: 0)
        var bins = priced?.bins ?? ActivityBins()
        func spread(_ start: Timestamp, _ end: Timestamp, _ cost: RadioCost, background: Bool = false) {
            bins.spread(start, end, cost, background: background)
        }
        for s in model.scans {
            let end = s.endTimestamp ?? captureEnd
            spread(s.start.timestamp, end, energy.scanCost(s, duration: seconds(s.start.timestamp, end)))
        }
        for a in model.ownAdvertising {
            let end = a.end?.timestamp ?? captureEnd
            spread(a.start.timestamp, end, energy.advertisingCost(a, seconds: seconds(a.start.timestamp, end)))
        }
        for c in model.connections where (c.transport == .le || c.transport == .unknown || c.isClassic) && !(priced != nil && c.isJudged) {
            phaseCosts(c, captureEnd: captureEnd, energy: energy) { cost, from, to in spread(from, to, cost) }
            if c.transport == .brEdr, let asked = c.connectRequested?.timestamp {
                spreadPaging(&bins, from: asked, to: c.start.timestamp, energy: energy)
            }
        }
        for c in classicScans(model, captureEnd: captureEnd, energy: energy) { spread(c.start, c.end, c.phone, background: true) }
        for f in model.failedConnections where f.transport == .brEdr {
            spreadPaging(&bins, from: f.paging.start, to: f.paging.end, energy: energy)
        }
        for i in model.inquiries { spreadPaging(&bins, from: i.start, to: i.end(captureEnd: captureEnd), energy: energy) }
        return PhoneTotal(model: total, reports: model.controllerActivity, bins: bins, profile: energy.profile.phone)
    }

    /// Each Energy Monitor report against the model over the period it counts (the `periodMilliseconds` before it).
    static func monitored(_ reports: [QualityReport], report: EnergyReport) -> [Monitored] {
        let monitors = reports.compactMap { r in
            r.energyMonitor.map { (start: r.at.timestamp.adding(nanoseconds: -Int64($0.periodMilliseconds) * 1_000_000), end: r.at.timestamp, monitor: $0) }
        }.filter { $0.monitor.periodMilliseconds > 0 }
        guard !monitors.isEmpty else { return [] }
        let integral = modelIntegral(at: monitors.flatMap { [$0.start.nanoseconds, $0.end.nanoseconds] }, report: report)
        return monitors.map { m in
            // Energy Monitor counts LE apart from BR/EDR: the page scan is not in its LE figures.
            var d = (integral[m.end.nanoseconds] ?? ModelShares()) - (integral[m.start.nanoseconds] ?? ModelShares())
            d.classicRx = 0
            d.brEdrTx = 0
            d.brEdrRx = 0
            return Monitored(start: m.start, end: m.end, monitor: m.monitor, modelTxSeconds: d.tx, modelRxSeconds: d.rx)
        }
    }

    /// The phone's total alone (what an audit's summary needs), without keeping each activity: no array per link.
    /// `priced` gives the phase costs of links judged and slimmed before the capture ended (`PricedPhases`).
    public static func phoneTotal(model: CaptureModel, energy: EnergyModel = EnergyModel(),
                                  priced: PricedPhases? = nil) -> RadioCost {
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: 0)
        var total = RadioCost.zero
        for s in model.scans {
            total += energy.scanCost(s, duration: seconds(s.start.timestamp, s.endTimestamp ?? captureEnd))
        }
        for a in model.ownAdvertising {
            total += energy.advertisingCost(a, seconds: seconds(a.start.timestamp, a.end?.timestamp ?? captureEnd))
        }
        if let priced { total += priced.total }
        for c in model.connections where (c.transport == .le || c.transport == .unknown || c.isClassic) && !(priced != nil && c.isJudged) {
            phaseCosts(c, captureEnd: captureEnd, energy: energy) { total += $0 }
        }
        return total
    }

    /// The phone's cost of each of a link's phases, in order.
    public static func phaseCosts(_ c: Connection, captureEnd: Timestamp, energy: EnergyModel,
                                  _ body: (RadioCost) -> Void) {
        phaseCosts(c, captureEnd: captureEnd, energy: energy) { cost, _, _ in body(cost) }
    }

    /// The phone's cost of each of a link's phases with the phase's span, in order.
    public static func phaseCosts(_ c: Connection, captureEnd: Timestamp, energy: EnergyModel,
                                  _ body: (RadioCost, _ from: Timestamp, _ to: Timestamp) -> Void) {
        let end = c.end?.timestamp ?? captureEnd
        let central = c.role != .peripheral
        func add(_ p: LinkPhase, from: Timestamp, to: Timestamp) {
            if c.isClassic {
                let mode = p.classic ?? c.classicMode
                let t = energy.classicLinkTime(seconds: seconds(from, to), mode: mode, sent: p.sent, received: p.received,
                                               phoneIsCentral: mode?.isCentral ?? central)
                body(energy.classicCost(t), from, to)
                return
            }
            let t = energy.linkTime(seconds: seconds(from, to), parameters: p.parameters, txPHY: p.txPHY, rxPHY: p.rxPHY,
                                    sent: p.sent, received: p.received, encrypted: c.encrypted, phoneIsCentral: central,
                                    channelSoundingSeconds: Double(p.channelSoundingMicroseconds) / 1e6)
            body(energy.phoneCost(t), from, to)
        }
        // The phases tile the link: each from its start (the first from the link's) to the next one's.
        let closed = c.closedPhases, current = c.currentPhase ?? LinkPhase.whole(c)
        for i in 0...closed.count {
            let p = i < closed.count ? closed[i] : current
            let to = i + 1 < closed.count ? closed[i + 1].start.timestamp : i < closed.count ? current.start.timestamp : end
            add(p, from: i == 0 ? c.start.timestamp : p.start.timestamp, to: to)
        }
    }

    /// One link priced phase by phase (`captureEnd` ends a link still open); the Perfetto export prices a link
    /// this way when it draws it before the capture has ended.
    public static func link(_ c: Connection, captureEnd: Timestamp, energy: EnergyModel) -> Link {
        var table = LinkTable()
        table.append(c, captureEnd: captureEnd, energy: energy)
        return table.link(0)
    }

    /// The model's running radio time by activity (seconds) at each of `times` (ns): every scan, link phase,
    /// advertising set and BR/EDR page scan spreads its radio time evenly over its span.
    static func modelIntegral(at times: [Int64], report: EnergyReport) -> [Int64: ModelShares] {
        // The model's time in an interval is F(to) − F(from), F the running integral of the summed rates, made in
        // one sweep over the spans' ends and the reads (not each interval against each activity: thousands of
        // reads times thousands of links).
        var changes: [(at: Int64, rate: ModelShares)] = []
        func spread(_ start: Timestamp, _ end: Timestamp, _ rate: (Double) -> ModelShares) {
            let span = end.nanoseconds - start.nanoseconds
            guard span > 0 else { return }
            let r = rate(Double(span))
            changes.append((start.nanoseconds, r))
            changes.append((end.nanoseconds, r.scaled(by: -1)))
        }
        for s in report.scans {
            spread(s.start, s.end) { ModelShares(scanTx: s.radio.txSeconds / $0, scanRx: s.radio.rxSeconds / $0) }
        }
        for a in report.advertising {
            spread(a.start, a.end) { ModelShares(advertisingTx: a.radio.txSeconds / $0, advertisingRx: a.radio.rxSeconds / $0) }
        }
        for l in report.links {
            let classic = l.isClassic
            for p in l.phases {
                spread(p.start, p.end) {
                    classic ? ModelShares(brEdrTx: p.radio.txSeconds / $0, brEdrRx: p.radio.rxSeconds / $0)
                        : ModelShares(linkTx: p.radio.txSeconds / $0, linkRx: p.radio.rxSeconds / $0)
                }
            }
        }
        for c in report.classicScans { spread(c.start, c.end) { ModelShares(classicRx: c.radio.rxSeconds / $0) } }
        for c in report.classicProcedures {
            spread(c.start, c.end) { ModelShares(brEdrTx: c.radio.txSeconds / $0, brEdrRx: c.radio.rxSeconds / $0) }
        }
        changes.sort { $0.at < $1.at }
        let times = Array(Set(times)).sorted()
        var integral: [Int64: ModelShares] = [:]
        var rate = ModelShares(), total = ModelShares(), now = Int64.min, next = 0
        func advance(to t: Int64) {
            guard now != .min else { return }
            total = total + rate.scaled(by: Double(t - now))
        }
        for t in times {
            while next < changes.count && changes[next].at <= t {
                advance(to: changes[next].at)
                now = changes[next].at
                // Rates are added and taken away exactly as they were added: no clamping here.
                rate = rate + changes[next].rate
                next += 1
            }
            if now != .min {
                advance(to: t)
                now = t
            }
            integral[t] = total
        }
        return integral
    }

    /// Each controller's page and inquiry scan as the capture shows it, and before it showed it, on Android, the
    /// stack's own settings (assumed, and said so): elsewhere an unknown state is not priced.
    static func classicScans(_ model: CaptureModel, captureEnd: Timestamp, energy: EnergyModel) -> [ClassicScan] {
        func priced(controller: UInt16, start: Timestamp, end: Timestamp, page: ClassicScanActivity?,
                    inquiry: ClassicScanActivity?, assumed: Bool) -> ClassicScan {
            let t = energy.classicScanTime(page: page, inquiry: inquiry, seconds: seconds(start, end))
            return ClassicScan(controller: controller, start: start, end: end, pageScan: page, inquiryScan: inquiry,
                               assumed: assumed, radio: t, phone: energy.classicScanCost(t))
        }
        var result: [ClassicScan] = []
        if model.platform.platform == .android, let first = model.firstTimestamp {
            var controllers = Set(model.classicScansKnownFrom.keys)
            for r in model.controllerActivity { controllers.insert(r.at.controller) }
            for s in model.scans { controllers.insert(s.controller) }
            if controllers.isEmpty { controllers.insert(0) }
            for c in controllers.sorted() {
                let known = model.classicScansKnownFrom[c] ?? captureEnd
                guard known > first else { continue }
                result.append(priced(controller: c, start: first, end: known, page: .android, inquiry: nil, assumed: true))
            }
        }
        for span in model.classicScans {
            result.append(priced(controller: span.controller, start: span.start, end: span.end ?? captureEnd,
                                 page: span.pageScan, inquiry: span.inquiryScan, assumed: false))
        }
        return result
    }

    /// The intervals between consecutive controller activity reports, with the model's tx and rx time for each:
    /// every scan and link prorated by its overlap with the interval.
    static func measured(_ reports: [ControllerActivityReport], report: EnergyReport,
                         paging: [(start: Timestamp, end: Timestamp)]) -> [Measured] {
        // Each answer counts since the stack's previous read (AOSP resets the counters on read), so the second of
        // two reads in the capture measures the interval between them; the first read's interval began before it.
        let intervals = ControllerActivityReport.intervals(reports)
        guard !intervals.isEmpty else { return [] }
        let integral = modelIntegral(at: intervals.flatMap { [$0.0.at.timestamp.nanoseconds, $0.1.at.timestamp.nanoseconds] },
                                     report: report)
        // BR/EDR links and page attempts: counted by binary search over their sorted starts and ends.
        var brEdr = paging.map { ($0.start.nanoseconds, $0.end.nanoseconds) }
        // Links whose BR/EDR time the model cannot price from the capture: joined midway (mode unknown), or ACL
        // packets cut short (their size unknown).
        var unpriced: [(Int64, Int64)] = []
        for l in report.links where l.connection.transport == .brEdr {
            brEdr.append((l.start.nanoseconds, l.end.nanoseconds))
            if l.connection.implicitStart || l.connection.aclPacketsCutShort > 0 {
                unpriced.append((l.start.nanoseconds, l.end.nanoseconds))
            }
        }
        let starts = brEdr.map(\.0).sorted(), ends = brEdr.map(\.1).sorted()
        func count(_ sorted: [Int64], below value: Int64, inclusive: Bool) -> Int {
            var low = 0, high = sorted.count
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid] < value || (inclusive && sorted[mid] == value) { low = mid + 1 } else { high = mid }
            }
            return low
        }
        return intervals.map { a, b in
            let from = a.at.timestamp, to = b.at.timestamp
            let d = (integral[to.nanoseconds] ?? ModelShares()) - (integral[from.nanoseconds] ?? ModelShares())
            // Spans overlapping (from, to): those starting before `to` less those ending at or before `from`.
            let overlapping = count(starts, below: to.nanoseconds, inclusive: false) - count(ends, below: from.nanoseconds, inclusive: true)
            return Measured(start: from, end: to, txSeconds: Double(b.txMilliseconds) / 1000,
                            rxSeconds: Double(b.rxMilliseconds) / 1000, idleSeconds: Double(b.idleMilliseconds) / 1000,
                            energy: b.energy, modelTxSeconds: d.tx, modelRxSeconds: d.rx,
                            brEdrActive: overlapping > 0,
                            brEdrUnpriced: unpriced.contains { $0.0 < to.nanoseconds && $0.1 > from.nanoseconds },
                            scanParametersUnknown: report.scans.contains { !$0.session.parametersShown && $0.start < to && $0.end > from },
                            shares: d,
                            countersConsistent: Measured.consistent(tx: b.txMilliseconds, rx: b.rxMilliseconds, previous: a,
                                                                    seconds: Double(to.nanoseconds - from.nanoseconds) / 1e9))
        }
    }
}

extension LinkPhase {
    /// A link with no phase recorded (no traffic, parameters from its start): one phase for all of it.
    static func whole(_ c: Connection) -> LinkPhase {
        var p = LinkPhase(start: c.start, parameters: c.parameters, txPHY: c.txPHY, rxPHY: c.rxPHY)
        p.classic = c.classicMode
        return p
    }
}

extension EnergyReport {
    /// The radio time of the packets an air capture heard on `c`, phase by phase at the phase's PHYs.
    static func heard(_ c: Connection) -> RadioTime? {
        guard let air = c.air else { return nil }
        var t = RadioTime()
        for (phase, s) in zip(c.phases, air.phases) {
            let tx = EnergyModel.phy(phase.txPHY), rx = EnergyModel.phy(phase.rxPHY)
            t.txSeconds += AirTime.dataPDUs(s.centralPackets, bytes: s.centralPayloadBytes, phy: tx)
            t.rxSeconds += AirTime.dataPDUs(s.peripheralPackets, bytes: s.peripheralPayloadBytes, phy: rx)
        }
        return t
    }
}

extension EnergyReport.Advertising: SetAsideValue {
    /// What is priced of a session, written before the session itself.
    private struct Priced {
        var start: Timestamp, end: Timestamp, phone: RadioCost, radio: RadioTime
    }

    public static func append(_ a: EnergyReport.Advertising, to spill: Spill) -> Int64 {
        let at = spill.append(plain: Priced(start: a.start, end: a.end, phone: a.phone, radio: a.radio))
        _ = AdvertisingSession.append(a.session, to: spill)
        return at
    }

    public static func read(from spill: Spill, at offset: Int64) -> EnergyReport.Advertising {
        let priced = spill.read(plain: Priced.self, at: offset)
        let session = AdvertisingSession.read(from: spill, at: offset + Int64(MemoryLayout<Priced>.stride))
        return EnergyReport.Advertising(session: session, start: priced.start, end: priced.end, phone: priced.phone, radio: priced.radio)
    }
}

extension EnergyReport.Scan: PlainSetAsideValue {}
