import BTWire
import BTCapture
import BTDecode

/// One answered ATT request: what `btlens export --format perfetto` draws as a slice. Kept only when
/// `TrackerOptions.keptATTTransactions` asks (the other commands need the counts in `TransactionStatistics`).
public struct ATTTransaction: Sendable {
    public var request: ATTOpcode
    /// The attribute the request named, when it named one.
    public var handle: UInt16?
    public var requestAt: RecordRef
    public var responseAt: RecordRef
    /// The Error Response's code; nil when the request succeeded (Attribute Not Found ending a discovery is an
    /// error code here, as on the air).
    public var error: ATTErrorCode?
    /// Our host sent the request.
    public var byHost: Bool

    public var latency: Duration { responseAt.timestamp - requestAt.timestamp }
}
