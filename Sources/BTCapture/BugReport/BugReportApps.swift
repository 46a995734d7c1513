/// What an Android bug report says about the apps that used Bluetooth: the per-app sections of
/// `dumpsys bluetooth_manager` (GattService's GATT Scanner Map and GATT Client Map, written by AOSP's
/// AppScanStats and ContextMap), BatteryStats' per-uid Bluetooth scan time, and the BLE clients Google Play
/// services lists. The snoop log says what the controller did; this says which app asked (`AppAttribution`).
///
/// Times in these sections are the phone's local wall clock without a zone (and, from Android 10 on, without a
/// year): `LocalTime`. The header's dumpstate time and `persist.sys.timezone` say which clock it was.
public struct BugReportApps: Sendable, Equatable {
    /// `[ro.build.version.release]`, `[ro.build.version.sdk]`: the Android version, when the report gives it.
    public var release: String?
    public var sdk: Int?
    /// `== dumpstate: 2018-05-08 17:39:12`: when the report was taken, local time (the year of year-less times).
    public var dumpTime: LocalTime?
    /// `[persist.sys.timezone]`, e.g. `Europe/Berlin`.
    public var timeZone: String?
    /// Which dump layout the per-app sections have (`DumpLayout`).
    public var layout: DumpLayout?
    /// Whether the sections were present at all (an empty map is an answer: nobody was scanning).
    public var scannerMapSeen = false
    public var clientMapSeen = false
    /// Entries of the GATT Scanner Map (Android 7.x: of the GATT Client Map, which held the scan statistics).
    public var scanners: [AppEntry] = []
    /// Entries of the GATT Client Map with their connections (Android 8 and later).
    public var clients: [AppEntry] = []
    /// BatteryStats' Bluetooth scan time per uid, since the last charge.
    public var batteryScans: [BatteryScan] = []
    /// Google Play services' own BLE clients (`BleSettings [… callingClientName=Nearby]`).
    public var playServicesClients: [PlayServicesBLEClient] = []

    public init() {}

    /// Nothing about apps was found: the report is not used for attribution.
    public var isEmpty: Bool { !scannerMapSeen && !clientMapSeen && batteryScans.isEmpty && playServicesClients.isEmpty }

    /// Every app entry that holds scans, whichever map it came from.
    public var scanningApps: [AppEntry] { scanners.filter { !$0.scans.isEmpty || $0.scansStarted > 0 } }

    /// Every GATT connection the report lists, with its app.
    public var connections: [(app: String, connection: AppConnectionRecord)] {
        // Scanner entries hold none (Android 7's one map is read into `clients` too).
        clients.flatMap { entry in entry.connections.map { (entry.name, $0) } }
    }

    /// Bounds on what is kept from one report: a damaged or hostile text cannot grow the model without limit.
    public enum Limits {
        public static let apps = 512
        public static let scansPerApp = 64
        public static let connectionsPerApp = 64
        public static let batteryUids = 2048
        public static let playServicesClients = 256
        /// Longer lines are cut here before they are read (the per-app lines are short).
        public static let lineLength = 4096
    }
}

/// The layouts AOSP's AppScanStats has printed, told apart by content.
public enum DumpLayout: String, Sendable, Equatable {
    /// Android 7.x: one ContextMap; the scan statistics are under "GATT Client Map"; last scans as
    /// `yyyy/MM/dd HH:mm:ss - 1234ms [Opp ][Back]`, connections as `connId: address ageMs`.
    case android7 = "android-7"
    /// Android 8.x: "GATT Scanner Map" apart from the clients; `(Filtered)` on the app's line; last scans dated
    /// `yyyy/MM/dd HH:mm:ss` with
    /// `Filter` and a result count; "Current scan duration in ms" for the scan in progress.
    case android8 = "android-8"
    /// Android 9 and later: last scans as `MM-dd HH:mm:ss - 1234ms [Filter ]N results (scannerId)[ CB Regular Scan]`
    /// (9 still prints min/max/avg/total and `(Filtered)`; later ones active/suspend/total),
    /// each with its `Scan Config` (mode) and filters; "Ongoing scans"; connections with their start time.
    case android10 = "android-10"

    /// The Android versions a layout stands for, as reports say it.
    public var versions: String {
        switch self {
        case .android7: "Android 7.x"
        case .android8: "Android 8.x"
        case .android10: "Android 9 or later"
        }
    }
}

/// One app (a package, or a shared uid such as `com.google.uid.shared:10100`) in a GATT map.
public struct AppEntry: Sendable, Equatable {
    /// As printed, without the uid suffix: `com.example.app`, `com.google.uid.shared`.
    public var name: String
    /// The uid, when printed after the name (`name:10100`, Android 11 and later).
    public var uid: Int?
    /// The flags printed after the name: Registered, Filtered, Opportunistic, Background, Forced-Opportunistic.
    public var flags: [String] = []
    public var scansStarted = 0
    public var scansStopped = 0
    /// Total scan time in ms as the entry gives it (min/max/avg/total's total, or active/suspend/total's total).
    public var totalScanMs: Int64?
    public var results: Int?
    /// The last scans and those in progress when the report was taken.
    public var scans: [AppScanRecord] = []
    /// Its GATT connections when the report was taken.
    public var connections: [AppConnectionRecord] = []
    public var applicationID: Int?

    public init(name: String, uid: Int? = nil) {
        self.name = name
        self.uid = uid
    }

    public var isFilteredApp: Bool { flags.contains("Filtered") }
}

/// One scan of an app as AppScanStats kept it.
public struct AppScanRecord: Sendable, Equatable {
    /// When the app started it (local time, whole seconds: the real start lies within the second after).
    public var start: LocalTime
    /// How long it ran (for a scan in progress: until the report was taken).
    public var durationMs: Int64
    /// Still running when the report was taken ("Ongoing scans", or "Current scan duration").
    public var ongoing = false
    /// The start was not printed but worked out from the report's time (Android 7–9's scan in progress): it
    /// lies before the report's header time by up to the time dumpstate took to reach Bluetooth.
    public var startEstimated = false
    public var opportunistic = false
    public var background = false
    public var forced = false
    /// Started with scan filters (`Filter`): offloaded to the controller as a filtered APCF client.
    public var filtered = false
    public var results: Int?
    public var scannerID: Int?
    /// `ScanMode=BALANCED` etc. from the scan's `Scan Config` line (Android 11 and later).
    public var mode: String?
    /// The filters printed under it (`BluetoothLeScanFilter [ ServiceUuid=… ]`), text as printed.
    public var filters: [String] = []

    public init(start: LocalTime, durationMs: Int64) {
        self.start = start
        self.durationMs = durationMs
    }
}

/// One GATT connection of an app's client.
public struct AppConnectionRecord: Sendable, Equatable {
    public var connectionID: Int
    /// `AA:BB:CC:DD:EE:FF` as printed.
    public var address: String
    /// When it was made (Android 9 and later print it).
    public var start: LocalTime?
    /// How long it had been up when the report was taken.
    public var ageMs: Int64?

    public init(connectionID: Int, address: String, start: LocalTime? = nil, ageMs: Int64? = nil) {
        self.connectionID = connectionID
        self.address = address
        self.start = start
        self.ageMs = ageMs
    }
}

/// BatteryStats' `Bluetooth Scan (total actual realtime): 1m 58s 3ms (3 times)` for one uid (since last charge).
public struct BatteryScan: Sendable, Equatable {
    /// `u0a100` → 10100.
    public var uid: Int
    /// As printed (`u0a100`, `1000`).
    public var uidName: String
    /// The first `Apk NAME:` of the uid's block, when printed.
    public var package: String?
    public var realtimeMs: Int64
    public var times: Int
    public var running = false

    public init(uid: Int, uidName: String, realtimeMs: Int64, times: Int) {
        self.uid = uid
        self.uidName = uidName
        self.realtimeMs = realtimeMs
        self.times = times
    }
}

/// One BLE client of Google Play services' own scanner (`BleSettings [scanMode=…, N filters, callingClientName=…]`).
public struct PlayServicesBLEClient: Sendable, Equatable {
    public var clientName: String
    public var scanMode: String?
    public var filters: Int?

    public init(clientName: String, scanMode: String?, filters: Int?) {
        self.clientName = clientName
        self.scanMode = scanMode
        self.filters = filters
    }
}

/// A wall-clock time as the phone printed it: no zone, maybe no year.
public struct LocalTime: Sendable, Equatable, Comparable, CustomStringConvertible {
    public var year: Int?
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int?, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Seconds since the Unix epoch if this were UTC, in `year` when the time has none.
    public func naiveSeconds(defaultYear: Int) -> Int64 {
        let days = Self.daysFromCivil(year: year ?? defaultYear, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// `naiveSeconds` for a time printed without a year in a report taken at `dump`: the dump's year, or the year
    /// before when that would put it after the report (a scan in December, the report in January).
    public func naiveSeconds(before dump: LocalTime?, defaultYear: Int) -> Int64 {
        guard year == nil, let dump, let dumpYear = dump.year else { return naiveSeconds(defaultYear: defaultYear) }
        let guess = naiveSeconds(defaultYear: dumpYear)
        return guess > dump.naiveSeconds(defaultYear: dumpYear) + Self.yearWrapSlack ? naiveSeconds(defaultYear: dumpYear - 1) : guess
    }

    /// A year-less time this far after the report's is taken as last year's.
    static let yearWrapSlack: Int64 = 86_400

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date and time of `seconds` since the epoch (the inverse of `naiveSeconds`).
    public static func from(seconds: Int64) -> LocalTime {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = Int(seconds - days * 86_400)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        let y = Int(yoe + era * 400) + (m <= 2 ? 1 : 0)
        return LocalTime(year: y, month: m, day: d, hour: rest / 3600, minute: rest / 60 % 60, second: rest % 60)
    }

    public static func < (a: LocalTime, b: LocalTime) -> Bool {
        (a.year ?? 0, a.month, a.day, a.hour, a.minute, a.second) < (b.year ?? 0, b.month, b.day, b.hour, b.minute, b.second)
    }

    public var description: String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let date = (year.map { "\($0)-" } ?? "") + two(month) + "-" + two(day)
        return date + " " + two(hour) + ":" + two(minute) + ":" + two(second)
    }
}
