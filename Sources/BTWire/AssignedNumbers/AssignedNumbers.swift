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

    static let uuids: [UInt16: String] = [
        // Declarations and descriptors
        0x2800: "Primary Service", 0x2801: "Secondary Service", 0x2802: "Include", 0x2803: "Characteristic",
        0x2900: "Characteristic Extended Properties", 0x2901: "Characteristic User Description",
        0x2902: "Client Characteristic Configuration", 0x2903: "Server Characteristic Configuration",
        0x2904: "Characteristic Presentation Format", 0x2905: "Characteristic Aggregate Format",
        0x2906: "Valid Range", 0x2907: "External Report Reference", 0x2908: "Report Reference",
        0x290B: "Environmental Sensing Configuration", 0x290C: "Environmental Sensing Measurement",
        0x290D: "Environmental Sensing Trigger Setting",
        // Services
        0x1800: "Generic Access", 0x1801: "Generic Attribute", 0x1802: "Immediate Alert", 0x1803: "Link Loss",
        0x1804: "Tx Power", 0x1805: "Current Time", 0x1806: "Reference Time Update", 0x1807: "Next DST Change",
        0x1808: "Glucose", 0x1809: "Health Thermometer", 0x180A: "Device Information", 0x180D: "Heart Rate",
        0x180E: "Phone Alert Status", 0x180F: "Battery", 0x1810: "Blood Pressure", 0x1811: "Alert Notification",
        0x1812: "Human Interface Device", 0x1813: "Scan Parameters", 0x1814: "Running Speed and Cadence",
        0x1815: "Automation IO", 0x1816: "Cycling Speed and Cadence", 0x1818: "Cycling Power",
        0x1819: "Location and Navigation", 0x181A: "Environmental Sensing", 0x181B: "Body Composition",
        0x181C: "User Data", 0x181D: "Weight Scale", 0x181E: "Bond Management",
        0x181F: "Continuous Glucose Monitoring", 0x1820: "Internet Protocol Support", 0x1821: "Indoor Positioning",
        0x1822: "Pulse Oximeter", 0x1823: "HTTP Proxy", 0x1824: "Transport Discovery", 0x1825: "Object Transfer",
        0x1826: "Fitness Machine", 0x1827: "Mesh Provisioning", 0x1828: "Mesh Proxy",
        0x1829: "Reconnection Configuration", 0x183A: "Insulin Delivery", 0x183B: "Binary Sensor",
        0x183E: "Physical Activity Monitor", 0x1843: "Audio Input Control", 0x1844: "Volume Control",
        0x1845: "Volume Offset Control", 0x1846: "Coordinated Set Identification", 0x1848: "Media Control",
        0x1849: "Generic Media Control", 0x184E: "Audio Stream Control", 0x184F: "Broadcast Audio Scan",
        0x1850: "Published Audio Capabilities", 0x1851: "Basic Audio Announcement",
        0x1852: "Broadcast Audio Announcement", 0x1853: "Common Audio", 0x1854: "Hearing Access",
        0x1855: "Telephony and Media Audio",
        // Characteristics
        0x2A00: "Device Name", 0x2A01: "Appearance", 0x2A02: "Peripheral Privacy Flag",
        0x2A03: "Reconnection Address", 0x2A04: "Peripheral Preferred Connection Parameters",
        0x2A05: "Service Changed", 0x2A06: "Alert Level", 0x2A07: "Tx Power Level", 0x2A08: "Date Time",
        0x2A09: "Day of Week", 0x2A0A: "Day Date Time", 0x2A0C: "Exact Time 256", 0x2A0D: "DST Offset",
        0x2A0E: "Time Zone", 0x2A0F: "Local Time Information", 0x2A11: "Time with DST", 0x2A12: "Time Accuracy",
        0x2A13: "Time Source", 0x2A14: "Reference Time Information", 0x2A16: "Time Update Control Point",
        0x2A17: "Time Update State", 0x2A18: "Glucose Measurement", 0x2A19: "Battery Level",
        0x2A1C: "Temperature Measurement", 0x2A1D: "Temperature Type", 0x2A1E: "Intermediate Temperature",
        0x2A21: "Measurement Interval", 0x2A22: "Boot Keyboard Input Report", 0x2A23: "System ID",
        0x2A24: "Model Number String", 0x2A25: "Serial Number String", 0x2A26: "Firmware Revision String",
        0x2A27: "Hardware Revision String", 0x2A28: "Software Revision String",
        0x2A29: "Manufacturer Name String", 0x2A2A: "IEEE 11073-20601 Regulatory Certification Data List",
        0x2A2B: "Current Time", 0x2A31: "Scan Refresh", 0x2A32: "Boot Keyboard Output Report",
        0x2A33: "Boot Mouse Input Report", 0x2A34: "Glucose Measurement Context",
        0x2A35: "Blood Pressure Measurement", 0x2A36: "Intermediate Cuff Pressure",
        0x2A37: "Heart Rate Measurement", 0x2A38: "Body Sensor Location", 0x2A39: "Heart Rate Control Point",
        0x2A3F: "Alert Status", 0x2A40: "Ringer Control Point", 0x2A41: "Ringer Setting",
        0x2A42: "Alert Category ID Bit Mask", 0x2A43: "Alert Category ID", 0x2A44: "Alert Notification Control Point",
        0x2A45: "Unread Alert Status", 0x2A46: "New Alert", 0x2A47: "Supported New Alert Category",
        0x2A48: "Supported Unread Alert Category", 0x2A49: "Blood Pressure Feature", 0x2A4A: "HID Information",
        0x2A4B: "Report Map", 0x2A4C: "HID Control Point", 0x2A4D: "Report", 0x2A4E: "Protocol Mode",
        0x2A4F: "Scan Interval Window", 0x2A50: "PnP ID", 0x2A51: "Glucose Feature",
        0x2A52: "Record Access Control Point", 0x2A53: "RSC Measurement", 0x2A54: "RSC Feature",
        0x2A55: "SC Control Point", 0x2A5B: "CSC Measurement", 0x2A5C: "CSC Feature", 0x2A5D: "Sensor Location",
        0x2A63: "Cycling Power Measurement", 0x2A64: "Cycling Power Vector", 0x2A65: "Cycling Power Feature",
        0x2A66: "Cycling Power Control Point", 0x2A67: "Location and Speed", 0x2A68: "Navigation",
        0x2A6C: "Elevation", 0x2A6D: "Pressure", 0x2A6E: "Temperature", 0x2A6F: "Humidity",
        0x2A9D: "Weight Measurement", 0x2A9E: "Weight Scale Feature", 0x2AA6: "Central Address Resolution",
        0x2AC9: "Resolvable Private Address Only", 0x2ACC: "Fitness Machine Feature", 0x2ACD: "Treadmill Data",
        0x2AD2: "Indoor Bike Data", 0x2AD3: "Training Status", 0x2AD9: "Fitness Machine Control Point",
        0x2ADA: "Fitness Machine Status", 0x2B29: "Client Supported Features", 0x2B2A: "Database Hash",
        0x2B3A: "Server Supported Features",
        // Member UUIDs seen in advertising
        0xFD6F: "Exposure Notification", 0xFE2C: "Google Fast Pair", 0xFE95: "Xiaomi", 0xFE9F: "Google",
        0xFEAA: "Eddystone", 0xFEED: "Tile", 0xFE59: "Nordic DFU", 0xFEF3: "Google",
    ]

    static let companies: [UInt16: String] = [
        0x0000: "Ericsson", 0x0001: "Nokia", 0x0002: "Intel", 0x0003: "IBM", 0x0004: "Toshiba",
        0x0006: "Microsoft", 0x000A: "Qualcomm Technologies International", 0x000D: "Texas Instruments",
        0x000F: "Broadcom", 0x001D: "Qualcomm", 0x0030: "STMicroelectronics", 0x0046: "MediaTek",
        0x004C: "Apple", 0x0059: "Nordic Semiconductor", 0x005D: "Realtek", 0x0075: "Samsung Electronics",
        0x0087: "Garmin", 0x00D2: "Dialog Semiconductor", 0x00E0: "Google", 0x0131: "Cypress Semiconductor",
        0x0157: "Anhui Huami", 0x0171: "Amazon", 0x02E5: "Espressif", 0x038F: "Xiaomi",
        0x0499: "Ruuvi Innovations", 0xFFFF: "Reserved for testing",
    ]
}
