import BTWire

/// A device on the air that a scan can see.
public struct SimulatedAdvertiser: Sendable {
    public enum Kind: Sendable {
        /// A legacy PDU (`LegacyReportType`: ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND).
        case legacy(UInt8)
        /// Extended advertising (`ExtendedReportType` bits, without legacy or data status), which only an
        /// extended scanner sees.
        case extended(eventType: UInt16, primaryPHY: UInt8, secondaryPHY: UInt8, sid: UInt8, txPower: Int8)
    }

    public var peer: PeerAddress
    public var kind: Kind
    public var data: AdvertisingData
    /// Sent to an active scanner's scan request (legacy scannable PDUs only).
    public var scanResponse: AdvertisingData?
    /// Advertising interval in microseconds (the 0–10 ms advDelay is added per event).
    public var interval: Int64
    public var rssi: Int8

    public init(peer: PeerAddress, kind: Kind, data: AdvertisingData, scanResponse: AdvertisingData? = nil,
                interval: Int64, rssi: Int8) {
        self.peer = peer
        self.kind = kind
        self.data = data
        self.scanResponse = scanResponse
        self.interval = interval
        self.rssi = rssi
    }
}

/// The advertising reports a running scan delivers, as background activity: every advertiser transmits on
/// its own interval (plus the random advDelay), each event is heard with the scan's duty cycle, scan
/// responses follow their advertisement when scanning is active, legacy reports that fall due together share
/// one event, and long extended data arrives in several reports. With duplicate filtering on, each
/// advertiser (and its scan response) is reported once.
public final class AdvertisingReportStream: BackgroundActivity {
    public enum Mode: Sendable {
        /// LE Advertising Report (0x02): extended advertisers are invisible.
        case legacy
        /// LE Extended Advertising Report (0x0D).
        case extended
    }

    let mode: Mode
    let active: Bool
    let filterDuplicates: Bool
    /// Percent of advertising events heard (scan window / interval).
    let dutyPercent: UInt64
    var rng: SplitMix64
    var advertisers: [SimulatedAdvertiser]
    var nextTime: [Int64]
    var paused: [Bool]
    var reported: Set<Int> = []
    var pending: [(time: Int64, event: HCIEvent)] = []

    /// Legacy reports due within this span of each other are delivered in one event, at most `maximumBatch`.
    static let batchWindow: Int64 = 4_000
    static let maximumBatch = 3
    /// advDelay (Core Vol 6 Part B §4.4.2.2): 0–10 ms added to every advertising event.
    static let advDelay: ClosedRange<Int64> = 0...10_000
    /// Scan response arrives after the scan request exchange on the same channel.
    static let scanResponseDelay: ClosedRange<Int64> = 400...900
    /// AUX_CHAIN_IND spacing for extended data fragments.
    static let chainDelay: ClosedRange<Int64> = 1_500...3_000
    static let rssiJitter: ClosedRange<Int> = -4...4
    /// Extended data is delivered in pieces the size of one AUX PDU payload.
    static let extendedFragmentLength = 200
    static let percent: UInt64 = 100

    public init(advertisers: [SimulatedAdvertiser], mode: Mode, active: Bool, filterDuplicates: Bool,
                scanInterval: UInt16, scanWindow: UInt16, startingAt start: Int64, seed: UInt64) {
        self.mode = mode
        self.active = active
        self.filterDuplicates = filterDuplicates
        self.dutyPercent = scanInterval == 0 ? Self.percent
            : min(Self.percent, UInt64(scanWindow) * Self.percent / UInt64(scanInterval))
        self.rng = SplitMix64(seed: seed)
        let visible = advertisers.filter { a in
            if case .extended = a.kind { return mode == .extended }
            return true
        }
        self.advertisers = visible
        self.paused = Array(repeating: false, count: visible.count)
        var first: [Int64] = []
        for a in visible { first.append(start + rng.int64(in: 0...max(0, a.interval))) }
        self.nextTime = first
    }

    /// Stops or resumes one advertiser (a peripheral stops advertising while it is connected).
    public func setAdvertising(_ peer: PeerAddress, _ on: Bool) {
        for i in advertisers.indices where advertisers[i].peer == peer { paused[i] = !on }
    }

    public var nextDue: Int64? {
        let scheduled = nextTime.indices.filter { !paused[$0] && !(filterDuplicates && done($0)) }.map { nextTime[$0] }.min()
        let queued = pending.first?.time
        switch (scheduled, queued) {
        case let (s?, q?): return min(s, q)
        case let (s?, nil): return s
        case let (nil, q?): return q
        default: return nil
        }
    }

    /// With duplicate filtering, an advertiser is done once its advertisement was reported.
    func done(_ i: Int) -> Bool { reported.contains(i) }

    public func fire(_ script: HCIScript) {
        let now = script.elapsed
        if let first = pending.first, first.time <= now {
            pending.removeFirst()
            script.emit(first.event)
            return
        }
        let due = nextTime.indices.filter { !paused[$0] && nextTime[$0] <= now && !(filterDuplicates && done($0)) }
        guard let i = due.first else {
            // Nothing due (a paused or finished advertiser): move every stale time past now.
            for j in nextTime.indices where nextTime[j] <= now { nextTime[j] = now + advertisers[j].interval }
            return
        }
        var batch = [i]
        if mode == .legacy {
            for j in nextTime.indices where j != i && batch.count < Self.maximumBatch && !paused[j]
                && nextTime[j] <= now + Self.batchWindow && !(filterDuplicates && done(j)) {
                if case .legacy = advertisers[j].kind { batch.append(j) }
            }
        }
        var heard: [Int] = []
        for j in batch {
            nextTime[j] = max(nextTime[j], now) + advertisers[j].interval + rng.int64(in: Self.advDelay)
            if rng.chance(dutyPercent, in: Self.percent) { heard.append(j) }
        }
        guard !heard.isEmpty else { return }
        emitReports(heard, script: script, now: now)
    }

    func rssi(_ a: SimulatedAdvertiser) -> Int8 {
        Int8(clamping: Int(a.rssi) + rng.int(in: Self.rssiJitter))
    }

    func emitReports(_ heard: [Int], script: HCIScript, now: Int64) {
        switch mode {
        case .legacy:
            var reports: [LegacyAdvertisingReport] = []
            for j in heard {
                let a = advertisers[j]
                guard case .legacy(let type) = a.kind else { continue }
                reports.append(LegacyAdvertisingReport(eventType: type, peer: a.peer, data: a.data, rssi: rssi(a)))
                reported.insert(j)
                if active, let response = a.scanResponse, type != LegacyReportType.nonconnInd {
                    let report = LegacyAdvertisingReport(eventType: LegacyReportType.scanResponse, peer: a.peer,
                                                         data: response, rssi: rssi(a))
                    enqueue(now + rng.int64(in: Self.scanResponseDelay), .leAdvertisingReport([report]))
                }
            }
            if !reports.isEmpty { script.emit(.leAdvertisingReport(reports)) }
        case .extended:
            for j in heard {
                let a = advertisers[j]
                reported.insert(j)
                switch a.kind {
                case .legacy(let type):
                    script.emit(.leExtendedAdvertisingReport([.legacy(Self.extendedType(legacy: type), peer: a.peer,
                                                                      data: a.data, rssi: rssi(a))]))
                    if active, let response = a.scanResponse, type != LegacyReportType.nonconnInd {
                        let report = ExtendedAdvertisingReport.legacy(ExtendedReportType.legacyScanResponseToAdvInd,
                                                                      peer: a.peer, data: response, rssi: rssi(a))
                        enqueue(now + rng.int64(in: Self.scanResponseDelay), .leExtendedAdvertisingReport([report]))
                    }
                case .extended(let eventType, let primary, let secondary, let sid, let txPower):
                    let reports = ExtendedAdvertisingReport.fragmented(
                        baseType: eventType, peer: a.peer, data: a.data.bytes, rssi: rssi(a), sid: sid,
                        primaryPHY: primary, secondaryPHY: secondary, txPower: txPower,
                        fragmentLength: Self.extendedFragmentLength)
                    var t = now
                    for (k, r) in reports.enumerated() {
                        if k == 0 {
                            script.emit(.leExtendedAdvertisingReport([r]))
                        } else {
                            t += rng.int64(in: Self.chainDelay)
                            enqueue(t, .leExtendedAdvertisingReport([r]))
                        }
                    }
                }
            }
        }
    }

    func enqueue(_ time: Int64, _ event: HCIEvent) {
        let at = pending.firstIndex { $0.time > time } ?? pending.count
        pending.insert((time, event), at: at)
    }

    /// The extended-report event type of a legacy PDU.
    static func extendedType(legacy type: UInt8) -> UInt16 {
        switch type {
        case LegacyReportType.advInd: ExtendedReportType.legacyAdvInd
        case LegacyReportType.scanInd: ExtendedReportType.legacyScanInd
        default: ExtendedReportType.legacyNonconnInd
        }
    }
}
