import BTWire
import BTCapture
import BTTrack

/// Numbers and times in report JSON, printed exactly (no binary-float noise such as 18.750000000000004).
extension JSONValue {
    /// `v` rounded to at most `maximumFractionDigits` decimals, trailing zeros dropped: 0.625 → "0.625",
    /// 30.0 → "30". Non-finite values become null.
    public static func decimal(_ v: Double, maximumFractionDigits digits: Int = 4) -> JSONValue {
        guard v.isFinite else { return .null }
        return .number(decimalText(v, maximumFractionDigits: digits))
    }

    /// The text of `decimal(_:maximumFractionDigits:)`, for text reports ("0.625", "30", "18.125").
    static func decimalText(_ v: Double, maximumFractionDigits digits: Int = 4) -> String {
        DecimalText.format(v, maximumFractionDigits: digits)
    }

    /// Exact Unix seconds, or null.
    public static func unixTime(_ t: Timestamp?, fractionDigits: Int) -> JSONValue {
        guard let t else { return .null }
        return .number(t.decimalString(fractionDigits: fractionDigits))
    }

    /// A record reference: `{"time": <Unix seconds>, "record": <1-based number>}`, or null.
    public static func record(_ r: RecordRef?, fractionDigits: Int) -> JSONValue {
        guard let r else { return .null }
        return .object([("time", unixTime(r.timestamp, fractionDigits: fractionDigits)), ("record", .int(r.number))])
    }
}
