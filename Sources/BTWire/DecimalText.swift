/// Decimal numbers as text, exactly and without Foundation: `v` rounded to at most `maximumFractionDigits`
/// decimals, trailing zeros dropped (0.625 → "0.625", 30.0 → "30", −0.5 → "-0.5"). Reports, JSON and decoded
/// fields all print numbers this way.
public enum DecimalText {
    public static func format(_ v: Double, maximumFractionDigits digits: Int) -> String {
        guard v.isFinite else { return String(v) }
        var scale: Int64 = 1
        for _ in 0..<max(0, min(digits, 9)) { scale *= 10 }
        let scaled = (v * Double(scale)).rounded()
        guard abs(scaled) < 9e18 else { return String(v) }
        let n = Int64(scaled)
        let magnitude = n.magnitude
        let whole = magnitude / UInt64(scale)
        var frac = String(magnitude % UInt64(scale))
        if scale > 1 {
            frac = String(repeating: "0", count: String(scale).count - 1 - frac.count) + frac
            while frac.hasSuffix("0") { frac.removeLast() }
        } else {
            frac = ""
        }
        return (n < 0 ? "-" : "") + String(whole) + (frac.isEmpty ? "" : "." + frac)
    }

    /// `v` with exactly `fractionDigits` decimals (at most 9): 3 → "3.0" for one digit, −0.25 → "-0.3".
    public static func fixed(_ v: Double, fractionDigits digits: Int) -> String {
        guard v.isFinite else { return String(v) }
        var scale: Int64 = 1
        for _ in 0..<max(0, min(digits, 9)) { scale *= 10 }
        let scaled = (v * Double(scale)).rounded()
        guard abs(scaled) < 9e18 else { return String(v) }
        let n = Int64(scaled)
        let magnitude = n.magnitude
        let frac = String(magnitude % UInt64(scale))
        let sign = n < 0 ? "-" : ""
        guard scale > 1 else { return sign + String(magnitude) }
        return sign + String(magnitude / UInt64(scale)) + "."
            + String(repeating: "0", count: String(scale).count - 1 - frac.count) + frac
    }
}
