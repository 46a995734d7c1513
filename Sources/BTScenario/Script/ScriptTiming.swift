/// How long things take in a generated capture, in microseconds. The ranges are typical of phone controllers
/// seen in real btsnoop logs; each delay is drawn from its range with the script's seeded generator.
public struct ScriptTiming: Sendable {
    /// Command sent → Command Complete / Command Status.
    public var commandLatency: ClosedRange<Int64> = 180...650
    /// Command Status → the event that completes the procedure, for procedures that take no air time.
    public var procedureLatency: ClosedRange<Int64> = 800...3_000
    /// Host reaction to something the controller reported (answering a request, the next request).
    public var hostReaction: ClosedRange<Int64> = 300...1_800
    /// Between two ACL fragments of one PDU from the same side.
    public var fragmentGap: ClosedRange<Int64> = 8...40
    /// Extra delay, on top of whole connection intervals, for anything that crosses the air.
    public var airJitter: ClosedRange<Int64> = 50...900

    public init() {}
}

/// Which end of the link sent something: the capturing host (`local`, HCI direction "sent") or the peer
/// device, whose packets reach the host through the controller (`remote`, "received").
public enum Side: Sendable, Equatable {
    case local
    case remote

    public var other: Side { self == .local ? .remote : .local }
}
