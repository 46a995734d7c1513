/// Hex formatting for codes and payloads. Unknown wire values always print as hex, so nothing is hidden.
public enum Hex {
    @usableFromInline static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `0x` followed by exactly `width` lowercase digits.
    public static func format<T: BinaryInteger>(_ value: T, width: Int) -> String {
        var chars = [UInt8](repeating: UInt8(ascii: "0"), count: width + 2)
        chars[1] = UInt8(ascii: "x")
        var v = UInt64(truncatingIfNeeded: value)
        var i = width + 1
        while i >= 2 {
            chars[i] = digits[Int(v & 0xF)]
            v >>= 4
            i -= 1
        }
        return String(decoding: chars, as: UTF8.self)
    }

    public static func u8(_ v: UInt8) -> String { format(v, width: 2) }
    public static func u16(_ v: UInt16) -> String { format(v, width: 4) }

    /// Bytes as contiguous lowercase hex ("0a1b2c"), or with a separator.
    public static func string(_ bytes: UnsafeRawBufferPointer, separator: String = "", limit: Int = .max) -> String {
        var out = ""
        out.reserveCapacity(min(bytes.count, limit) * (2 + separator.utf8.count))
        for (i, b) in bytes.enumerated() {
            if i >= limit { out += "…"; break }
            if i > 0 && !separator.isEmpty { out += separator }
            out.unicodeScalars.append(UnicodeScalar(digits[Int(b >> 4)]))
            out.unicodeScalars.append(UnicodeScalar(digits[Int(b & 0xF)]))
        }
        return out
    }

    public static func string(_ bytes: [UInt8], separator: String = "", limit: Int = .max) -> String {
        bytes.withUnsafeBytes { string($0, separator: separator, limit: limit) }
    }

    /// Parses "0x1a" as hex and "26" as decimal, as Wireshark's filters do; anything else is nil. Reading "1a"
    /// as hex but "2042" as decimal would make a filter silently match the wrong value.
    public static func parse(_ text: String) -> UInt64? {
        let t = text.lowercased()
        if t.hasPrefix("0x") { return UInt64(t.dropFirst(2), radix: 16) }
        return UInt64(t, radix: 10)
    }

    /// Text if every byte is printable ASCII/UTF-8 and not empty, else nil.
    public static func printableText(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard !bytes.isEmpty else { return nil }
        var end = bytes.count
        while end > 0 && bytes[end - 1] == 0 { end -= 1 }  // trailing NULs are common padding
        guard end > 0 else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        for b in body where b < 0x20 || b == 0x7F {
            if b != 0x0A && b != 0x0D && b != 0x09 { return nil }
        }
        guard let s = String(validating: body, as: UTF8.self),
              !s.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) })  // C1 controls
        else { return nil }
        return s
    }
}
