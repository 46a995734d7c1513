import BTDecode
import BTWire


/// Decodes the values of simple, well-known characteristics (GATT Specification Supplement); anything else
/// prints as hex, plus text when printable.
public enum CharacteristicValue {
    public static func describe(_ value: [UInt8], uuid: BluetoothUUID?) -> String {
        if let uuid, let short = uuid.uuid16, let decoded = value.withUnsafeBytes({ decode(short, $0) }) { return decoded }
        return generic(value)
    }

    public static func generic(_ value: [UInt8]) -> String {
        let hex = Hex.string(value, separator: " ", limit: 32)
        if let text = value.withUnsafeBytes({ Hex.printableText($0) }), text.count >= 2 {
            return "\"" + TextEscaping.escaped(text) + "\" (" + hex + ")"
        }
        return hex.isEmpty ? "(empty)" : hex
    }

    static func decode(_ uuid: UInt16, _ v: UnsafeRawBufferPointer) -> String? {
        var r = ByteReader(v)
        switch uuid {
        case 0x2A00, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29:  // names and revision strings
            return "\"" + TextEscaping.escaped(String(decoding: v.prefix { $0 != 0 }, as: UTF8.self)) + "\""
        case 0x2A19:  // Battery Level
            return r.readU8().map { "\($0) %" }
        case 0x2A01:  // Appearance: category (10 bits) and subcategory (6 bits)
            return r.readU16().map(AssignedNumbers.appearanceDescription)
        case 0x2A07:  // Tx Power Level
            return r.readI8().map { "\($0) dBm" }
        case 0x2A37:  // Heart Rate Measurement: flags, bpm u8 or u16, energy, RR intervals (1/1024 s)
            guard let flags = r.readU8() else { return nil }
            guard let bpm = flags & 0x01 != 0 ? r.readU16() : r.readU8().map(UInt16.init) else { return nil }
            var out = "\(bpm) bpm"
            if flags & 0x06 == 0x06 { out += ", contact" } else if flags & 0x04 != 0 { out += ", no contact" }
            if flags & 0x08 != 0, let energy = r.readU16() { out += ", \(energy) kJ" }
            if flags & 0x10 != 0 {
                var rr: [String] = []
                while let interval = r.readU16() { rr.append("\(Int((Double(interval) * 1000 / 1024).rounded())) ms") }
                if !rr.isEmpty { out += ", RR " + rr.joined(separator: " ") }
            }
            return out
        case 0x2A38:  // Body Sensor Location
            let names = ["other", "chest", "wrist", "finger", "hand", "ear lobe", "foot"]
            return r.readU8().map { Int($0) < names.count ? names[Int($0)] : Hex.u8($0) }
        case 0x2A50:  // PnP ID: vendor ID source, vendor ID, product ID, product version
            guard let source = r.readU8(), let vendor = r.readU16(), let product = r.readU16(), let version = r.readU16()
            else { return nil }
            let vendorName = source == 1 ? CompanyID(rawValue: vendor).description : "USB vendor \(Hex.u16(vendor))"
            return "\(vendorName) product \(Hex.u16(product)) version \(Hex.u16(version))"
        case 0x2A04:  // Peripheral Preferred Connection Parameters
            guard let minI = r.readU16(), let maxI = r.readU16(), let latency = r.readU16(), let timeout = r.readU16()
            else { return nil }
            return ConnectionParameterRange(intervalMin: minI, intervalMax: maxI, latency: latency,
                                            supervisionTimeout: timeout).description
        case 0x2A05:  // Service Changed: affected handle range
            guard let start = r.readU16(), let end = r.readU16() else { return nil }
            return "\(Hex.u16(start))-\(Hex.u16(end))"
        case 0x2902:  // CCCD
            return r.readU16().map { $0 == 0 ? "off" : [$0 & 1 != 0 ? "notify" : nil, $0 & 2 != 0 ? "indicate" : nil].compactMap { $0 }.joined(separator: ",") }
        case 0x2A08, 0x2A0A, 0x2A2B:  // Date Time; Day Date Time and Current Time begin with one
            return dateTime(&r)
        case 0x2A06:  // Alert Level (a longer value is a vendor's own use of the characteristic)
            guard v.count == 1 else { return nil }
            let names = ["no alert", "mild alert", "high alert"]
            return Int(v[0]) < names.count ? names[Int(v[0])] : Hex.u8(v[0])
        case 0x2A1C:  // Temperature Measurement: flags (bit 0 Fahrenheit), IEEE 11073 FLOAT, …
            guard let flags = r.readU8(), let raw = r.readU32(), let t = float11073(raw) else { return nil }
            return t + (flags & 0x01 != 0 ? " °F" : " °C")
        case 0x2A6E:  // Temperature, 0.01 °C
            return r.read(Int16.self).map { Format.ms(Double($0) / 100) + " °C" }
        case 0x2A6F:  // Humidity, 0.01 %
            return r.readU16().map { Format.ms(Double($0) / 100) + " %" }
        default:
            return nil
        }
    }

    /// Date Time (GATT Specification Supplement §3.70): year u16 (0 unknown), month, day, hours, minutes,
    /// seconds; the device's local time, without a zone.
    static func dateTime(_ r: inout ByteReader) -> String? {
        guard let year = r.readU16(), let month = r.readU8(), let day = r.readU8(), let hours = r.readU8(),
              let minutes = r.readU8(), let seconds = r.readU8(), month <= 12, day <= 31, hours < 24, minutes < 60,
              seconds < 60
        else { return nil }
        func two(_ v: UInt8) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let date = (year == 0 ? "????" : "\(year)") + "-" + (month == 0 ? "??" : two(month)) + "-" + (day == 0 ? "??" : two(day))
        return "\(date) \(two(hours)):\(two(minutes)):\(two(seconds)) local"
    }

    /// IEEE 11073-20601 FLOAT: a 24-bit signed mantissa and an 8-bit signed exponent of ten; nil for the
    /// special values (NaN, NRes, ±infinity, reserved), which say no measurement.
    static func float11073(_ raw: UInt32) -> String? {
        let mantissa = Int32(bitPattern: raw << 8) >> 8
        let exponent = Int(Int8(truncatingIfNeeded: raw >> 24))
        if (0x7F_FFFE...0x80_0002).contains(raw & 0xFF_FFFF) { return nil }
        guard exponent <= 0 else { return "\(Int64(mantissa) * Int64(pow10(exponent)))" }
        let scale = pow10(-exponent)
        let sign = mantissa < 0 ? "-" : ""
        let magnitude = Int64(mantissa.magnitude)
        let fraction = String(magnitude % Int64(scale))
        return sign + "\(magnitude / Int64(scale))" + (exponent == 0 ? "" : "." + String(repeating: "0", count: -exponent - fraction.count) + fraction)
    }

    static func pow10(_ n: Int) -> Int { (0..<min(n, 18)).reduce(1) { r, _ in r * 10 } }
}
