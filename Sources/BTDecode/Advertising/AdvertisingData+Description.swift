import BTWire

/// One line of the AD content (the report's RSSI and address are the caller's) and a field per structure.
extension AdvertisingDataView: PacketDescribing {
    /// e.g. `name "Polar H10" uuids 180d,180f`, `ibeacon … major 258 minor 772 power -59`; `empty` when there
    /// are no structures; ` malformed` is appended when a structure runs past the end.
    public var summary: String {
        var parts: [String] = []
        if let name = completeLocalName {
            parts.append("name \"" + TextEscaping.escaped(name) + "\"")
        } else if let name = shortenedLocalName {
            parts.append("short name \"" + TextEscaping.escaped(name) + "\"")
        }
        let uuids = serviceUUIDs
        if !uuids.isEmpty { parts.append("uuids " + uuids.map(\.description).joined(separator: ",")) }
        let solicited = solicitedServiceUUIDs
        if !solicited.isEmpty { parts.append("solicit " + solicited.map(\.description).joined(separator: ",")) }
        for service in serviceData {
            parts.append("svc data " + service.uuid.description + " len " + String(service.data.count))
        }
        for s in self {
            guard let m = s.manufacturerData else { continue }
            if let beacon = IBeacon(manufacturerSpecificData: s.data) {
                parts.append(beacon.description)
            } else {
                parts.append("mfr " + (m.company.name ?? Hex.u16(m.company.rawValue)) + " len " + String(m.data.count))
            }
        }
        if let tx = txPowerLevel { parts.append("tx " + String(tx) + " dBm") }
        if let appearance { parts.append("appearance " + Hex.u16(appearance)) }
        if parts.isEmpty, let flags { parts.append("flags " + flags.description) }
        var line = parts.isEmpty ? "empty" : parts.joined(separator: " ")
        if isMalformed { line += " malformed" }
        return line
    }

    /// A field per structure, named after its AD type, then `Malformed` when the walk stopped early.
    public var fields: [DecodedField] {
        var out = map(Self.field)
        if let m = malformation { out.append(DecodedField("Malformed", m.description)) }
        return out
    }

    static func field(_ s: Structure) -> DecodedField {
        let name = s.type.description
        let d = s.data
        if let size = s.uuidSize {
            var text = s.uuids.map(PDUFieldText.uuid).joined(separator: ", ")
            if text.isEmpty { text = "(empty)" }
            if d.count % size != 0 { text += " (+" + String(d.count % size) + " trailing bytes)" }
            return DecodedField(name, text)
        }
        if s.serviceDataUUIDSize != nil {
            guard let service = s.serviceData else { return DecodedField(name, PDUFieldText.hex(d) + " (too short for its UUID)") }
            return DecodedField(name, PDUFieldText.uuid(service.uuid) + " " + PDUFieldText.value(service.data))
        }
        if let m = s.manufacturerData {
            if let beacon = IBeacon(manufacturerSpecificData: d) {
                return DecodedField(name, m.company.description + " iBeacon", children: beacon.fields)
            }
            return DecodedField(name, m.company.description + " " + PDUFieldText.hex(m.data))
        }
        switch s.type {
        case .flags where d.count >= 1:
            return DecodedField(name, Hex.u8(d[0]) + " " + Flags(rawValue: d[0]).description)
        case .shortenedLocalName, .completeLocalName:
            return DecodedField(name, "\"" + TextEscaping.escaped(String(decoding: d, as: UTF8.self)) + "\"")
        case .txPowerLevel where d.count >= 1:
            return DecodedField(name, String(Int8(bitPattern: d[0])) + " dBm")
        case .appearance where d.count >= 2:
            return DecodedField(name, AssignedNumbers.appearanceDescription(UInt16(d[0]) | UInt16(d[1]) << 8))
        default:
            return DecodedField(name, PDUFieldText.value(d))
        }
    }
}
