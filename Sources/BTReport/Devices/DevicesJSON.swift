import BTWire
import BTCapture
import BTDecode
import BTTrack

/// The documented `btlens devices --json` shape (Schemas/devices.schema.json):
/// `{"file", "format", "first_timestamp", "last_timestamp", "advertisers": […], "advertisers_not_kept": {…},
/// "scans": […], "own_advertising": […]}` with snake_case keys, addresses as "AA:BB:CC:DD:EE:FF", UUIDs as
/// strings (4 or 8 hex digits for Bluetooth SIG UUIDs, the full lowercase form otherwise), data as lowercase
/// hex, times as exact Unix seconds.
public enum DevicesJSON {
    public static func object(_ r: DevicesReport) -> JSONValue {
        let digits = r.info.timestampDigits
        return .object(head(r) + [
            ("advertisers", .array(r.advertisers.map { advertiser($0, digits: digits) })),
            ("advertisers_not_kept", notKept(r)),
            ("scans", .array(r.scans.map { ScanSessionJSON.object($0, timestampDigits: digits) })),
            ("own_advertising", .array(r.ownAdvertising.map { advertisingSession($0, digits: digits) })),
        ])
    }

    /// The same object written piece by piece at nesting `level` (`btlens devices --json`): an advertiser, a scan
    /// and each connection a scan saw come up at a time, so the report is never held whole.
    public static func write(_ r: DevicesReport, to writer: JSONStreamWriter, level: Int = 0) {
        let digits = r.info.timestampDigits
        writer.object(level: level) { members in
            for (key, value) in head(r) { members.member(key, value) }
            members.array("advertisers", r.advertisers) { advertiser($0, digits: digits) }
            members.member("advertisers_not_kept", notKept(r))
            members.objects("scans", r.scans) { s, scan in ScanSessionJSON.write(s, timestampDigits: digits, to: &scan) }
            members.array("own_advertising", r.ownAdvertising) { advertisingSession($0, digits: digits) }
        }
    }

    /// The members before `advertisers`.
    static func head(_ r: DevicesReport) -> [(String, JSONValue)] {
        let digits = r.info.timestampDigits
        return [
            ("file", .string(r.file)),
            ("format", .string(r.info.format.name)),
            ("first_timestamp", .unixTime(r.firstTimestamp, fractionDigits: digits)),
            ("last_timestamp", .unixTime(r.lastTimestamp, fractionDigits: digits)),
        ]
    }

    static func notKept(_ r: DevicesReport) -> JSONValue {
        .object([
            ("limit", .int(AdvertiserTracker.advertiserLimit)),
            ("reports", .int(r.advertiserOverflow.reports)),
            ("estimated_advertisers", .int(r.advertiserOverflow.estimatedAdvertisers)),
        ])
    }

    static func optionalInt<T: BinaryInteger>(_ v: T?) -> JSONValue { v.map { .int(Int($0)) } ?? .null }

    public static func advertiser(_ a: Advertiser, digits: Int) -> JSONValue {
        var o: [(String, JSONValue)] = []
        o.append(("address", .string(a.address.description)))
        o.append(("address_type", .string(a.addressType.description)))
        o.append(("name", a.name.map { .string($0) } ?? .null))
        o.append(("names", .array(a.names.map { .string($0) })))
        o.append(("reports", .int(a.reports)))
        o.append(("scan_responses", .int(a.scanResponses)))
        o.append(("rssi", a.rssi.map { s in
            .object([
                ("min", .int(Int(s.minimum))), ("median", .int(Int(s.median))), ("max", .int(Int(s.maximum))),
                ("samples", .int(s.samples)),
            ])
        } ?? .null))
        o.append(("first_seen", .unixTime(a.firstSeen.timestamp, fractionDigits: digits)))
        o.append(("last_seen", .unixTime(a.lastSeen.timestamp, fractionDigits: digits)))
        o.append(("first_record", .int(a.firstSeen.number)))
        o.append(("last_record", .int(a.lastSeen.number)))
        o.append(("connectable", .bool(a.isConnectable)))
        o.append(("extended", .bool(a.usesExtendedAdvertising)))
        o.append(("event_types", .array(a.eventTypes.names.map { .string($0) })))
        o.append(("flags", a.flags.map { .int(Int($0.rawValue)) } ?? .null))
        o.append(("tx_power", optionalInt(a.txPowerLevel)))
        o.append(("reported_tx_power", optionalInt(a.reportedTxPower)))
        o.append(("appearance", optionalInt(a.appearance)))
        o.append(("appearance_name", a.appearance.flatMap(AssignedNumbers.appearanceName).map { .string($0) } ?? .null))
        o.append(("service_uuids", .array(a.serviceUUIDs.map { .string($0.description) })))
        o.append(("service_data", .array(a.serviceData.map { d in
            .object([("uuid", .string(d.uuid.description)), ("data", .string(Hex.string(d.data)))])
        })))
        o.append(("manufacturer_data", .array(a.manufacturerData.map { m in
            .object([
                ("company_id", .int(Int(m.company.rawValue))),
                ("company", m.company.name.map { .string($0) } ?? .null),
                ("data", .string(Hex.string(m.data))),
            ])
        })))
        o.append(("ibeacon", a.iBeacon.map { b in
            .object([
                ("uuid", .string(b.proximityUUID.fullString)),
                ("major", .int(Int(b.major))),
                ("minor", .int(Int(b.minor))),
                ("measured_power", .int(Int(b.measuredPower))),
            ])
        } ?? .null))
        o.append(("data_changes", .int(a.dataChanges)))
        o.append(("truncated_advertisements", .int(a.truncatedAdvertisements)))
        o.append(("malformed_data", .bool(a.malformedData)))
        return .object(o)
    }

    public static func advertisingSession(_ s: AdvertisingSession, digits: Int) -> JSONValue {
        var o: [(String, JSONValue)] = []
        o.append(("controller", .int(Int(s.controller))))
        o.append(("set", .int(Int(s.setHandle))))
        o.append(("extended", .bool(s.isExtended)))
        o.append(("start", .unixTime(s.start.timestamp, fractionDigits: digits)))
        o.append(("end", .unixTime(s.end?.timestamp, fractionDigits: digits)))
        o.append(("end_reason", s.endReason.map { .string($0.name) } ?? .null))
        o.append(("start_record", .int(s.start.number)))
        o.append(("end_record", s.end.map { .int($0.number) } ?? .null))
        o.append(("type", .string(s.typeName)))
        o.append(("connectable", .bool(s.isConnectable)))
        o.append(("scannable", .bool(s.isScannable)))
        o.append(("parameters_known", .bool(s.parametersKnown)))
        o.append(("interval_min_ms", s.intervalMinimumMilliseconds.map { .decimal($0) } ?? .null))
        o.append(("interval_max_ms", s.intervalMaximumMilliseconds.map { .decimal($0) } ?? .null))
        o.append(("name", s.localName.map { .string($0) } ?? .null))
        o.append(("service_uuids", .array(s.serviceUUIDs.map { .string($0.description) })))
        o.append(("advertising_data", .string(Hex.string(s.advertisingData))))
        o.append(("scan_response_data", .string(Hex.string(s.scanResponseData))))
        o.append(("duration_ms", s.durationMilliseconds.map { .decimal($0) } ?? .null))
        o.append(("max_events", optionalInt(s.maximumEvents)))
        o.append(("completed_events", optionalInt(s.completedEvents)))
        o.append(("connections_while_advertising", .array(s.connectionsWhileAdvertising.map { .record($0, fractionDigits: digits) })))
        o.append(("ended_by_connection", .record(s.endedByConnection, fractionDigits: digits)))
        o.append(("resumed_after_connection", .record(s.resumedAfterConnection, fractionDigits: digits)))
        return .object(o)
    }
}
