/// Hex formatting for codes and payloads. Unknown wire values always print as hex, so nothing is hidden.
public enum Hex {
    @usableFromInline static let digits: [UInt8] = Array("0123456789abcdef".utf8)
    public static let upperDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
    public static var lowerDigits: [UInt8] { digits }

    /// `0x` followed by exactly `width` lowercase digits. Written as ASCII bytes in place: decode prints
    /// several per packet.
    public static func format<T: BinaryInteger>(_ value: T, width: Int) -> String {
        let width = max(0, width)
        return String(unsafeUninitializedCapacity: width + 2) { out in
            out[0] = UInt8(ascii: "0")
            out[1] = UInt8(ascii: "x")
            var v = UInt64(truncatingIfNeeded: value)
            var i = width + 1
            while i >= 2 {
                out[i] = digits[Int(v & 0xF)]
                v >>= 4
                i -= 1
            }
            return width + 2
        }
    }

    public static func u8(_ v: UInt8) -> String { format(v, width: 2) }
    public static func u16(_ v: UInt16) -> String { format(v, width: 4) }

    /// Bytes as contiguous lowercase hex ("0a1b2c"), or with a separator; past `limit` bytes, "…".
    public static func string(_ bytes: UnsafeRawBufferPointer, separator: String = "", limit: Int = .max) -> String {
        let shown = min(bytes.count, max(0, limit))
        let sep = Array(separator.utf8)
        let ellipsis = Array("…".utf8)
        let truncated = shown < bytes.count
        let capacity = shown * 2 + max(0, shown - 1) * sep.count + (truncated ? ellipsis.count : 0)
        return String(unsafeUninitializedCapacity: capacity) { out in
            var n = 0
            for i in 0..<shown {
                if i > 0 { for c in sep { out[n] = c; n += 1 } }
                let b = bytes[i]
                out[n] = digits[Int(b >> 4)]
                out[n + 1] = digits[Int(b & 0xF)]
                n += 2
            }
            if truncated { for c in ellipsis { out[n] = c; n += 1 } }
            return n
        }
    }

    public static func string(_ bytes: [UInt8], separator: String = "", limit: Int = .max) -> String {
        bytes.withUnsafeBytes { string($0, separator: separator, limit: limit) }
    }

    /// The bytes of contiguous hex digits as `string` writes them ("0a1b2c", either case); nil for anything else.
    public static func bytes<C: Collection>(_ hex: C) -> [UInt8]? where C.Element == UInt8 {
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        guard hex.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var i = hex.startIndex
        while i != hex.endIndex {
            let next = hex.index(after: i)
            guard let high = nibble(hex[i]), let low = nibble(hex[next]) else { return nil }
            out.append(high << 4 | low)
            i = hex.index(after: next)
        }
        return out
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
