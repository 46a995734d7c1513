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
        return .object([
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
        ])
    }
}
