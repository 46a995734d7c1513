/// Escaping for text that comes off the air (device names, attribute values) and is shown between double
/// quotes, in text and in JSON alike. Any nearby device chooses these bytes, so every control character is
/// escaped — C0, DEL and C1 (U+0080–U+009F, which some terminals read as escape sequences) — and nothing it
/// sends can move the cursor or recolour a terminal.
public enum TextEscaping {
    /// C0 controls, DEL and C1 controls.
    @inlinable public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `"`, `\`, newline, return and tab as `\"`, `\\`, `\n`, `\r`, `\t`; other control characters as `\u00XX`
    /// (the JSON forms). Text without any of them is returned as is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || isControl($0) }) else { return text }
        var out = ""
        append(text, to: &out)
        return out
    }

    /// Appends `text` escaped as `escaped(_:)` does.
    public static func append(_ text: String, to out: inout String) {
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where isControl(c):
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
    }
}
