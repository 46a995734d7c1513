import BTWire
import BTCapture
import BTDecode
import BTTrack

extension EnergyReport {
    /// Links priced phase by phase, stored compactly: a row of plain numbers per link and every link's phases in
    /// one contiguous array (a phase's start is the previous one's end, its peripheral cost present or not for the
    /// whole link). `btlens energy` keeps one per link until the report is printed (`EnergyLinkRows`), so each
    /// byte here is paid per link: on 31,000 links with 118,000 phases this holds about 14 MB, 8 MB less than a
    /// `Link` with its own array of `Phase`s in a dictionary by id (peak RSS 68 → 60 MB).
    public struct LinkTable: Sendable {
        struct Row: Sendable {
            /// What the report prints of the link: the link itself may be let go once priced.
            var connection: LinkSummary
            var start: Timestamp
            var end: Timestamp
            /// Its phases: `phases[firstPhase ..< firstPhase + phaseCount]`.
            var firstPhase: Int
            var phaseCount: Int32
            var modelled: Bool
            /// Whether its phases carry the peripheral's cost (a modelled link where the phone is not the peripheral).
            var pricesPeripheral: Bool
        }

        struct PhaseRow: Sendable {
            /// An LE phase's parameters or a BR/EDR phase's mode, in the space of one (a phase costs 104 bytes).
            var schedule: Schedule
            var parameters: ConnectionParameters? {
                if case .le(let p) = schedule { return p }
                return nil
            }
            var classic: ClassicLinkMode? {
                if case .classic(let packed) = schedule { return ClassicLinkMode(packed: packed) }
                return nil
            }
            var end: Timestamp
            var radio: RadioTime
            var phone: RadioCost
            /// Zero when the link does not price the peripheral.
            var peripheral: RadioCost
        }

        enum Schedule: Sendable {
            case le(ConnectionParameters?)
            /// `ClassicLinkMode.packed`.
            case classic(UInt64)
        }

        var rows: [Row] = []
        var phases: [PhaseRow] = []
        /// Air captures only: the air time heard on the link, by row.
        var heard: [Int: RadioTime] = [:]

        public init() {}

        public var count: Int { rows.count }

        /// Prices `c` phase by phase (`captureEnd` ends a link still open) and adds it; its row.
        @discardableResult
        public mutating func append(_ c: Connection, captureEnd: Timestamp, energy: EnergyModel) -> Int {
            let end = c.end?.timestamp ?? captureEnd
            let modelled = c.transport == .le || c.transport == .unknown || c.isClassic
            let central = c.role != .peripheral
            let first = phases.count
            // The phases tile the link: each from its start (the first from the link's) to the next one's.
            let closed = c.closedPhases, current = c.currentPhase ?? LinkPhase.whole(c)
            for i in 0...closed.count {
                let p = i < closed.count ? closed[i] : current
                let from = i == 0 ? c.start.timestamp : p.start.timestamp
                let to = i + 1 < closed.count ? closed[i + 1].start.timestamp : i < closed.count ? current.start.timestamp : end
                guard modelled else {
                    phases.append(PhaseRow(schedule: .le(p.parameters), end: to, radio: RadioTime(), phone: .zero, peripheral: .zero))
                    continue
                }
                let seconds = EnergyReport.seconds(from, to)
                if c.isClassic {
                    let mode = p.classic ?? c.classicMode
                    let t = energy.classicLinkTime(seconds: seconds, mode: mode, sent: p.sent, received: p.received,
                                                   phoneIsCentral: mode?.isCentral ?? central)
                    phases.append(PhaseRow(schedule: .classic((p.classic ?? c.classicMode ?? ClassicLinkMode()).packed), end: to,
                                           radio: t, phone: energy.classicCost(t), peripheral: .zero))
                    continue
                }
                let t = energy.linkTime(seconds: seconds, parameters: p.parameters, txPHY: p.txPHY, rxPHY: p.rxPHY,
                                        sent: p.sent, received: p.received, encrypted: c.encrypted, phoneIsCentral: central,
                                        channelSoundingSeconds: Double(p.channelSoundingMicroseconds) / 1e6)
                let peripheral = central
                    ? energy.peripheralCost(t, seconds: seconds, peripheralSent: t.dataAirReceived, peripheralReceived: t.dataAirSent)
                    : .zero
                phases.append(PhaseRow(schedule: .le(p.parameters), end: to, radio: t.phoneLow, phone: energy.phoneCost(t),
                                       peripheral: peripheral))
            }
            rows.append(Row(connection: LinkSummary(c), start: c.start.timestamp, end: end, firstPhase: first,
                            phaseCount: Int32(phases.count - first), modelled: modelled,
                            pricesPeripheral: modelled && central && !c.isClassic))
            if let heard = EnergyReport.heard(c) { self.heard[rows.count - 1] = heard }
            return rows.count - 1
        }

        /// Empties the table, keeping its storage (`EnergyLinkRows` prices one link at a time in it).
        mutating func removeAll() {
            rows.removeAll(keepingCapacity: true)
            phases.removeAll(keepingCapacity: true)
            heard.removeAll(keepingCapacity: true)
        }

        /// Row `i` as a `Link` (without quality reports), its phases in an array of their own.
        func link(_ i: Int) -> Link {
            let r = rows[i]
            return Self.link(r, phases: phases[r.firstPhase..<r.firstPhase + Int(r.phaseCount)], heard: heard[i])
        }

        /// A row and its phases as a `Link` (without quality reports).
        static func link(_ r: Row, phases: ArraySlice<PhaseRow>, heard: RadioTime?) -> Link {
            var list: [Phase] = []
            list.reserveCapacity(phases.count)
            var from = r.start
            for p in phases {
                list.append(Phase(parameters: p.parameters, classic: p.classic, start: from, end: p.end, radio: p.radio,
                                  phone: p.phone, peripheral: r.pricesPeripheral ? p.peripheral : nil))
                from = p.end
            }
            var link = Link(connection: r.connection, start: r.start, end: r.end, phases: list, modelled: r.modelled)
            link.heard = heard
            return link
        }
    }

    /// The report's links in the model's order: rows of the links priced when they were judged (`EnergyLinkRows`,
    /// read back from its spill) and of the others, priced at the capture's end. Each `Link` is made when it is read.
    public struct Links: RandomAccessCollection, Sendable {
        var judged = JudgedLinks.none
        var others = LinkTable()
        /// Per link in order: its place in `judged` (`first`) or its row in `others`. Nothing kept per judged link.
        var order = MergedOrder()
        /// By position: the Bluetooth Quality Reports about the link (few links have any).
        var qualityReports: [Int: [QualityReport]] = [:]
        /// The phone's cost of every link, summed in order; the peripherals' over the links that price them (nil:
        /// none does). Summed once when the report is made: the judged links are read back from a file.
        public internal(set) var phone = RadioCost.zero
        public internal(set) var peripheral: RadioCost?

        public init() {}

        public var startIndex: Int { 0 }
        public var endIndex: Int { order.count }

        public subscript(position: Int) -> Link {
            var link: Link
            switch order[position] {
            case .first(let k): link = judged.link(k)
            case .second(let row): link = others.link(row)
            }
            link.qualityReports = qualityReports[position] ?? []
            return link
        }
    }
}
