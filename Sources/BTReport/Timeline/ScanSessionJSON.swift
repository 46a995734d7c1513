import BTWire
import BTCapture
import BTDecode
import BTTrack

/// A scan session as JSON, shared by `timeline --json` and `devices --json`.
public enum ScanSessionJSON {
    public static func object(_ s: ScanSession) -> JSONValue {
        .object([
            ("controller", .int(Int(s.controller))),
            ("start", .number(s.start.timestamp.decimalString())),
            ("end", s.end.map { .number($0.timestamp.decimalString()) } ?? .null),
            ("filter_duplicates", .bool(s.filterDuplicates)),
            ("type", .string(s.isActive ? "active" : "passive")),
            ("interval_ms", .number(Format.ms(s.intervalMilliseconds))),
            ("window_ms", .number(Format.ms(s.windowMilliseconds))),
            ("reports", .int(s.reports)),
            ("unique_devices", .int(s.uniqueDevices)),
            ("extended", .bool(s.isExtended)),
            ("start_record", .int(s.start.number)),
        ])
    }
}
