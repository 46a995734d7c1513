import BTCapture
import BTDecode

/// The tracking pipeline for `btlens devices`: `TrackingCollector`'s loop, also returning what the
/// advertiser table counted but did not keep (beyond `AdvertiserTracker.advertiserLimit`), which
/// `CaptureModel` does not carry.
public struct DeviceCollector: RecordSourceVisitor {
    public struct Result: Sendable {
        public var model: CaptureModel
        public var advertiserOverflow: AdvertiserOverflow
        /// Chained extended advertisements dropped unfinished (more than 32 chains in progress).
        public var abandonedChains: Int
    }

    public var options: TrackerOptions
    public var progress: ((Int64) -> Void)?

    public init(options: TrackerOptions = TrackerOptions(), progress: ((Int64) -> Void)? = nil) {
        self.options = options
        self.progress = progress
    }

    public mutating func visit<S: RecordSource>(_ source: S) throws -> Result {
        var decoder = PacketDecoder(issues: source.issues)
        let tracker = CaptureTracker(options: options)
        while let record = source.next() {
            tracker.observe(decoder.decode(record))
            if let progress, record.number & 0xFFFF == 0 { progress(record.offset) }
        }
        let model = tracker.finish()
        return Result(model: model, advertiserOverflow: tracker.advertisers.overflow,
                      abandonedChains: tracker.advertisers.abandonedChains)
    }
}
