/// Decimal numbers as text, exactly and without Foundation: `v` rounded to at most `maximumFractionDigits`
/// decimals, trailing zeros dropped (0.625 → "0.625", 30.0 → "30", −0.5 → "-0.5"). Reports, JSON and decoded
/// fields all print numbers this way.
public enum DecimalText {
    public static func format(_ v: Double, maximumFractionDigits digits: Int) -> String {
        guard let parts = rounded(v, fractionDigits: digits) else { return String(v) }
        var fraction = parts.fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return parts.sign + String(parts.whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// `v` with exactly `fractionDigits` decimals (at most 9): 3 → "3.0" for one digit, −0.25 → "-0.3".
    public static func fixed(_ v: Double, fractionDigits digits: Int) -> String {
        guard let parts = rounded(v, fractionDigits: digits) else { return String(v) }
        return parts.sign + String(parts.whole) + (parts.fraction.isEmpty ? "" : "." + parts.fraction)
    }

    /// `v` rounded to `digits` decimals (0 to 9) as sign, whole part and exactly `digits` fraction digits; nil
    /// when it is not finite or too large for 64-bit integer arithmetic (the caller prints it as Swift does).
    static func rounded(_ v: Double, fractionDigits: Int) -> (sign: String, whole: UInt64, fraction: String)? {
        guard v.isFinite else { return nil }
        let digits = max(0, min(fractionDigits, 9))
        var scale: UInt64 = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = (v * Double(scale)).rounded()
        guard abs(scaled) < 9e18 else { return nil }
        let n = Int64(scaled)
        let fraction = digits == 0 ? "" : String(n.magnitude % scale)
        return (n < 0 ? "-" : "", n.magnitude / scale,
                String(repeating: "0", count: digits - fraction.count) + fraction)
    }
}
