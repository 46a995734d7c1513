import BTWire
import BTDecode

/// `decode`'s words for the LE events that change how often a link's radio wakes (Bluetooth 5.3–6.2):
/// subrating, connection rate (Shorter Connection Intervals), frame space, Channel Sounding procedures.
enum ConnectionRateDescription {
    static func describe(_ sub: LESubevent, _ p: UnsafeRawBufferPointer, fields: [DecodedField]) -> (String, [DecodedField])? {
        var fields = fields
        let status = HCIDescription.status
        switch sub {
        case .subrateChange, .connectionRateChange:
            guard let v = LESubrateChange(subevent: sub, p) else { return nil }
            var detail = "handle \(Hex.u16(v.handle))"
            if let fine = v.fineInterval {
                let ms = Double(fine) * 0.125
                detail += " interval \(Format.ms(ms)) ms"
                fields.append(DecodedField("interval", Format.ms(ms) + " ms"))
            }
            detail += " subrate ×\(v.subrateFactor) continuation \(v.continuationNumber) latency \(v.peripheralLatency)"
            if v.status != .success { detail += " status \(status(v.status))" }
            fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                       DecodedField("subrate factor", "\(v.subrateFactor)"),
                       DecodedField("continuation number", "\(v.continuationNumber)"),
                       DecodedField("latency", "\(v.peripheralLatency)"),
                       DecodedField("supervision timeout", Format.ms(HCIUnits.timeoutToMilliseconds(v.supervisionTimeout)) + " ms")]
            return (detail, fields)
        case .frameSpaceUpdateComplete:
            guard let v = LEFrameSpaceUpdateComplete(p) else { return nil }
            fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                       DecodedField("frame space", "\(v.frameSpaceMicroseconds) µs"), DecodedField("PHYs", Hex.u8(v.phys)),
                       DecodedField("spacing types", Hex.u16(v.spacingTypes))]
            return ("handle \(Hex.u16(v.handle)) frame space \(v.frameSpaceMicroseconds) µs status \(status(v.status))", fields)
        case .channelSoundingProcedureEnableComplete:
            guard let v = LEChannelSoundingProcedureEnable(p) else { return nil }
            fields += [DecodedField("status", status(v.status)), DecodedField("handle", Hex.u16(v.handle)),
                       DecodedField("state", v.state != 0 ? "enabled" : "disabled"),
                       DecodedField("subevent length", "\(v.subeventMicroseconds) µs"),
                       DecodedField("subevents per event", "\(v.subeventsPerEvent)"),
                       DecodedField("procedure count", "\(v.procedureCount)")]
            return ("handle \(Hex.u16(v.handle)) Channel Sounding \(v.state != 0 ? "enabled" : "disabled"), subevents of \(v.subeventMicroseconds) µs", fields)
        case .channelSoundingSubeventResult, .channelSoundingSubeventResultContinue:
            guard let handle = LEChannelSoundingSubeventResult.handle(p) else { return nil }
            fields.append(DecodedField("handle", Hex.u16(handle)))
            return ("handle \(Hex.u16(handle))", fields)
        default:
            return nil
        }
    }
}
