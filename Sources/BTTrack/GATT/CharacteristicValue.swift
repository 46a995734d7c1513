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
        case 0x2A6E:  // Temperature, 0.01 °C
            return r.read(Int16.self).map { Format.ms(Double($0) / 100) + " °C" }
        case 0x2A6F:  // Humidity, 0.01 %
            return r.readU16().map { Format.ms(Double($0) / 100) + " %" }
        default:
            return nil
        }
    }
}
