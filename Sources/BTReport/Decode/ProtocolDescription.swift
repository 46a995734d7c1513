import BTWire
import BTCapture
import BTDecode

/// Summaries of L2CAP payloads and advertising data, delegating to the protocol decoders.
enum ProtocolDescription {
    static func l2cap(_ pdu: L2CAPPDU) -> (String, [DecodedField]) {
        var fields = [DecodedField("L2CAP channel", "\(Hex.u16(pdu.channelID)) \(pdu.channel)"),
                      DecodedField("L2CAP length", "\(pdu.payload.count)")]
        if pdu.fragments > 1 {
            fields.append(DecodedField("reassembled", "\(pdu.fragments) fragments from record \(pdu.firstRecord)"))
        }
        switch pdu.channel {
        case .att, .dynamicATT, .enhancedATT:
            if pdu.channel == .enhancedATT {
                guard pdu.sdu != nil else {
                    fields.append(DecodedField("payload", Hex.string(pdu.payload, separator: " ", limit: 64)))
                    return ("EATT K-frame \(pdu.payload.count) bytes (part of an SDU)", fields)
                }
                if pdu.kFrames > 1 { fields.append(DecodedField("SDU", "reassembled from \(pdu.kFrames) K-frames")) }
            }
            guard let bytes = pdu.attPayload else { return ("ATT (empty)", fields) }
            let att = ATTPDU(bytes)
            let prefix = pdu.channel == .enhancedATT ? "EATT " : "ATT "
            return (prefix + att.summary, fields + att.fields)
        case .smp, .brEdrSMP:
            let smp = SMPPDU(pdu.payload)
            return ("SMP " + smp.summary, fields + smp.fields)
        case .leSignaling:
            let signal = L2CAPSignal(pdu.payload)
            return ("L2CAP " + signal.summary, fields + signal.fields)
        case .brEdrSignaling:
            let commands = Array(L2CAPSignal.commands(in: pdu.payload))
            let summary = commands.map(\.summary).joined(separator: "; ")
            return ("L2CAP " + (summary.isEmpty ? "signaling (empty)" : summary), fields + commands.flatMap(\.fields))
        default:
            fields.append(DecodedField("payload", Hex.string(pdu.payload, separator: " ", limit: 64)))
            return ("L2CAP \(pdu.channel) \(Hex.u16(pdu.channelID)) \(pdu.payload.count) bytes", fields)
        }
    }

    static func advertisingSummary(_ data: UnsafeRawBufferPointer) -> String {
        data.isEmpty ? "" : AdvertisingDataView(data).summary
    }

    static func advertisingFields(_ data: UnsafeRawBufferPointer) -> [DecodedField] {
        data.isEmpty ? [] : AdvertisingDataView(data).fields
    }
}
