import BTWire
import BTCapture
import BTDecode

/// The documented `btlens stats --json` shape. Map keys are lowercase hex: 4 digits for command opcodes,
/// 2 for the rest.
public enum StatisticsJSON {
    public static func object(file: String, info: CaptureInfo, statistics s: CaptureStatistics) -> JSONValue {
        func table(_ t: [Int], width: Int) -> JSONValue {
            .object(CaptureStatistics.nonZero(t).map { (Hex.format($0.code, width: width), .int($0.count)) })
        }
        func time(_ t: Timestamp?) -> JSONValue {
            guard let t else { return .null }
            return .number(t.decimalString(fractionDigits: info.timestampDigits))
        }
        var acl: [(String, JSONValue)] = [("sent", .int(s.aclSent)), ("received", .int(s.aclReceived))]
        if s.aclUnknownDirection > 0 { acl.append(("unknown", .int(s.aclUnknownDirection))) }
        var fields: [(String, JSONValue)] = [
            ("file", .string(file)),
            ("format", .string(info.format.name)),
            ("linktype", info.format.linktype.map { .int($0) } ?? .null),
            ("records", .int(s.records)),
            ("first_timestamp", time(s.firstTimestamp)),
            ("last_timestamp", time(s.lastTimestamp)),
            ("hci", .object([
                ("commands", table(s.commands, width: 4)),
                ("events", table(s.events, width: 2)),
                ("le_subevents", table(s.leSubevents, width: 2)),
            ])),
            ("acl_packets", .object(acl)),
            ("controller_debug_log_packets", .int(s.controllerDebugLog)),
            ("advertising_reports", .int(s.advertisingReports)),
            ("connections", .int(s.connections)),
            ("disconnections", table(s.disconnections, width: 2)),
            ("att", table(s.att, width: 2)),
            ("malformed", .int(s.malformed)),
        ]
        if let l = info.format.linktype, info.format.isPcapFamily, Linktype.isLELinkLayer(l) {
            fields.append(("link_layer", linkLayer(s.linkLayer) { table($0, width: $1) }))
        }
        return .object(fields)
    }

    /// Air captures: the LE link layer counted as tshark counts it (docs/FORMATS.md, "Air captures").
    static func linkLayer(_ l: LinkLayerStatistics, table: ([Int], Int) -> JSONValue) -> JSONValue {
        .object([
            ("packets", .int(l.packets)),
            ("advertising_pdus", table(l.advertisingPDUs, 2)),
            ("connect_requests", .int(l.connectRequests)),
            ("crc_errors", .int(l.crcErrors)),
            ("crc_unchecked", .int(l.crcUnchecked)),
            ("data_pdus", .int(l.dataPDUs)),
            ("empty_pdus", .int(l.emptyPDUs)),
            ("retransmissions", .int(l.retransmissions)),
            ("encrypted_pdus", .int(l.encryptedPDUs)),
            ("isochronous_pdus", .int(l.isochronousPDUs)),
            ("data_access_addresses", .int(l.dataAccessAddresses.count)),
            ("control", table(l.control, 2)),
        ])
    }
}
