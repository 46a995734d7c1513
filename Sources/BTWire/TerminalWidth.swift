/// How many terminal columns text takes, for tables of names that come off the air. ASCII is a column per
/// byte; East Asian wide and fullwidth characters (a name like 小米手环) and emoji pictographs take two;
/// combining marks, zero-width characters and variation selectors none — as wcwidth(3) counts them, for the
/// blocks device names use.
public enum TerminalWidth {
    public static func of(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        return text.unicodeScalars.reduce(0) { $0 + columns($1) }
    }

    public static func columns(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.value {
        case 0x0300...0x036F, 0x200B...0x200F, 0x20D0...0x20FF, 0xFE00...0xFE0F: 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD: 2
        default: 1
        }
    }

    /// `text` cut to at most `width` columns, ending in "…" when it was longer; control characters (which
    /// would break a table's lines) shown as "·".
    public static func truncated(_ text: String, to width: Int) -> String {
        let cut = of(text) > width
        let room = cut ? width - 1 : width
        var out = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let shown: Unicode.Scalar = TextEscaping.isControl(scalar) ? "·" : scalar
            let w = columns(shown)
            if used + w > room { break }
            out.append(shown)
            used += w
        }
        if cut { out.append("…") }
        return String(out)
    }
}
