/// Sizes as people type them: "1G", "100M", "512K", "2MB", "1.5G", "4096". Binary multiples (1K = 1024),
/// as `dd` and most tools read them.
public enum ByteCount {
    static let suffixes: [(String, Int64)] = [
        ("KIB", 1 << 10), ("MIB", 1 << 20), ("GIB", 1 << 30), ("TIB", 1 << 40),
        ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("TB", 1 << 40),
        ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40), ("B", 1),
    ]
    /// Decimal digits kept after the point ("1.5G").
    static let maximumFractionDigits = 6

    /// The byte count `text` names, nil when it is not a size.
    public static func parse(_ text: String) -> Int64? {
        var t = text.trimmingCharacters(in: " ").uppercased()
        var multiplier: Int64 = 1
        for (suffix, value) in suffixes where t.hasSuffix(suffix) {
            t.removeLast(suffix.count)
            multiplier = value
            break
        }
        let parts = t.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int64(parts[0]), whole >= 0 else { return nil }
        var fraction: Int64 = 0
        var scale: Int64 = 1
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= maximumFractionDigits, let f = Int64(digits) else { return nil }
            fraction = f
            for _ in 0..<digits.count { scale *= 10 }
        }
        let (wholeBytes, overflow) = whole.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        return wholeBytes + fraction * multiplier / scale
    }

    /// "1.0 GiB", "100.0 MiB", "512 B".
    public static func describe(_ bytes: Int64) -> String {
        let units: [(String, Int64)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        for (name, size) in units where bytes >= size {
            let tenths = bytes * 10 / size
            return "\(tenths / 10).\(tenths % 10) \(name)"
        }
        return "\(bytes) B"
    }
}

extension String {
    /// Drops leading and trailing characters in `set` (no Foundation in the library).
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        var s = Substring(self)
        while let f = s.first, drop.contains(f) { s.removeFirst() }
        while let l = s.last, drop.contains(l) { s.removeLast() }
        return String(s)
    }
}
