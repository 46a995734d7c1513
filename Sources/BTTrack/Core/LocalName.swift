import BTWire

/// The controller's Bluetooth name (Write Local Name / Read Local Name, Core Vol 4 Part E §7.3.11–7.3.12): what
/// the phone calls itself, often its model ("Pixel 7 Pro", "Galaxy S20 FE 5G"), which says which phone's power
/// profile would price it.
public enum LocalName {
    /// The name field: 248 octets of UTF-8, NUL-terminated when shorter.
    static let fieldLength = 248

    /// The name in `bytes` (the field, possibly cut short), nil when empty or not UTF-8.
    public static func decode<C: Collection<UInt8>>(_ bytes: C) -> String? {
        let field = bytes.prefix(fieldLength).prefix { $0 != 0 }
        guard !field.isEmpty, let name = String(validating: Array(field), as: UTF8.self) else { return nil }
        // Padding spaces some stacks leave are not part of the name.
        let trimmed = name.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}
