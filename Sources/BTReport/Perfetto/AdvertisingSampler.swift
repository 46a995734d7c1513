import BTWire
import BTCapture
import BTDecode

/// Advertising over time, for the Perfetto export's counters: the advertising reports the host received in each
/// second (per controller), and advertisers' RSSI, sampled from advertising reports (HCI) and advertising PDUs
/// heard on the air. Which advertisers matter (the peers the app connected to) is known only at the end, so every
/// advertiser is sampled, at most once per `minimumInterval`, within a fixed budget of samples. With a spill
/// directory the samples wait in a temporary file as they are taken (16 bytes each), and memory keeps a few words
/// per advertiser: `samples(of:_:)` sorts those of the advertisers drawn in sorted runs (`SortedRuns`). The report
/// counts take 16 bytes per second with reports.
public final class AdvertisingSampler {
    public struct Key: Hashable, Sendable {
        public var controller: UInt16
        public var address: BDAddr
    }

    public struct Sample: Sendable {
        public var nanoseconds: Int64
        public var dBm: Int8
    }

    /// One sample per advertiser per second is what a counter track can show over minutes to hours.
    public static let minimumInterval: Int64 = 1_000_000_000
    /// Samples kept in all: past this, advertisers are no longer sampled.
    public static let budget = 1_000_000
    /// Samples of the advertisers drawn sorted in memory at once before runs are set aside (24 bytes each).
    public static let defaultRunLength = 1 << 16

    /// Advertising reports received in one second (Unix time, whole seconds).
    public struct Second: Sendable {
        public var second: Int64
        public var reports: Int
    }

    /// What is known of one advertiser sampled: its number (its samples carry it), its last sample's time and how
    /// many it has.
    struct Sampled {
        var number: UInt32
        var last: Int64
        var count: Int
    }

    /// One sample as set aside: the advertiser's number (`Sampled.number`) with it.
    struct Entry {
        var nanoseconds: Int64
        var advertiser: UInt32
        var dBm: Int8
    }

    /// The seconds with reports of one controller, in the order seen: all but the latest set aside.
    struct Seconds {
        var setAside: PlainList<Second>
        var latest: Second
    }

    private var seconds: [UInt16: Seconds] = [:]
    private var sampled: [Key: Sampled] = [:]
    /// The samples in the order taken.
    private var entries: PlainList<Entry>
    private let spillDirectory: String?
    private let runLength: Int
    public var kept: Int { entries.count }
    /// Reports not sampled because the budget was spent.
    public private(set) var overBudget = 0

    /// `spillDirectory`: where the samples wait (an unlinked temporary file); nil keeps them in memory.
    /// `runLength`: samples sorted at once before a run is set aside there.
    public init(spillDirectory: String? = nil, runLength: Int = AdvertisingSampler.defaultRunLength) {
        self.spillDirectory = spillDirectory
        self.runLength = runLength
        entries = PlainList(directory: spillDirectory)
    }

    /// The advertisers sampled, with how many samples each has.
    public var advertisers: [(key: Key, samples: Int)] { sampled.map { ($0.key, $0.value.count) } }

    /// Hands over the samples of each advertiser of `keys` in turn, in the order of `keys`, each advertiser's in
    /// the order taken: `begin` before an advertiser's first. Advertisers not sampled are skipped.
    public func samples(of keys: [Key], begin: (Key) throws -> Void, _ body: (Sample) throws -> Void) throws {
        var rank: [UInt32: Int] = [:]
        for (i, key) in keys.enumerated() { if let s = sampled[key], rank[s.number] == nil { rank[s.number] = i } }
        guard !rank.isEmpty else { return }
        // (rank, order taken): every advertiser's samples together, in the order of `keys`.
        typealias Ranked = (rank: Int, sequence: Int, nanoseconds: Int64, dBm: Int8)
        let order: (Ranked, Ranked) -> Bool = { ($0.rank, $0.sequence) < ($1.rank, $1.sequence) }
        var runs = SortedRuns<Ranked>(directory: spillDirectory, runLength: runLength)
        for (sequence, e) in entries.enumerated() {
            if let r = rank[e.advertiser] { runs.append((r, sequence, e.nanoseconds, e.dBm)) { order } }
        }
        var current: Int?
        try runs.drain(by: order) { s in
            if s.rank != current {
                try begin(keys[s.rank])
                current = s.rank
            }
            try body(Sample(nanoseconds: s.nanoseconds, dBm: s.dBm))
        }
        if let failure = entries.failure ?? runs.failure {
            throw SpillError(path: spillDirectory ?? "", cause: failure)
        }
    }

    /// Samples the RSSI of the advertising reports or the advertising PDU in `frame`.
    public func observe(_ frame: DecodedFrame) {
        if case .event(let event)? = frame.hci, let sub = event.subevent,
           sub == .advertisingReport || sub == .extendedAdvertisingReport {
            var reports = AdvertisingReportIterator(subevent: sub, parameters: event.subeventParameters)
            var n = 0
            while let r = reports.next() {
                n += 1
                if let rssi = r.rssi { add(controller: frame.record.controller, address: r.address, rssi: rssi, at: frame.record.timestamp.nanoseconds) }
            }
            count(n, controller: frame.record.controller, at: frame.record.timestamp.nanoseconds)
        } else if frame.record.kind == .linkLayer, let ll = frame.linkLayer, let rssi = ll.packet.rssi,
                  let pdu = ll.advertising {
            // Only what the advertiser itself sent: a scan or connect request's RSSI is the other device's.
            switch pdu.body {
            case .advertising(let advA, _), .directed(let advA, _):
                add(controller: frame.record.controller, address: advA, rssi: rssi, at: frame.record.timestamp.nanoseconds)
            case .extended(let header):
                if let advA = header.advA { add(controller: frame.record.controller, address: advA, rssi: rssi, at: frame.record.timestamp.nanoseconds) }
            default:
                break
            }
        }
    }

    func count(_ reports: Int, controller: UInt16, at ns: Int64) {
        guard reports > 0 else { return }
        let second = ns >= 0 ? ns / 1_000_000_000 : (ns + 1) / 1_000_000_000 - 1
        guard var log = seconds[controller] else {
            seconds[controller] = Seconds(setAside: PlainList(directory: spillDirectory), latest: Second(second: second, reports: reports))
            return
        }
        if log.latest.second == second {
            log.latest.reports += reports
        } else {
            log.setAside.append(log.latest)
            log.latest = Second(second: second, reports: reports)
        }
        seconds[controller] = log
    }

    /// Hands over the seconds in which `controller`'s host received advertising reports, in the order seen.
    public func reportsPerSecond(of controller: UInt16, _ body: (Second) throws -> Void) throws {
        guard let log = seconds[controller] else { return }
        for s in log.setAside { try body(s) }
        if let failure = log.setAside.failure { throw SpillError(path: spillDirectory ?? "", cause: failure) }
        try body(log.latest)
    }

    func add(controller: UInt16, address: BDAddr, rssi: Int8, at ns: Int64) {
        let key = Key(controller: controller, address: address)
        let known = sampled[key]
        if let known, ns - known.last < Self.minimumInterval { return }
        guard kept < Self.budget else {
            overBudget += 1
            return
        }
        let number = known?.number ?? UInt32(sampled.count)
        sampled[key] = Sampled(number: number, last: ns, count: (known?.count ?? 0) + 1)
        entries.append(Entry(nanoseconds: ns, advertiser: number, dBm: rssi))
    }
}
