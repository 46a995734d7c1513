import BTWire
import BTCapture
import BTDecode

/// `btlens stats` for people: a short block per file.
public enum StatisticsText {
    public static func render(file: String, info: CaptureInfo, statistics s: CaptureStatistics,
                              notices: [String]) -> String {
        var lines: [String] = []
        lines.append("\(file)  \(info.format)")
        var span = ""
        if let first = s.firstTimestamp, let last = s.lastTimestamp {
            span = "  \(TimeFormat.utc(first)) → \(TimeFormat.utc(last)) UTC (\(TimeFormat.human(last - first)))"
        }
        lines.append(row("records", "\(s.records)" + span))
        let commandTotal = s.commands.reduce(0) { $0 + Int($1) }
        let eventTotal = s.events.reduce(0) { $0 + Int($1) }
        lines.append(row("HCI commands", "\(commandTotal)" + top(s.commands, width: 4) { HCIOpcode(rawValue: UInt16($0)).description }))
        lines.append(row("HCI events", "\(eventTotal)" + top(s.events, width: 2) { HCIEventCode(rawValue: UInt8($0)).description }))
        let leTotal = s.leSubevents.reduce(0) { $0 + Int($1) }
        if leTotal > 0 {
            lines.append(row("LE subevents", "\(leTotal)" + top(s.leSubevents, width: 2) { LESubevent(rawValue: UInt8($0)).description }))
        }
        var acl = "\(s.aclSent) sent, \(s.aclReceived) received"
        if s.aclUnknownDirection > 0 { acl += ", \(s.aclUnknownDirection) without direction" }
        if s.controllerDebugLog > 0 {
            acl += "; \(s.controllerDebugLog) of them the controller's debug log (Qualcomm, handle 0x0edc), not L2CAP"
        }
        lines.append(row("ACL packets", acl))
        lines.append(row("advertising reports", "\(s.advertisingReports)"))
        let disconnections = CaptureStatistics.nonZero(s.disconnections)
        let reasons = disconnections.map { "\(HCIStatus(rawValue: UInt8($0.code))) ×\($0.count)" }.joined(separator: ", ")
        lines.append(row("connections", "\(s.connections)"))
        lines.append(row("disconnections", "\(disconnections.reduce(0) { $0 + $1.count })" + (reasons.isEmpty ? "" : " (\(reasons))")))
        if let l = info.format.linktype, info.format.isPcapFamily, Linktype.isLELinkLayer(l) {
            lines += linkLayer(s.linkLayer)
        }
        let attTotal = s.att.reduce(0) { $0 + Int($1) }
        lines.append(row("ATT PDUs", "\(attTotal)" + top(s.att, width: 2) { ATTOpcode(rawValue: UInt8($0)).description }))
        let other = RecordKind.allCases.filter { !$0.isHCIPacket && s.recordsByKind[Int($0.rawValue)] > 0 }
        if !other.isEmpty {
            lines.append(row("other records", other.map { "\($0) ×\(s.recordsByKind[Int($0.rawValue)])" }.joined(separator: ", ")))
        }
        lines.append(row("malformed", "\(s.malformed)"))
        for n in notices { lines.append("  note: \(n)") }
        return lines.joined(separator: "\n")
    }

    /// Air captures: the LE link layer (the `link_layer` object of `--json`).
    static func linkLayer(_ l: LinkLayerStatistics) -> [String] {
        let advertising = l.advertisingPDUs.reduce(0, +)
        let control = l.control.reduce(0, +)
        let addresses = l.dataAccessAddresses.count
        var data = "\(l.dataPDUs) on \(addresses) access address\(addresses == 1 ? "" : "es") (\(l.emptyPDUs) empty, \(l.encryptedPDUs) encrypted), \(l.retransmissions) retransmissions"
        if l.isochronousPDUs > 0 { data += ", \(l.isochronousPDUs) isochronous" }
        var crc = "\(l.crcErrors) bad"
        if l.crcUnchecked > 0 { crc += ", \(l.crcUnchecked) not checkable" }
        return [
            row("LL advertising", "\(advertising)" + top(l.advertisingPDUs, width: 2) { LLAdvertisingPDUType(rawValue: UInt8($0)).description }),
            row("LL connect requests", "\(l.connectRequests)"),
            row("LL data PDUs", data),
            row("LL control PDUs", "\(control)" + top(l.control, width: 2) { LLControlOpcode(rawValue: UInt8($0)).description }),
            row("LL CRC", crc),
        ]
    }

    static func row(_ label: String, _ value: String) -> String {
        "  " + label + String(repeating: " ", count: max(1, 21 - label.count)) + value
    }

    static func top(_ table: [Int], width: Int, name: (Int) -> String) -> String {
        let entries = CaptureStatistics.nonZero(table).sorted { $0.count > $1.count || ($0.count == $1.count && $0.code < $1.code) }
        guard !entries.isEmpty else { return "" }
        let shown = entries.prefix(3).map { "\(name($0.code)) ×\($0.count)" }.joined(separator: ", ")
        return "  (\(entries.count) kinds; most: \(shown))"
    }
}
