import BTWire
import BTCapture
import BTDecode
import BTTrack

/// `btlens devices` for people: a table of advertisers (most reports first), then the scan sessions and our
/// own advertising sessions. Times are seconds since the capture's first record.
public enum DevicesText {
    /// Connections that came up during a scan shown by their time; the rest are counted. `btlens devices` keeps
    /// no more of them (`TrackerOptions.connectionsWhileScanningListed`).
    public static let connectionsShown = 3

    /// Names longer than this are cut with "…" so the table stays readable.
    static let nameWidth = 24
    /// Service UUIDs shown per advertiser before "+N".
    static let uuidsShown = 3

    public static func render(_ r: DevicesReport) -> String {
        var lines: [String] = []
        write(r) { lines.append($0) }
        return lines.joined(separator: "\n")
    }

    /// The report line by line (each without its newline), as it is made: the scans of a long capture are read one
    /// at a time (twice: for the table's widths, then for its lines), never gathered.
    public static func write(_ r: DevicesReport, line out: (String) -> Void) {
        let origin = r.firstTimestamp
        func at(_ t: Timestamp?) -> String {
            guard let t, let origin else { return "-" }
            return "+" + TimeFormat.seconds(t - origin, digits: 3) + "s"
        }

        var header = "\(r.file)  \(r.info.format)  \(Plural.of(r.advertisers.count, "advertiser"))"
        if let first = r.firstTimestamp { header += "  from \(TimeFormat.utc(first)) UTC" }
        out(header)

        if r.advertisers.isEmpty {
            out("  no advertising reports")
        } else {
            var table = TextTable([("ADDRESS", .left), ("TYPE", .left), ("NAME", .left), ("RSSI min/med/max", .right),
                                   ("REPORTS", .right), ("FIRST", .right), ("LAST", .right), ("DETAILS", .left)])
            for a in r.advertisers {
                table.add([a.address.description, a.addressType.description, shortName(a.name), rssi(a.rssi),
                           String(a.reports), at(a.firstSeen.timestamp), at(a.lastSeen.timestamp), details(a)])
            }
            for line in table.render() { out(line) }
        }
        if r.advertiserOverflow.reports > 0 {
            out("  … about \(r.advertiserOverflow.estimatedAdvertisers) more advertisers not kept "
                + "(limit \(AdvertiserTracker.advertiserLimit)), \(Plural.of(r.advertiserOverflow.reports, "report"))")
        }

        out("")
        out("Scans")
        if r.scans.isEmpty {
            out("  no scan sessions")
        } else {
            let table = TextTable([("#", .right), ("START", .right), ("END", .left), ("KIND", .left),
                                   ("INTERVAL/WINDOW", .left), ("DUTY", .right), ("DUP-FILTER", .left),
                                   ("REPORTS", .right), ("DEVICES", .right), ("CONNECTIONS WHILE ON", .left)])
            table.write(rows: r.scans.count, row: { i in
                let s = r.scans[i]
                let end = s.end == nil ? "still on" : at(s.endTimestamp) + " " + (s.endReason?.rawValue ?? "")
                let connections = s.connectionsWhileScanningCount == 0 ? "-"
                    : "\(s.connectionsWhileScanningCount) (" + s.connectionsWhileScanning.prefix(Self.connectionsShown).map { at($0.timestamp) }
                        .joined(separator: ", ") + (s.connectionsWhileScanningCount > Self.connectionsShown ? ", …" : "") + ")"
                return [String(i + 1), at(s.start.timestamp), end, scanKind(s), scanTiming(s),
                        s.phys.isEmpty ? "-" : percent(s.dutyCycle), duplicateFilter(s), String(s.reports),
                        (s.uniqueDevicesIsEstimate ? "~" : "") + String(s.uniqueDevices), connections]
            }, to: out)
        }

        out("")
        out("Own advertising")
        if r.ownAdvertising.isEmpty {
            out("  no advertising sessions")
        } else {
            let table = TextTable([("#", .right), ("SET", .left), ("START", .right), ("END", .left), ("TYPE", .left),
                                   ("INTERVAL", .left), ("NAME", .left), ("CONNECTIONS", .right), ("NOTE", .left)])
            table.write(rows: r.ownAdvertising.count, row: { i in
                let s = r.ownAdvertising[i]
                let end = s.end == nil ? "still on" : at(s.end?.timestamp) + " " + (s.endReason?.name ?? "")
                let note = s.resumedAfterConnection.map { "re-enabled after the connection at " + at($0.timestamp) } ?? ""
                return [String(i + 1), s.isExtended ? "ext \(s.setHandle)" : "legacy", at(s.start.timestamp), end,
                        s.typeName, advertisingInterval(s), shortName(s.localName),
                        String(s.connectionsWhileAdvertising.count), note]
            }, to: out)
        }
    }

    /// Milliseconds exactly (scan and advertising intervals are multiples of 0.625 ms).
    static func ms(_ v: Double) -> String { JSONValue.decimalText(v) }

    static func shortName(_ name: String?) -> String {
        guard let name, !name.isEmpty else { return "-" }
        // Most names are short printable ASCII: no copy needed.
        if name.utf8.count <= nameWidth && name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return name }
        return TerminalWidth.truncated(name, to: nameWidth)
    }

    static func rssi(_ s: RSSIStatistics?) -> String {
        guard let s else { return "-" }
        return "\(s.minimum)/\(s.median)/\(s.maximum)"
    }

    static func percent(_ ratio: Double) -> String { JSONValue.decimalText(ratio * 100, maximumFractionDigits: 1) + "%" }

    /// iBeacon, service UUIDs, service data UUIDs, manufacturer companies, "ext" for extended advertising.
    static func details(_ a: Advertiser) -> String {
        var parts: [String] = []
        if let b = a.iBeacon {
            parts.append("iBeacon \(b.proximityUUID.fullString) \(b.major)/\(b.minor)")
        }
        if !a.serviceUUIDs.isEmpty {
            let shown = a.serviceUUIDs.prefix(uuidsShown).map(\.description).joined(separator: ",")
            parts.append("uuids " + shown + (a.serviceUUIDs.count > uuidsShown ? ",+\(a.serviceUUIDs.count - uuidsShown)" : ""))
        }
        if !a.serviceData.isEmpty {
            parts.append("svc-data " + a.serviceData.map(\.uuid.description).joined(separator: ","))
        }
        let companies = a.manufacturerData.filter { !(a.iBeacon != nil && $0.company == .apple && $0.data.first == IBeacon.type) }
        if !companies.isEmpty {
            parts.append("mfr " + companies.map { $0.company.name ?? Hex.u16($0.company.rawValue) }.joined(separator: ","))
        }
        if let appearance = a.appearance { parts.append(AssignedNumbers.appearanceName(appearance) ?? "appearance " + Hex.u16(appearance)) }
        if a.usesExtendedAdvertising { parts.append("ext") }
        return parts.isEmpty ? "-" : parts.joined(separator: "; ")
    }

    static func scanKind(_ s: ScanSession) -> String {
        if s.implicitStart { return "implicit " + (s.isActive ? "active" : "(mid-scan)") }
        let kind = s.isExtended ? "extended " : "legacy "
        if s.phys.isEmpty { return kind + (s.isActive ? "active " : "") + "(params unknown)" }
        return kind + (s.isActive ? "active" : "passive") + (s.parametersKnown ? "" : " (default params)")
    }

    static func scanTiming(_ s: ScanSession) -> String {
        guard !s.phys.isEmpty else { return "unknown" }
        if s.phys.count == 1 {
            return "\(ms(s.intervalMilliseconds))/\(ms(s.windowMilliseconds)) ms"
        }
        return s.phys.map { "\($0.phyName) \(ms($0.intervalMilliseconds))/\(ms($0.windowMilliseconds))" }
            .joined(separator: ", ") + " ms"
    }

    static func duplicateFilter(_ s: ScanSession) -> String {
        switch s.filterDuplicatesMode {
        case 0: return s.implicitStart ? "unknown" : "off"
        case 1: return "on"
        case 2: return "on, per period"
        default: return Hex.u8(s.filterDuplicatesMode)
        }
    }

    static func advertisingInterval(_ s: AdvertisingSession) -> String {
        guard let lo = s.intervalMinimumMilliseconds, let hi = s.intervalMaximumMilliseconds else {
            return s.isExtended ? "unknown" : "default"
        }
        return lo == hi ? "\(ms(lo)) ms" : "\(ms(lo))–\(ms(hi)) ms"
    }
}
