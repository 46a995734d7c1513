import BTCapture

/// UTC calendar formatting without Foundation (days-from-civil, H. Hinnant's algorithm).
public enum TimeFormat {
    /// "2019-03-10 13:11:19.707800" (UTC), with `digits` fraction digits.
    public static func utc(_ t: Timestamp, digits: Int = 6) -> String {
        let ns = t.nanoseconds
        var seconds = ns / 1_000_000_000
        var fraction = ns % 1_000_000_000
        if fraction < 0 { fraction += 1_000_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        let clock = pad(Int(secondOfDay / 3600), 2) + ":" + pad(Int(secondOfDay / 60 % 60), 2) + ":"
            + pad(Int(secondOfDay % 60), 2)
        var frac = fraction
        for _ in digits..<9 { frac /= 10 }
        let fracText = digits > 0 ? "." + pad(Int(frac), digits) : ""
        return "\(pad(Int(y), 4))-\(pad(Int(m), 2))-\(pad(Int(d), 2)) \(clock)\(fracText)"
    }

    /// Seconds as "12.345678".
    public static func seconds(_ d: Duration, digits: Int = 6) -> String {
        let (s, atto) = d.components
        let negative = s < 0 || atto < 0
        // Whole seconds and nanoseconds apart (both components carry the sign): a corrupt capture's times can be
        // centuries apart, and their difference in nanoseconds would not fit an Int64.
        var frac = atto.magnitude / 1_000_000_000
        for _ in digits..<9 { frac /= 10 }
        return (negative ? "-" : "") + "\(s.magnitude)." + pad(Int(frac), digits)
    }

    /// A human duration: "16m 7s", "1h 2m", "850 ms".
    public static func human(_ d: Duration) -> String {
        let (s, atto) = d.components
        let ms = s * 1000 + atto / 1_000_000_000_000_000
        if ms < 1000 { return "\(ms) ms" }
        let total = ms / 1000
        if total < 60 { return "\(total).\(ms % 1000 / 100) s" }
        if total < 3600 { return "\(total / 60)m \(total % 60)s" }
        return "\(total / 3600)h \(total / 60 % 60)m"
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
