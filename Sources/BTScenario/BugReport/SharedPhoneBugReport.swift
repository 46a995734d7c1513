import BTWire
import BTCapture

/// The text of an Android bug report for `SharedPhone`, in the layout one Android version prints
/// (`DumpLayout`): the dumpstate header with the time zone, `dumpsys bluetooth_manager`'s GATT Scanner Map
/// and GATT Client Map (Android 7: one GATT Client Map holding the scan statistics), BatteryStats' per-uid
/// Bluetooth scan time and a Play services BLE client. Written from `SharedPhoneTruth`, so what btlens
/// attributes can be checked against what each app did.
public enum SharedPhoneBugReport {
    /// The zone each layout's phone is set to, and its offset from UTC in January (the scenarios' month).
    public static func zone(_ layout: DumpLayout) -> (name: String, offsetSeconds: Int64) {
        switch layout {
        case .android7: ("Asia/Kolkata", 19_800)
        case .android8: ("America/New_York", -18_000)
        case .android10: ("Europe/Berlin", 3_600)
        }
    }

    /// The release each layout is written as.
    static func release(_ layout: DumpLayout) -> (String, Int) {
        switch layout {
        case .android7: ("7.1.2", 25)
        case .android8: ("8.1.0", 27)
        case .android10: ("14", 34)
        }
    }

    /// AOSP keeps each app's last five finished scans.
    static let keptScans = 5
    /// The report is taken this long after the capture's last packet.
    static let dumpDelay: Int64 = 2

    /// The bug report's text. `withZone: false` leaves `persist.sys.timezone` out (matching must go by pattern);
    /// `snoopInLocalTime`: the capture's clock is the phone's local time (as one vendor's btsnooz summaries are),
    /// so the report's times equal the capture's while the zone still names the phone's zone.
    public static func text(_ truth: SharedPhoneTruth, layout: DumpLayout, withZone: Bool = true, snoopInLocalTime: Bool = false) -> String {
        let zoneName = zone(layout).name
        let offset = snoopInLocalTime ? 0 : zone(layout).offsetSeconds
        let dump = truth.captureEnd.nanoseconds / 1_000_000_000 + dumpDelay
        let dumpNanos = dump * 1_000_000_000
        func local(_ t: Timestamp, year: Bool) -> String {
            let l = LocalTime.from(seconds: t.nanoseconds.floorSeconds + offset)
            let text = l.description
            if !year { return String(text.dropFirst(5)) }
            return layout == .android10 ? text : text.replacingDashes()
        }
        let (release, sdk) = release(layout)
        var out = "========================================================\n"
        out += "== dumpstate: \(LocalTime.from(seconds: dump + offset))\n"
        out += "========================================================\n\n"
        out += "------ SYSTEM PROPERTIES (getprop) ------\n"
        out += "[ro.build.version.release]: [\(release)]\n[ro.build.version.sdk]: [\(sdk)]\n"
        if withZone { out += "[persist.sys.timezone]: [\(zoneName)]\n" }
        out += "\n------ DUMPSYS (dumpsys) ------\nDUMP OF SERVICE bluetooth_manager:\nBluetooth Status\n  enabled: true\n  state: ON\n\n"
        out += "Profile: GattService\n  mAdvertisingServiceUuids:\n\n"
        let apps = SharedPhone.App.allCases.filter { app in truth.scans.contains { $0.app == app } || truth.links.contains { $0.app == app } }
        func name(_ app: SharedPhone.App) -> String { layout == .android10 ? "\(app.rawValue):\(app.uid)" : app.rawValue }
        func scanEntry(_ app: SharedPhone.App, id: Int) -> String {
            let scans = truth.scans.filter { $0.app == app }
            let stopped = scans.filter { $0.end != nil }, ongoing = scans.filter { $0.end == nil }
            func ms(_ s: SharedPhoneTruth.Scan) -> Int64 { ((s.end?.nanoseconds ?? dumpNanos) - s.start.nanoseconds) / 1_000_000 }
            let stoppedMs = stopped.map(ms).reduce(0, +), ongoingMs = ongoing.map(ms).reduce(0, +)
            var e = "  \(name(app)) (Registered)"
            if layout == .android8, scans.last?.filtered == true { e += " (Filtered)" }
            e += "\n"
            let pad = layout == .android10 ? "                                  " : "         "
            e += "  LE scans (started/stopped)\(pad): \(scans.count) / \(stopped.count)\n"
            if layout == .android10 {
                e += "  Scan time in ms (active/suspend/total)                      : \(stoppedMs + ongoingMs) / 0 / \(stoppedMs + ongoingMs)\n"
                e += "  Total number of results                                     : 0\n"
            } else {
                let all = scans.map(ms)
                e += "  Scan time in ms (min/max/avg/total): \(all.min() ?? 0) / \(all.max() ?? 0) / \(all.isEmpty ? 0 : (stoppedMs + ongoingMs) / Int64(all.count)) / \(stoppedMs)\n"
                if layout == .android8 { e += "  Total number of results            : 0\n" }
            }
            let kept = stopped.suffix(keptScans)
            if !kept.isEmpty {
                e += "  Last \(kept.count) scans\(layout == .android10 ? "                                                " : "                       "):\n"
                for s in kept { e += scanLine(s, ms: ms(s), id: id, ongoing: false) }
            }
            if layout == .android10, !ongoing.isEmpty {
                e += "  Ongoing scans                                               :\n"
                for s in ongoing { e += scanLine(s, ms: ms(s), id: id, ongoing: true) }
            }
            e += "  Application ID                     : \(id)\n"
            e += "  UUID                               : 00000000-0000-0000-0000-00000000000\(id)\n"
            if layout != .android10, let s = ongoing.last { e += "  Current scan duration in ms        : \(ms(s))\n" }
            return e
        }
        func scanLine(_ s: SharedPhoneTruth.Scan, ms: Int64, id: Int, ongoing: Bool) -> String {
            switch layout {
            case .android7:
                return "    \(local(s.start, year: true)) - \(ms)ms\n"
            case .android8:
                return "    \(local(s.start, year: true)) - \(ms)ms \(s.filtered ? "Filter " : "")0 results\n"
            case .android10:
                var line = "    \(local(s.start, year: false)) - \(ms)ms \(s.filtered ? "Filter " : "")0 results (\(id)) CB Regular Scan\n"
                line += "      └ Scan Config: [ ScanMode=\(s.mode), callbackType=ALL_MATCHES ]\n"
                if s.filtered { line += "      └ BluetoothLeScanFilter [ ServiceUuid=0000fe2c-0000-1000-8000-00805f9b34fb ]\n" }
                return line
            }
        }
        func connections(_ app: SharedPhone.App) -> String {
            let open = truth.links.filter { $0.app == app && $0.end == nil }
            var e = "  Connections: \(open.count)\n"
            for (i, link) in open.enumerated() {
                let age = (dumpNanos - link.start.nanoseconds) / 1_000_000
                e += layout == .android10
                    ? "    \(local(link.start, year: false)) - \(age)ms : \(link.peer) (\(i + 3))\n"
                    : "    \(i + 3): \(link.peer) \(age)ms\n"
            }
            return e + "\n"
        }
        if layout == .android7 {
            out += "GATT Client Map\n  Entries: \(apps.count)\n\n"
            for (i, app) in apps.enumerated() {
                out += truth.scans.contains(where: { $0.app == app }) ? scanEntry(app, id: i + 1)
                    : "  \(app.rawValue) (Registered)\n  Application ID                     : \(i + 1)\n"
                out += connections(app)
            }
        } else {
            let scanning = apps.filter { app in truth.scans.contains { $0.app == app } }
            out += "GATT Scanner Map\n  Entries: \(scanning.count)\n\n"
            for (i, app) in scanning.enumerated() { out += scanEntry(app, id: i + 1) + "  Connections: 0\n\n" }
            out += "GATT Advertiser Map\n\n"
            let clients = apps.filter { app in truth.links.contains { $0.app == app } }
            out += "GATT Client Map\n  Entries: \(clients.count)\n\n"
            for (i, app) in clients.enumerated() {
                out += "  \(name(app)) (Registered)\n  Application ID                     : \(i + 1)\n"
                out += "  UUID                               : 00000000-0000-0000-0000-0000000000a\(i)\n"
                out += connections(app)
            }
        }
        out += "GATT Server Map\n  Entries: 0\n\nGATT Handle Map\n  Entries: 0\n  Requests: 0\n\n"
        out += "DUMP OF SERVICE batterystats:\nStatistics since last charge:\n"
        for app in apps {
            let scans = truth.scans.filter { $0.app == app }
            guard !scans.isEmpty else { continue }
            let total = scans.map { (($0.end?.nanoseconds ?? dumpNanos) - $0.start.nanoseconds) / 1_000_000 }.reduce(0, +)
            out += "  u0a\(app.uid - 10_000):\n    Apk \(app == .playServices ? "com.google.android.gms" : app.rawValue):\n"
            out += "    Bluetooth Scan (total actual realtime): \(batteryDuration(total)) (\(scans.count) times)\n"
        }
        if truth.scans.contains(where: { $0.app == .playServices }) {
            out += "\nDUMP OF SERVICE activity:\n  GmsCore BLE:\n    BleSettings [scanMode=0, reportDelayMillis=0, 1 filters, callingClientName=Nearby]\n"
        }
        return out
    }

    /// BatteryStats' `1m 58s 3ms`.
    static func batteryDuration(_ ms: Int64) -> String {
        var parts: [String] = []
        if ms >= 60_000 { parts.append("\(ms / 60_000)m") }
        parts.append("\(ms / 1000 % 60)s")
        parts.append("\(ms % 1000)ms")
        return parts.joined(separator: " ")
    }

    /// The report's file name (AOSP's `bugreport-<device>-<build>-<date>`), and where its snoop log lies in it.
    public static func textName(_ layout: DumpLayout) -> String { "bugreport-sharedphone-\(layout.rawValue)-2026-01-15-10-01-00.txt" }
    public static let snoopLogPath = "FS/data/misc/bluetooth/logs/btsnoop_hci.log"
}

extension Int64 {
    /// Whole seconds of nanoseconds, rounded down.
    var floorSeconds: Int64 { self >= 0 ? self / 1_000_000_000 : (self - 999_999_999) / 1_000_000_000 }
}

extension String {
    /// `2026-01-15 10:00:00` → `2026/01/15 10:00:00` (Android 7–9's AppScanStats date format).
    func replacingDashes() -> String { String(map { $0 == "-" ? "/" : $0 }) }
}

extension SharedPhoneBugReport {
    /// Writes `SharedPhone` with `apps` as an Android bug report zip at `path`: its text in `layout` and its
    /// full snoop log. Returns what each app did. `scratch`: a path for the snoop log while it is written.
    @discardableResult
    public static func writeZip(_ path: String, layout: DumpLayout, apps: Set<SharedPhone.App> = Set(SharedPhone.App.allCases),
                                withZone: Bool = true, snoopInLocalTime: Bool = false, scratch: String) throws -> SharedPhoneTruth {
        let truth = SharedPhoneTruth()
        try SharedPhone.scenario(apps: apps, truth: truth).write(to: scratch, format: .btsnoopH4)
        let source = try ByteSource(path: scratch)
        var snoop: [UInt8] = []
        while try source.ensure(1) {
            snoop += source.takeBuffered()
        }
        try ZipWriter.write(path, members: [
            (textName(layout), Array(text(truth, layout: layout, withZone: withZone, snoopInLocalTime: snoopInLocalTime).utf8)),
            (snoopLogPath, snoop),
        ])
        return truth
    }

    /// The ground truth as tab-separated rows: kind, app, start and end (Unix seconds, UTC), filtered or peer.
    public static func truthRows(_ truth: SharedPhoneTruth) -> String {
        var rows = "kind\tapp\tstart\tend\tdetail\n"
        for s in truth.scans {
            rows += "scan\t\(s.app.rawValue)\t\(s.start.decimalString())\t\(s.end.map { $0.decimalString() } ?? "")\t\(s.filtered ? "filtered" : "unfiltered") \(s.mode)\n"
        }
        for l in truth.links {
            rows += "link\t\(l.app.rawValue)\t\(l.start.decimalString())\t\(l.end.map { $0.decimalString() } ?? "")\t\(l.peer)\n"
        }
        return rows
    }
}
