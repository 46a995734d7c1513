import BTWire
import BTCapture
import BTTrack

/// The JSON shape of one scan session, shared by `btlens devices` and `btlens timeline` so both print the
/// same keys. Times are exact Unix seconds; intervals in milliseconds.
///
/// Keys, in order: `controller`, `start`, `end` (null while still scanning), `end_reason` (`disabled`,
/// `timeout`, `duration_elapsed`, `restarted`, `reset`, or null), `start_record`, `end_record`, `type`
/// (`active` or `passive`), `extended`, `implicit_start`, `parameters_known`, `interval_ms`, `window_ms`,
/// `duty_cycle`, `phys` (per PHY: `phy`, `type`, `interval_ms`, `window_ms`),
/// `filter_duplicates` (boolean), `filter_duplicates_mode` (0 off, 1 on, 2 on + reset per period),
/// `filter_policy`, `duration_ms`, `period_ms`, `reports`, `scan_responses`, `late_reports`,
/// `unique_devices`, `unique_devices_estimated`, `reports_from_uncounted_devices`, `redundant_reports` (beyond
/// the first of each device and its first scan response), `offloaded_filters` (Android APCF filters were in the
/// controller),
/// `connections_while_scanning` (`[{time, record}]`), `top_devices` (up to `topDeviceCount`
/// `{address, address_type, reports}`, most reports first).
///
/// When the capture does not show the scan parameters (`phys` empty: an implicit session, or an extended
/// enable without parameters, or a legacy enable with none set in the capture), `interval_ms`, `window_ms` and
/// `duty_cycle` are null and `type` is `passive` unless a scan response proved the scan active;
/// `parameters_known` is false then.
public enum ScanSessionJSON {
    /// Devices listed per session in `top_devices`.
    public static let topDeviceCount = 10

    public static func object(_ s: ScanSession) -> JSONValue { object(s, timestampDigits: 6) }

    /// - Parameter timestampDigits: fraction digits of the capture's clock (`CaptureInfo.timestampDigits`).
    public static func object(_ s: ScanSession, timestampDigits digits: Int) -> JSONValue {
        let (before, after) = members(s, timestampDigits: digits)
        return .object(before + [("connections_while_scanning", .array(s.connectionsWhileScanning.map { .record($0, fractionDigits: digits) }))]
                       + after)
    }

    /// The same object written member by member, the connections that came up while scanning one at a time (a
    /// scan left on through a long capture lists hundreds of thousands).
    public static func write(_ s: ScanSession, timestampDigits digits: Int, to members: inout JSONStreamWriter.Members) {
        let (before, after) = self.members(s, timestampDigits: digits)
        for (key, value) in before { members.member(key, value) }
        members.array("connections_while_scanning", s.connectionsWhileScanning) { .record($0, fractionDigits: digits) }
        for (key, value) in after { members.member(key, value) }
    }

    /// The members before `connections_while_scanning` and after it.
    static func members(_ s: ScanSession, timestampDigits digits: Int) -> (before: [(String, JSONValue)], after: [(String, JSONValue)]) {
        ([
            ("controller", .int(Int(s.controller))),
            ("start", .unixTime(s.start.timestamp, fractionDigits: digits)),
            ("end", .unixTime(s.endTimestamp, fractionDigits: digits)),
            ("end_reason", s.endReason.map { .string($0.rawValue) } ?? .null),
            ("start_record", .int(s.start.number)),
            ("end_record", s.end.map { .int($0.number) } ?? .null),
            ("type", .string(s.isActive ? "active" : "passive")),
            ("extended", .bool(s.isExtended)),
            ("implicit_start", .bool(s.implicitStart)),
            ("parameters_known", .bool(s.parametersKnown)),
            ("interval_ms", s.parametersShown ? .decimal(s.intervalMilliseconds) : .null),
            ("window_ms", s.parametersShown ? .decimal(s.windowMilliseconds) : .null),
            ("duty_cycle", s.parametersShown ? .decimal(s.dutyCycle) : .null),
            ("phys", .array(s.phys.map { p in
                .object([
                    ("phy", .string(p.phyName)),
                    ("type", .string(p.isActive ? "active" : "passive")),
                    ("interval_ms", .decimal(p.intervalMilliseconds)),
                    ("window_ms", .decimal(p.windowMilliseconds)),
                ])
            })),
            ("filter_duplicates", .bool(s.filterDuplicates)),
            ("filter_duplicates_mode", .int(Int(s.filterDuplicatesMode))),
            ("filter_policy", .int(Int(s.filterPolicy))),
            ("duration_ms", s.durationMilliseconds.map { .decimal($0) } ?? .null),
            ("period_ms", s.periodMilliseconds.map { .decimal($0) } ?? .null),
            ("reports", .int(s.reports)),
            ("scan_responses", .int(s.scanResponses)),
            ("late_reports", .int(s.lateReports)),
            ("unique_devices", .int(s.uniqueDevices)),
            ("unique_devices_estimated", .bool(s.uniqueDevicesIsEstimate)),
            ("reports_from_uncounted_devices", .int(s.reportsFromUncountedDevices)),
            ("redundant_reports", .int(s.redundantReports)),
            ("offloaded_filters", .bool(s.offloadedFilters)),
        ], [
            ("top_devices", .array(s.reportsPerDevice.prefix(topDeviceCount).map { d in
                .object([
                    ("address", .string(d.address.description)),
                    ("address_type", .string(d.addressType.description)),
                    ("reports", .int(d.reports)),
                ])
            })),
        ])
    }
}
