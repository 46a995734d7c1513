import BTWire
import BTCapture
import BTDecode

/// Builds the advertiser table from advertising reports (legacy and extended), one `Advertiser` per
/// (address, address type).
///
/// This runs for every advertising report, which is most of a scanning capture, so the per-report path is
/// one lookup in a bounded open-addressing table, an update of one 64-byte `HotAdvertiser`, and a 64-bit
/// fingerprint of the data. The AD structures are parsed only when the fingerprint differs from the
/// advertiser's previous data of the same kind (advertisement or scan response, and PDU type). Nothing
/// allocates per report once the advertiser is known.
///
/// Limits (memory stays bounded on endless or address-rotating captures):
/// - `advertiserLimit` advertisers are kept, the first to be heard; later ones are only counted
///   (`overflow`: their reports, and an estimate of how many there were).
/// - RSSI is a 256-bin histogram per advertiser (1 KiB), which gives exact minimum, median and maximum.
/// - Chained extended reports are joined in at most 32 buffers of 1650 bytes (`ExtendedReportAssembler`).
/// - Lists per advertiser hold at most `Advertiser.listLimit` entries.
public struct AdvertiserTracker {
    /// Advertisers kept; see the type's documentation.
    public static let advertiserLimit = 4096

    /// Key → index into `hot` and `advertisers`.
    var table = KeyTable<DeviceKey>(limit: AdvertiserTracker.advertiserLimit)
    var hot: [HotAdvertiser] = []
    /// Everything else; the per-report fields are filled in from `hot` by `finish()`.
    var advertisers: [Advertiser] = []
    /// 256 bins per advertiser, indexed by the RSSI's bit pattern.
    var rssiBins: [UInt32] = []
    var assembler = ExtendedReportAssembler()
    var overflowReports = 0
    var overflowAdvertisers = DistinctEstimator()

    public init() {
        // Room for the first 64 advertisers' histograms without regrowing the 1 KiB-per-advertiser array.
        rssiBins.reserveCapacity(64 << 8)
    }

    /// Advertisers heard so far.
    public var count: Int { hot.count }

    /// Advertisers beyond `advertiserLimit`.
    public var overflow: AdvertiserOverflow {
        AdvertiserOverflow(reports: overflowReports, estimatedAdvertisers: overflowAdvertisers.estimate)
    }

    /// Chained extended advertisements dropped unfinished because more than 32 chains were in progress.
    public var abandonedChains: Int { assembler.abandoned }

    public mutating func advertisingReport(_ report: AdvertisingReport, at: RecordRef) {
        let key = DeviceKey(address: report.address, type: report.addressType)
        guard let found = table.findOrInsert(key, value: Int64(hot.count)) else {
            overflowReports += 1
            overflowAdvertisers.insert(key)
            return
        }
        let i = Int(truncatingIfNeeded: table.value(at: found.slot))
        if found.inserted { add(report, at: at) }
        // Legacy and extended reports of the same PDU kind share one code (ADV_IND = 0x13), so a device
        // heard by a legacy and then an extended scan keeps its fingerprints.
        let kind = AdvertisingEventTypes.properties(report) ?? 0xFFFF
        let scanResponse = report.isScanResponse
        // The complete data of this report: its own, or the chain it completes; none while a chain goes on.
        var joined: (data: [UInt8], overflowed: Bool)?
        var fingerprint: UInt64?
        var truncated = false
        if report.isExtended {
            let status = report.dataStatus
            truncated = status == 2
            if status == 1 {
                assembler.append(report, key: key, controller: at.controller)
            } else if !assembler.isEmpty, let chain = assembler.complete(report, key: key, controller: at.controller) {
                joined = chain
                truncated = truncated || chain.overflowed
                fingerprint = chain.data.withUnsafeBytes { DataFingerprint.of($0, eventType: kind) }
            } else {
                fingerprint = DataFingerprint.of(report.data, eventType: kind)
            }
        } else {
            fingerprint = DataFingerprint.of(report.data, eventType: kind)
        }
        let outcome = hot[i].count(report, kind: kind, scanResponse: scanResponse, fingerprint: fingerprint, at: at)
        if outcome.flushRSSI { flushRSSI(i) }
        if truncated { advertisers[i].truncatedAdvertisements += 1 }
        if let replaced = outcome.dataReplaced {
            if replaced { advertisers[i].dataChanges += 1 }
            if let joined {
                joined.data.withUnsafeBytes { advertisers[i].absorb($0) }
            } else {
                advertisers[i].absorb(report.data)
            }
        }
        if let joined { assembler.recycle(joined.data) }
    }

    mutating func add(_ report: AdvertisingReport, at: RecordRef) {
        hot.append(HotAdvertiser(at: at))
        advertisers.append(Advertiser(address: report.address, addressType: report.addressType, at: at))
        rssiBins.append(contentsOf: repeatElement(0, count: 256))
    }

    /// Moves the buffered RSSI samples of advertiser `i` into its histogram.
    mutating func flushRSSI(_ i: Int) {
        let samples = hot[i].rssiBuffer
        let count = Int(hot[i].rssiPending)
        hot[i].rssiBuffer = 0
        hot[i].rssiPending = 0
        let base = i << 8
        rssiBins.withUnsafeMutableBufferPointer { bins in
            for k in 0..<count { bins[base | Int((samples >> (8 * UInt64(k))) & 0xFF)] &+= 1 }
        }
    }

    /// Every advertiser, in the order first heard, with the per-report fields and RSSI statistics filled in.
    /// Changes nothing, so it can also serve a snapshot of a capture still being read (and be called again).
    public mutating func finish() -> [Advertiser] {
        var bins = [UInt32](repeating: 0, count: 256)
        return advertisers.indices.map { i in
            var a = advertisers[i]
            hot[i].fill(&a)
            // The histogram plus the samples still buffered in the hot record.
            for k in 0..<256 { bins[k] = rssiBins[i << 8 | k] }
            let pending = hot[i].rssiBuffer
            for k in 0..<Int(hot[i].rssiPending) { bins[Int((pending >> (8 * UInt64(k))) & 0xFF)] &+= 1 }
            a.rssi = Self.statistics(bins[...])
            return a
        }
    }

    /// Minimum, lower median and maximum of a 256-bin histogram indexed by the RSSI's bit pattern.
    static func statistics(_ bins: ArraySlice<UInt32>) -> RSSIStatistics? {
        let base = bins.startIndex
        var total = 0
        for n in bins { total &+= Int(n) }
        guard total > 0 else { return nil }
        var minimum: Int8?
        var median: Int8?
        var maximum: Int8 = 0
        var seen = 0
        let middle = (total - 1) / 2
        // Bit patterns 0x80…0xFF are −128…−1 and come first in signed order, then 0x00…0x7F.
        for k in 0..<256 {
            let pattern = (k + 128) & 0xFF
            let n = Int(bins[base + pattern])
            guard n > 0 else { continue }
            let rssi = Int8(truncatingIfNeeded: pattern)
            if minimum == nil { minimum = rssi }
            if median == nil && seen + n > middle { median = rssi }
            seen += n
            maximum = rssi
        }
        guard let minimum, let median else { return nil }
        return RSSIStatistics(minimum: minimum, median: median, maximum: maximum, samples: total)
    }
}
