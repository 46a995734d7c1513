import BTWire
import BTCapture
import BTDecode

/// Summaries of L2CAP payloads and advertising data, delegating to the protocol decoders.
enum ProtocolDescription {
    static func l2cap(_ pdu: L2CAPPDU) -> (String, [DecodedField]) {
        var fields = [DecodedField("handle", Hex.u16(pdu.handle)),
                      DecodedField("channel", "\(Hex.u16(pdu.channelID)) \(pdu.channel)"),
                      DecodedField("length", "\(pdu.payload.count)")]
        if pdu.fragments > 1 {
            fields.append(DecodedField("reassembled", "\(pdu.fragments) fragments from record \(pdu.firstRecord)"))
        }
        switch pdu.channel {
        case .att, .dynamicATT, .enhancedATT:
            guard let bytes = pdu.attPayload else { return ("ATT (empty)", fields) }
            let att = ATTPDU(bytes)
            return ("ATT " + att.summary, fields + att.fields)
        default:
            fields.append(DecodedField("payload", Hex.string(pdu.payload, separator: " ", limit: 64)))
            return ("L2CAP \(pdu.channel) \(Hex.u16(pdu.channelID)) \(pdu.payload.count) bytes", fields)
        }
    }

    static func advertisingSummary(_ data: UnsafeRawBufferPointer) -> String {
        data.isEmpty ? "" : "data \(Hex.string(data, limit: 16))"
    }

    static func advertisingFields(_ data: UnsafeRawBufferPointer) -> [DecodedField] {
        data.isEmpty ? [] : [DecodedField("data", Hex.string(data, separator: " "))]
    }
}
