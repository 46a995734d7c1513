/// Reads `BugReportApps` from a bug report's text, line by line, keeping only the per-app sections: the text
/// (tens of megabytes) is streamed, never held. Unknown lines are skipped; a line that does not parse is left
/// out, never fatal. The grammar is that of AOSP's AppScanStats.dumpToString and ContextMap.dump across
/// Android 7 to 15 (`DumpLayout`), and BatteryStats' per-uid "Bluetooth Scan" line.
public struct BugReportAppsParser {
    public private(set) var result = BugReportApps()

    private enum Section { case none, scannerMap, clientMap, batteryStats }
    private enum Block { case none, lastScans, ongoing, connections }
    private var section = Section.none
    private var block = Block.none
    private var entry: AppEntry?
    private var batteryUid: (uid: Int, name: String)?
    private var batteryPackage: String?

    public init() {}

    /// The sections of the text in `source`, read to its end.
    public static func parse(_ source: ByteSource) throws -> BugReportApps {
        var parser = BugReportAppsParser()
        var line: [UInt8] = []
        line.reserveCapacity(256)
        while try source.ensure(1) {
            let bytes = source.peek(source.available)
            for b in bytes {
                if b == 0x0A {
                    parser.read(line)
                    line.removeAll(keepingCapacity: true)
                } else if line.count < BugReportApps.Limits.lineLength {
                    line.append(b)
                }
            }
            source.consume(bytes.count)
        }
        if !line.isEmpty { parser.read(line) }
        return parser.finish()
    }

    /// The sections of `text` (tests, small inputs).
    public static func parse(text: String) -> BugReportApps {
        var parser = BugReportAppsParser()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { parser.read(Array(line.utf8)) }
        return parser.finish()
    }

    public mutating func finish() -> BugReportApps {
        closeEntry()
        return result
    }

    /// Reads one line (without its newline).
    public mutating func read(_ bytes: [UInt8]) {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        let trimmed = text.trimmed
        readHeader(trimmed)
        if readSectionStart(trimmed) { return }
        switch section {
        case .none: break
        case .scannerMap, .clientMap: readMapLine(text, trimmed)
        case .batteryStats: readBatteryLine(text, trimmed)
        }
        if trimmed.contains("BleSettings ["), result.playServicesClients.count < BugReportApps.Limits.playServicesClients,
           let client = Self.playServicesClient(trimmed) {
            result.playServicesClients.append(client)
        }
    }

    // MARK: - Header

    private mutating func readHeader(_ t: String) {
        if result.dumpTime == nil, t.hasPrefix("== dumpstate: ") {
            result.dumpTime = Self.fullTime(String(t.dropFirst("== dumpstate: ".count)))
        } else if t.hasPrefix("[persist.sys.timezone]: ["), result.timeZone == nil {
            result.timeZone = Self.property(t)
        } else if t.hasPrefix("[ro.build.version.release]: ["), result.release == nil {
            result.release = Self.property(t)
        } else if t.hasPrefix("[ro.build.version.sdk]: ["), result.sdk == nil {
            result.sdk = Self.property(t).flatMap { Int($0) }
        }
    }

    static func property(_ t: String) -> String? {
        guard let open = t.firstRange(of: "]: [")?.upperBound, t.hasSuffix("]") else { return nil }
        let value = String(t[open..<t.index(before: t.endIndex)])
        return value.isEmpty ? nil : value
    }

    // MARK: - Sections

    /// Whether the line opens or closes a section this parser reads.
    private mutating func readSectionStart(_ t: String) -> Bool {
        switch t {
        case "GATT Scanner Map":
            closeEntry()
            section = .scannerMap
            result.scannerMapSeen = true
            return true
        case "GATT Client Map":
            closeEntry()
            section = .clientMap
            result.clientMapSeen = true
            return true
        default: break
        }
        if t.hasPrefix("GATT Server Map") || t.hasPrefix("GATT Handle Map") || t.hasPrefix("GATT Advertiser Map")
            || t.hasPrefix("Profile: ") || t.hasPrefix("DUMP OF SERVICE") || t.hasPrefix("------ ") {
            closeEntry()
            section = t.hasPrefix("DUMP OF SERVICE batterystats") ? .batteryStats : .none
            return section == .batteryStats
        }
        return false
    }

    private mutating func closeEntry() {
        guard let e = entry else { return }
        entry = nil
        block = .none
        if section == .clientMap {
            // Android 7 kept scan statistics in the one ContextMap: its entries with scans are the scanners.
            if !e.scans.isEmpty || e.scansStarted > 0 {
                if !result.scannerMapSeen { result.layout = .android7 }
                if result.scanners.count < BugReportApps.Limits.apps { result.scanners.append(e) }
            }
            if result.clients.count < BugReportApps.Limits.apps { result.clients.append(e) }
        } else if result.scanners.count < BugReportApps.Limits.apps {
            result.scanners.append(e)
        }
    }

    // MARK: - GATT maps

    private mutating func readMapLine(_ text: String, _ t: String) {
        guard !t.isEmpty else { return }
        let indent = text.prefix { $0 == " " }.count
        if t.hasPrefix("Entries:") { return }
        if t.hasPrefix("└") || t.hasPrefix("\u{2514}") {
            readDetail(t)
            return
        }
        if indent >= 4, block != .none {
            readBlockLine(t)
            return
        }
        if let (key, value) = Self.keyValue(t) {
            readKey(key, value)
            return
        }
        // An entry's name line: "com.example.app (Registered) (Filtered)" or "com.google.uid.shared:10100 (Registered)".
        if indent >= 1, indent <= 3, let named = Self.entryName(t) {
            closeEntry()
            entry = named
        }
    }

    private mutating func readKey(_ key: String, _ value: String) {
        guard entry != nil else { return }
        let numbers = Self.numbers(value)
        if key.hasPrefix("LE scans (started/stopped)"), numbers.count >= 2 {
            entry?.scansStarted = Int(numbers[0])
            entry?.scansStopped = Int(numbers[1])
        } else if key.hasPrefix("Scan time in ms (min/max/avg/total)"), numbers.count >= 4 {
            entry?.totalScanMs = numbers[3]
            if result.layout == nil { result.layout = .android8 }
        } else if key.hasPrefix("Scan time in ms (active/suspend/total)"), numbers.count >= 3 {
            entry?.totalScanMs = numbers[2]
            result.layout = .android10
        } else if key.hasPrefix("Total number of results"), let n = numbers.first {
            entry?.results = Int(n)
        } else if key.hasPrefix("Last ") && key.hasSuffix("scans") {
            block = .lastScans
        } else if key.hasPrefix("Ongoing scans") {
            block = .ongoing
        } else if key.hasPrefix("Application ID"), let n = numbers.first {
            entry?.applicationID = Int(n)
            block = .none
        } else if key.hasPrefix("Current scan duration in ms"), let n = numbers.first {
            // Android 7–9: the scan in progress is never among the printed last scans (those are the first
            // `stopped` of the list); its start is the report's time less its duration so far: an estimate.
            if let dump = result.dumpTime {
                let startSeconds = dump.naiveSeconds(defaultYear: dump.year ?? 1970) - n / 1000
                var scan = AppScanRecord(start: LocalTime.from(seconds: startSeconds), durationMs: n)
                scan.ongoing = true
                scan.startEstimated = true
                scan.filtered = entry?.isFilteredApp ?? false
                append(scan)
            }
        } else if key.hasPrefix("Connections") {
            block = .connections
        } else if key.hasPrefix("UUID") || key.hasPrefix("Score") || key.hasPrefix("Scan mode counter")
            || key.hasPrefix("Scan time with mode") {
            block = .none
        }
    }

    private mutating func readBlockLine(_ t: String) {
        switch block {
        case .lastScans, .ongoing:
            guard var scan = Self.scanLine(t) else { return }
            if block == .ongoing { scan.ongoing = true }
            if scan.start.year == nil { result.layout = .android10 }
            if !scan.filtered, entry?.isFilteredApp == true, result.layout == .android7 { scan.filtered = true }
            append(scan)
        case .connections:
            guard let c = Self.connectionLine(t), (entry?.connections.count ?? .max) < BugReportApps.Limits.connectionsPerApp else { return }
            entry?.connections.append(c)
        case .none: break
        }
    }

    private mutating func append(_ scan: AppScanRecord) {
        guard let count = entry?.scans.count, count < BugReportApps.Limits.scansPerApp else { return }
        entry?.scans.append(scan)
    }

    /// `└ Scan Config: [ ScanMode=BALANCED, callbackType=ALL_MATCHES ]`, `└ BluetoothLeScanFilter [ … ]`.
    private mutating func readDetail(_ t: String) {
        guard block == .lastScans || block == .ongoing, let last = entry?.scans.indices.last else { return }
        if let r = t.firstRange(of: "ScanMode=") {
            let mode = t[r.upperBound...].prefix { $0.isLetter || $0 == "_" }
            entry?.scans[last].mode = String(mode)
        } else if let r = t.firstRange(of: "BluetoothLeScanFilter"), (entry?.scans[last].filters.count ?? 0) < 32 {
            entry?.scans[last].filters.append(String(t[r.lowerBound...]))
        }
    }

    // MARK: - BatteryStats

    private mutating func readBatteryLine(_ text: String, _ t: String) {
        let indent = text.prefix { $0 == " " }.count
        if indent == 2, t.hasSuffix(":"), let uid = Self.uid(String(t.dropLast())) {
            batteryUid = (uid, String(t.dropLast()))
            batteryPackage = nil
            return
        }
        guard let current = batteryUid else { return }
        if t.hasPrefix("Apk "), t.hasSuffix(":"), batteryPackage == nil {
            batteryPackage = String(t.dropFirst(4).dropLast())
            if let i = result.batteryScans.lastIndex(where: { $0.uid == current.uid }), result.batteryScans[i].package == nil {
                result.batteryScans[i].package = batteryPackage
            }
            return
        }
        let actual = "Bluetooth Scan (total actual realtime): ", older = "Bluetooth Scan (total realtime): "
        guard t.hasPrefix(actual) || t.hasPrefix(older) else { return }
        // The first statistics block (since last charge) is kept; a uid seen again is a later block.
        guard !result.batteryScans.contains(where: { $0.uid == current.uid }),
              result.batteryScans.count < BugReportApps.Limits.batteryUids else { return }
        let rest = String(t.dropFirst(t.hasPrefix(actual) ? actual.count : older.count))
        guard let times = rest.firstRange(of: " times)") else { return }
        let before = rest[..<times.lowerBound]
        guard let open = before.lastIndex(of: "("), let count = Int(before[before.index(after: open)...]) else { return }
        var scan = BatteryScan(uid: current.uid, uidName: current.name, realtimeMs: Self.durationMs(String(before[..<open])), times: count)
        scan.package = batteryPackage
        scan.running = rest.contains("running")
        result.batteryScans.append(scan)
    }

    /// `u0a100` → 10100, `u10a5` → 1010005, `1000` → 1000 (Android's UserHandle: user × 100000 + 10000 + app id).
    static func uid(_ s: String) -> Int? {
        if let n = Int(s), n >= 0 { return n }
        guard s.hasPrefix("u"), let a = s.firstIndex(of: "a"), let user = Int(s[s.index(after: s.startIndex)..<a]),
              let app = Int(s[s.index(after: a)...]), user >= 0, user < 1000, app >= 0, app < 90_000 else { return nil }
        return user * 100_000 + 10_000 + app
    }

    /// `1m 58s 3ms`, `2h 0m 1s 0ms`, `118s` → milliseconds (BatteryStats' formatTimeMs).
    static func durationMs(_ s: String) -> Int64 {
        var total: Int64 = 0
        for token in s.split(separator: " ") {
            let digits = token.prefix { $0.isNumber }
            guard let v = Int64(digits) else { continue }
            let unit = token.dropFirst(digits.count)
            let factor: Int64? = switch unit {
            case "d": 86_400_000
            case "h": 3_600_000
            case "m": 60_000
            case "s": 1000
            case "ms": 1
            default: nil
            }
            if let factor { total = total &+ v.multipliedReportingOverflow(by: factor).partialValue }
        }
        return total
    }

    // MARK: - Lines

    /// "KEY : VALUE" (the key is padded with spaces before the colon); "Connections: 1".
    static func keyValue(_ t: String) -> (String, String)? {
        guard let colon = t.firstIndex(of: ":") else { return nil }
        let key = t[..<colon].trimmed
        let known = ["LE scans", "Scan time", "Total number of results", "Last ", "Ongoing scans", "Application ID", "UUID",
                     "Current scan duration", "Connections", "Score", "Scan mode counter"]
        guard known.contains(where: { key.hasPrefix($0) }) else { return nil }
        return (key, String(t[t.index(after: colon)...]).trimmed)
    }

    /// `com.example.app (Registered) (Filtered)`, `com.google.uid.shared:10100 (Registered)`.
    static func entryName(_ t: String) -> AppEntry? {
        var rest = Substring(t)
        let nameEnd = rest.firstIndex(of: " ") ?? rest.endIndex
        var name = String(rest[..<nameEnd])
        rest = rest[nameEnd...]
        guard !name.isEmpty, name.count <= 256,
              name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == ":" || $0 == "-" }),
              name.first?.isLetter == true || name.first?.isNumber == true else { return nil }
        var uid: Int?
        if let colon = name.lastIndex(of: ":"), let n = Int(name[name.index(after: colon)...]) {
            uid = n
            name = String(name[..<colon])
        }
        var entry = AppEntry(name: name, uid: uid)
        while let open = rest.firstIndex(of: "("), let close = rest[open...].firstIndex(of: ")") {
            entry.flags.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        guard rest.trimmed.isEmpty else { return nil }
        return entry
    }

    /// `2018/05/08 17:26:57 - 76108ms Opp Back Forced Filter 3 results` (Android 7–9) or
    /// `05-08 17:26:57 - 76108ms Filter 0 results (3) CB Regular Scan` (Android 9 and later).
    static func scanLine(_ t: String) -> AppScanRecord? {
        guard let dash = t.firstRange(of: " - ") else { return nil }
        guard let start = time(String(t[..<dash.lowerBound])) else { return nil }
        let rest = t[dash.upperBound...].split(separator: " ")
        guard let first = rest.first, first.hasSuffix("ms"), let ms = Int64(first.dropLast(2)), ms >= 0 else { return nil }
        var scan = AppScanRecord(start: start, durationMs: ms)
        var previous: Substring?
        for token in rest.dropFirst() {
            switch token {
            case "Opp": scan.opportunistic = true
            case "Back": scan.background = true
            case "Forced": scan.forced = true
            case "Filter": scan.filtered = true
            case "results": if let p = previous, let n = Int(p) { scan.results = n }
            default:
                if token.hasPrefix("("), token.hasSuffix(")"), let n = Int(token.dropFirst().dropLast()) { scan.scannerID = n }
            }
            previous = token
        }
        return scan
    }

    /// `3: AA:BB:CC:DD:EE:FF 12345ms` (Android 7–9) or `05-08 17:30:00 - 12345ms : AA:BB:CC:DD:EE:FF (3)`.
    static func connectionLine(_ t: String) -> AppConnectionRecord? {
        if let dash = t.firstRange(of: " - "), let start = time(String(t[..<dash.lowerBound])) {
            let rest = t[dash.upperBound...].split(separator: " ")
            guard rest.count >= 4, rest[0].hasSuffix("ms"), rest[1] == ":", let id = Int(rest[3].trimmingCharacters("()")) else { return nil }
            return AppConnectionRecord(connectionID: id, address: String(rest[2]), start: start, ageMs: Int64(rest[0].dropLast(2)))
        }
        let parts = t.split(separator: " ")
        guard parts.count >= 2, parts[0].hasSuffix(":"), let id = Int(parts[0].dropLast()) else { return nil }
        let age = parts.count >= 3 && parts[2].hasSuffix("ms") ? Int64(parts[2].dropLast(2)) : nil
        return AppConnectionRecord(connectionID: id, address: String(parts[1]), ageMs: age)
    }

    /// `2018/05/08 17:26:57`, `2018-05-08 17:26:57`, or `05-08 17:26:57` (no year).
    static func time(_ s: String) -> LocalTime? {
        let parts = s.trimmed.split(separator: " ")
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(whereSeparator: { $0 == "/" || $0 == "-" }).compactMap { Int($0) }
        let clock = parts[1].split(separator: ".")[0].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, date.count == 2 || date.count == 3 else { return nil }
        let year: Int? = date.count == 3 ? date[0] : nil
        let month = date[date.count - 2], day = date[date.count - 1]
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
              (0...60).contains(clock[2]), year.map({ (1970...2200).contains($0) }) ?? true else { return nil }
        return LocalTime(year: year, month: month, day: day, hour: clock[0], minute: clock[1], second: clock[2])
    }

    static func fullTime(_ s: String) -> LocalTime? {
        guard let t = time(s), t.year != nil else { return nil }
        return t
    }

    /// Integers in `s`, in order.
    static func numbers(_ s: String) -> [Int64] {
        s.split(whereSeparator: { !$0.isNumber && $0 != "-" }).compactMap { Int64($0) }
    }

    /// `BleSettings [scanMode=2, … 3 filters, callingClientName=Nearby]` (the order of fields varies by release).
    static func playServicesClient(_ t: String) -> PlayServicesBLEClient? {
        guard let open = t.firstRange(of: "BleSettings [") else { return nil }
        let body = t[open.upperBound...].prefix { $0 != "]" }
        var name: String?, mode: String?, filters: Int?
        for field in body.split(separator: ",") {
            let f = field.trimmed
            if f.hasPrefix("callingClientName=") { name = String(f.dropFirst("callingClientName=".count)) }
            else if f.hasPrefix("scanMode=") { mode = String(f.dropFirst("scanMode=".count)) }
            else if f.hasSuffix(" filters") || f.hasSuffix(" filter") { filters = Int(f.split(separator: " ")[0]) }
        }
        guard let name, !name.isEmpty else { return nil }
        return PlayServicesBLEClient(clientName: name, scanMode: mode, filters: filters)
    }
}

extension StringProtocol {
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }

    func trimmingCharacters(_ set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
