import BTWire
import BTCapture
import BTDecode

/// What `btlens decode` prints for a record: a one-line summary and, with -v, the field tree.
public enum FrameDescription {
    public static func summary(_ frame: DecodedFrame) -> String {
        describe(frame, wantFields: false).0
    }

    public static func fields(_ frame: DecodedFrame) -> [DecodedField] {
        describe(frame, wantFields: true).1
    }

    static func describe(_ frame: DecodedFrame, wantFields: Bool) -> (String, [DecodedField]) {
        let record = frame.record
        guard let hci = frame.hci else {
            if let ll = frame.linkLayer { return LinkLayerDescription.describe(frame, ll) }
            return nonHCI(record)
        }
        switch hci {
        case .command(let c):
            let (detail, fields) = HCIDescription.command(c)
            return (join("HCI Command \(c.opcode) (\(Hex.u16(c.opcode.rawValue)))", detail), fields)
        case .event(let e):
            let (detail, fields) = HCIDescription.event(e, frame: frame)
            var head = "HCI Event \(e.code)"
            if let sub = e.subevent { head = "\(sub)" }
            var all = fields
            if let linked = frame.commandRecord { all.append(DecodedField("answers record", "\(linked)")) }
            return (join(head, detail), all)
        case .acl(let acl):
            var fields = [DecodedField("handle", Hex.u16(acl.handle)),
                          DecodedField("packet boundary", "\(acl.packetBoundary)"),
                          DecodedField("data length", "\(acl.declaredLength)")]
            if frame.isControllerDebugLog {
                fields.append(DecodedField("data", Hex.string(acl.data, separator: " ", limit: 64)))
                return ("Controller debug log (Qualcomm, ACL handle \(Hex.u16(acl.handle))) \(acl.data.count) bytes", fields)
            }
            if let pdu = frame.l2cap {
                let (summary, more) = ProtocolDescription.l2cap(pdu)
                fields += more
                return (summary, fields)
            }
            let state = acl.packetBoundary.isStart ? "start" : "continuation"
            return ("ACL handle \(Hex.u16(acl.handle)) \(state) \(acl.data.count) bytes" + (frame.isMalformed ? " (dropped)" : " (L2CAP continues)"), fields)
        case .sco(let sco):
            return ("SCO handle \(Hex.u16(sco.handle)) \(sco.data.count) bytes", [DecodedField("handle", Hex.u16(sco.handle))])
        case .iso(let iso):
            return ("ISO handle \(Hex.u16(iso.handle)) \(iso.data.count) bytes", [DecodedField("handle", Hex.u16(iso.handle))])
        }
    }

    static func join(_ head: String, _ detail: String) -> String { detail.isEmpty ? head : head + " " + detail }

    static func nonHCI(_ record: CaptureRecord) -> (String, [DecodedField]) {
        let p = record.payload
        switch record.kind {
        case .linkLayer:
            return ("Link-layer frame \(p.count) bytes (not decoded)", [DecodedField("data", Hex.string(p, separator: " ", limit: 64))])
        case .unknown:
            return ("Unknown record type \(Hex.format(record.sourceType, width: 2)) \(p.count) bytes", [DecodedField("data", Hex.string(p, separator: " ", limit: 64))])
        default:
            let note = NoteRecord(record)
            return (note.summary, note.fields)
        }
    }
}

