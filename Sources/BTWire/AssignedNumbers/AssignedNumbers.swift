/// Bluetooth SIG assigned numbers btlens names things with: 16-bit UUIDs (GATT declarations, descriptors,
/// services, characteristics, units, SDP service classes, member UUIDs) and company identifiers. The SIG's
/// full lists (`SIGTables.swift`, generated) are looked up after the short names below, which read better in
/// tables ("Apple" rather than "Apple, Inc.") and name member UUIDs by what they are used for.
public enum AssignedNumbers {
    public static func uuidName(_ uuid16: UInt16) -> String? { uuids[uuid16] ?? sigUUIDs[uuid16] }
    public static func companyName(_ id: UInt16) -> String? { companies[id] ?? sigCompanies[id] }

    /// Parsed on first use: a dictionary literal of this size would cost the compiler minutes.
    static let sigUUIDs = parse(uuidText)
    static let sigCompanies = parse(companyText)
    static let appearances = parse(appearanceText)

    /// The name of an Appearance value (GAP, Assigned Numbers §2.6): category in bits 6–15, subcategory in 0–5.
    /// A subcategory the list does not name falls back to its category's generic name.
    public static func appearanceName(_ value: UInt16) -> String? {
        appearances[value] ?? appearances[value & ~0x3F].map { $0 + " (subcategory \(value & 0x3F))" }
    }

    /// `0x03c1 Sports Watch`, or `0x1234 category 72 subcategory 52` when the list has no name for it.
    public static func appearanceDescription(_ value: UInt16) -> String {
        Hex.u16(value) + " " + (appearanceName(value) ?? "category \(value >> 6) subcategory \(value & 0x3F)")
    }

    /// Lines of four hex digits, a tab and a name.
    static func parse(_ text: String) -> [UInt16: String] {
        var table: [UInt16: String] = [:]
        for line in text.split(separator: "\n") {
            guard let tab = line.firstIndex(of: "\t"), let value = UInt16(line[..<tab], radix: 16) else { continue }
            table[value] = String(line[line.index(after: tab)...])
        }
        return table
    }

    /// Where the SIG's list names the company behind a member UUID, the name of what it is used for.
    static let uuids: [UInt16: String] = [
        0xFD6F: "Exposure Notification", 0xFE2C: "Google Fast Pair", 0xFE95: "Xiaomi", 0xFE9F: "Google",
        0xFEAA: "Eddystone", 0xFEED: "Tile", 0xFE59: "Nordic DFU", 0xFEF3: "Google",
    ]

    /// Short forms of the SIG's company names ("Apple, Inc."), for the names advertising shows most.
    static let companies: [UInt16: String] = [
        0x0000: "Ericsson", 0x0001: "Nokia", 0x0002: "Intel", 0x0003: "IBM", 0x0004: "Toshiba",
        0x000A: "Qualcomm Technologies International", 0x001D: "Qualcomm", 0x000D: "Texas Instruments", 0x000F: "Broadcom",
        0x0030: "STMicroelectronics", 0x0046: "MediaTek", 0x004C: "Apple", 0x0059: "Nordic Semiconductor",
        0x005D: "Realtek", 0x0075: "Samsung Electronics", 0x0087: "Garmin", 0x00D2: "Dialog Semiconductor",
        0x0157: "Anhui Huami", 0x0171: "Amazon", 0x02E5: "Espressif", 0x038F: "Xiaomi",
        0x0499: "Ruuvi Innovations", 0xFFFF: "Reserved for testing",
    ]
}
