/// Escaping for XML and HTML text and attribute values (JUnit, HTML reports). Control characters other than
/// newline and tab are not allowed in XML 1.0, so they become spaces.
enum MarkupEscaping {
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case let c where c.value < 0x20 && c != "\n" && c != "\t": out += " "
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}
