/// How the bug report's local wall-clock times were put on the capture's clock (btsnoop times are UTC; the
/// report's are the phone's local time, without a zone).
public enum ClockBasis: Sendable, Equatable {
    /// By the report's time zone (`persist.sys.timezone` at the report's date); `patternAgrees` when the scans'
    /// pattern (their starts against the controller's) gives the same offset.
    case clock(offsetSeconds: Int64, patternAgrees: Bool)
    /// By the pattern of the scans' starts against the controller's: the time zone was unknown, or disagreed
    /// (a vendor's btsnooz summary written in local time rather than UTC). `clockOffsetSeconds`: the zone's.
    case pattern(offsetSeconds: Int64, clockOffsetSeconds: Int64?)
    /// Neither the zone nor any pattern places the report's times: nothing is matched by time.
    case none

    /// Local time minus capture time, in seconds.
    public var offsetSeconds: Int64? {
        switch self {
        case .clock(let o, _), .pattern(let o, _): o
        case .none: nil
        }
    }

    public var description: String {
        switch self {
        case .clock(let o, let agrees):
            "times matched by clock (the report's time zone, UTC\(Self.offsetText(o)))" + (agrees ? ", and the scans' pattern agrees" : "")
        case .pattern(let o, let clock?) where o == 0:
            "times matched by pattern: the capture's times are the phone's local time, not UTC (the time zone says UTC\(Self.offsetText(clock)))"
        case .pattern(let o, let clock?):
            "times matched by pattern (UTC\(Self.offsetText(o))), not by clock: the time zone says UTC\(Self.offsetText(clock))"
        case .pattern(let o, nil):
            "times matched by pattern (UTC\(Self.offsetText(o))); the report gives no time zone"
        case .none:
            "times not matched: the report gives no time zone and no scan's pattern matches the capture"
        }
    }

    public var method: String {
        switch self {
        case .clock: "clock"
        case .pattern: "pattern"
        case .none: "none"
        }
    }

    /// `+02:00`, `-05:30`, `+00:00`.
    public static func offsetText(_ seconds: Int64) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let m = abs(seconds) / 60
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return sign + two(m / 60) + ":" + two(m % 60)
    }
}
