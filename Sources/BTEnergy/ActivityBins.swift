import BTCapture

/// The model's radio time and charge spread over the capture's time in bins: what the capture's total needs to
/// replace the model by the controller's counters over the intervals they cover (`PhoneTotal`) without keeping
/// every activity. Links judged before the capture ends are spread here and let go (`PricedPhases`), so the
/// bins are bounded by the capture's span, not its size: at most `maximumBins` (400 KB), each twice as wide
/// whenever a longer span would need more (4.5 hours at the first width, 16,384 × 2 s for 9 hours).
///
/// An activity spreads evenly over its span, as in the model's comparison with each interval: a bin that a
/// counters' read falls into is split by time. Controllers are not told apart (phones have one).
public struct ActivityBins: Sendable {
    /// One bin's time: the activities in the totals (scans, links, advertising) and the OS's BR/EDR background
    /// (page and inquiry scan, paging, inquiry), which the counters also hold but the totals leave out.
    public struct Bin: Sendable, Equatable {
        public var chargeMC = 0.0
        public var radioSeconds = 0.0
        public var backgroundRadioSeconds = 0.0

        public init(chargeMC: Double = 0, radioSeconds: Double = 0, backgroundRadioSeconds: Double = 0) {
            self.chargeMC = chargeMC
            self.radioSeconds = radioSeconds
            self.backgroundRadioSeconds = backgroundRadioSeconds
        }

        static func + (a: Bin, b: Bin) -> Bin {
            Bin(chargeMC: a.chargeMC + b.chargeMC, radioSeconds: a.radioSeconds + b.radioSeconds,
                backgroundRadioSeconds: a.backgroundRadioSeconds + b.backgroundRadioSeconds)
        }

        func scaled(_ k: Double) -> Bin {
            Bin(chargeMC: chargeMC * k, radioSeconds: radioSeconds * k, backgroundRadioSeconds: backgroundRadioSeconds * k)
        }
    }

    public static let maximumBins = 1 << 14
    /// 1 s: the counters' reads are tens of seconds to minutes apart, so the part of a bin a read splits off by
    /// time (rather than by the activities in it) is small beside an interval.
    static let firstWidth: Int64 = 1_000_000_000

    /// Nanoseconds per bin.
    public private(set) var width: Int64 = ActivityBins.firstWidth
    /// The first bin's index (its start over `width`).
    private var origin: Int64 = 0
    private var bins: [Bin] = []

    public init() {}

    /// Spreads `amount` evenly over `from`–`to` (ns).
    public mutating func spread(from: Int64, to: Int64, _ amount: Bin) {
        guard to > from, amount != Bin() else { return }
        cover(from: from, to: to)
        let span = Double(to - from)
        var index = Self.floorDiv(from, width)
        while index * width < to {
            let start = max(from, index * width), end = min(to, (index + 1) * width)
            bins[Int(index - origin)] = bins[Int(index - origin)] + amount.scaled(Double(end - start) / span)
            index += 1
        }
    }

    /// Spreads an activity's cost over its span: in the totals, or the OS's BR/EDR `background` (its radio time).
    public mutating func spread(_ start: Timestamp, _ end: Timestamp, _ cost: RadioCost, background: Bool = false) {
        spread(from: start.nanoseconds, to: end.nanoseconds,
               background ? Bin(backgroundRadioSeconds: cost.radioSeconds) : Bin(chargeMC: cost.chargeMC, radioSeconds: cost.radioSeconds))
    }

    /// What the bins hold from `from` to `to` (ns), a bin cut by them prorated by time.
    public func amount(from: Int64, to: Int64) -> Bin {
        guard to > from, !bins.isEmpty else { return Bin() }
        var total = Bin()
        let first = max(Self.floorDiv(from, width), origin), last = min(Self.floorDiv(to - 1, width), origin + Int64(bins.count) - 1)
        guard first <= last else { return Bin() }
        for index in first...last {
            let start = max(from, index * width), end = min(to, (index + 1) * width)
            total = total + bins[Int(index - origin)].scaled(Double(end - start) / Double(width))
        }
        return total
    }

    /// Adds `other`'s bins (made from the same capture) to these.
    public mutating func add(_ other: ActivityBins) {
        guard !other.bins.isEmpty else { return }
        var other = other
        while true {
            while other.width < width { other.coarsen() }
            while width < other.width { coarsen() }
            // Covering `other`'s span may widen these bins again: then `other`'s must follow.
            let before = width
            cover(from: other.origin * width, to: (other.origin + Int64(other.bins.count)) * width)
            if width == before { break }
        }
        for (i, b) in other.bins.enumerated() { bins[Int(other.origin - origin) + i] = bins[Int(other.origin - origin) + i] + b }
    }

    /// Grows the bins to hold `from`–`to`, widening them while that would take more than `maximumBins`.
    private mutating func cover(from: Int64, to: Int64) {
        if bins.isEmpty { origin = Self.floorDiv(from, width) }
        while true {
            let low = min(origin, Self.floorDiv(from, width))
            let high = max(origin + Int64(bins.count), Self.floorDiv(to - 1, width) + 1)
            if high - low <= Int64(Self.maximumBins) {
                if low < origin {
                    bins.insert(contentsOf: repeatElement(Bin(), count: Int(origin - low)), at: 0)
                    origin = low
                }
                if high > origin + Int64(bins.count) { bins.append(contentsOf: repeatElement(Bin(), count: Int(high - origin) - bins.count)) }
                return
            }
            coarsen()
        }
    }

    /// Doubles the width, each new bin the sum of two.
    private mutating func coarsen() {
        guard width <= Int64.max / 4 else { return }
        let newOrigin = Self.floorDiv(origin, 2)
        var merged = [Bin](repeating: Bin(), count: bins.isEmpty ? 0 : Int(Self.floorDiv(origin + Int64(bins.count) - 1, 2) - newOrigin) + 1)
        for (i, b) in bins.enumerated() {
            let j = Int(Self.floorDiv(origin + Int64(i), 2) - newOrigin)
            merged[j] = merged[j] + b
        }
        bins = merged
        origin = newOrigin
        width *= 2
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
