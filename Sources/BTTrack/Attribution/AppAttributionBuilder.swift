import BTWire
import BTCapture

extension AppAttribution {
    /// Attributes the model's scans and links from `report`. `zoneOffsetSeconds`: the report's time zone's
    /// offset from UTC at its date, when the caller could work it out (`persist.sys.timezone`).
    public static func attribute(_ model: CaptureModel, report: BugReportApps, zoneOffsetSeconds: Int64?) -> AppAttribution {
        let captureEnd = model.lastTimestamp ?? Timestamp(nanoseconds: Timestamp.limit)
        let defaultYear = report.dumpTime?.year ?? model.firstTimestamp.map { LocalTime.from(seconds: $0.nanoseconds / 1_000_000_000).year ?? 1970 } ?? 1970
        var scans = controllerScans(model, captureEnd: captureEnd)
        let candidates = reportScans(report, defaultYear: defaultYear)
        let clock = chooseClock(candidates, scans: scans, zone: zoneOffsetSeconds)
        var unmatched: [Unmatched] = []
        var outside = 0
        var notes: [String] = []
        let first = model.firstTimestamp?.nanoseconds ?? 0, last = captureEnd.nanoseconds
        if let offset = clock.offsetSeconds {
            // Exact starts first (each filtered client is one app's), then unfiltered scans that joined an
            // all-pass filter already installed for another.
            var pending: [ReportScan] = []
            // Printed starts before estimated ones (whose wide tolerance would take another's scan).
            for r in candidates.sorted(by: { ($0.record.startEstimated ? 1 : 0, $0.naiveStart) < ($1.record.startEstimated ? 1 : 0, $1.naiveStart) }) {
                let (from, to) = r.span(offset: offset)
                guard to >= first, from <= last else { outside += 1; continue }
                if let u = bestStart(r, offset: offset, scans: scans, exclusive: true) {
                    scans[u].owner.add(r.app, evidence: r.evidence)
                    scans[u].matched.append(r.ref)
                } else {
                    pending.append(r)
                }
            }
            for r in pending {
                let (from, to) = r.span(offset: offset)
                if !r.record.filtered || !r.filterKnown, let u = scans.indices.first(where: { i in
                    scans[i].allPass != false && scans[i].start.timestamp.nanoseconds <= from + Tolerance.start
                        && (scans[i].end ?? captureEnd).nanoseconds >= min(to, last) - Tolerance.start
                }) {
                    scans[u].owner.add(r.app, evidence: r.evidence + ", within the all-pass filter already on")
                    scans[u].matched.append(r.ref)
                } else {
                    _ = from
                let reason = r.record.opportunistic
                        ? "opportunistic: it only listens to others' scans and starts none on the controller"
                        : "no scan of the controller started within \(Tolerance.start / 1_000_000_000) s of it"
                    unmatched.append(Unmatched(ref: r.ref, reason: reason))
                }
            }
        }
        inferByCount(&scans, report: report, candidates: candidates)
        let scannerMapEmpty = (report.scannerMapSeen || report.layout == .android7) && report.scanningApps.isEmpty
        for i in scans.indices where scans[i].owner.kind != .app {
            scans[i].owner = fallbackOwner(scans[i], mapEmpty: scannerMapEmpty, clock: clock)
        }
        if scannerMapEmpty, !scans.isEmpty {
            notes.append("the bug report's GATT Scanner Map is empty while the capture shows \(Plural.of(scans.count, "scan")): they stay unattributed")
        }
        var (linkOwners, linkIDs, linkMatches) = attributeLinks(model, report: report, offset: clock.offsetSeconds, defaultYear: defaultYear)
        inferLinkOwners(&linkOwners, model: model, scans: scans)
        var figures = appFigures(report, scans: scans, candidates: candidates, clock: clock, first: first, last: last,
                                 captureEnd: captureEnd)
        for (app, count) in linkMatches {
            if let i = figures.firstIndex(where: { $0.name == app }) { figures[i].matchedLinks += count }
        }
        if report.scanningApps.contains(where: { $0.scans.isEmpty && $0.scansStarted > 0 }) {
            notes.append("some apps' scans are counted but not listed in the bug report: only their totals are compared")
        }
        return AppAttribution(report: report, clock: clock, scans: scans, linkOwners: linkOwners, linkIDs: linkIDs,
                              apps: figures, unmatched: unmatched, outsideSpan: outside, notes: notes)
    }

    // MARK: - The controller's scans

    static func controllerScans(_ model: CaptureModel, captureEnd: Timestamp) -> [Scan] {
        var result: [Scan] = []
        let clientControllers = Set(model.scanClients.map(\.controller))
        for (i, c) in model.scanClients.enumerated() {
            let covered = model.scans.indices.filter { s in
                model.scans[s].controller == c.controller && model.scans[s].start.timestamp < (c.removed?.timestamp ?? captureEnd)
                    && (model.scans[s].endTimestamp ?? captureEnd) > c.added.timestamp
            }
            let received = AppScans.received(client: c, covered: covered, sessions: model.scans)
            result.append(Scan(controller: c.controller, client: i, session: covered.first, start: c.added,
                               end: c.removed?.timestamp, allPass: c.isAllPass, filterIndex: c.filterIndex,
                               reports: received.reports, owner: .unknown("")))
        }
        for (i, s) in model.scans.enumerated() where !clientControllers.contains(s.controller) {
            result.append(Scan(controller: s.controller, client: nil, session: i, start: s.start, end: s.endTimestamp,
                               allPass: nil, filterIndex: nil, reports: s.reports, owner: .unknown("")))
        }
        result.sort { $0.start.timestamp < $1.start.timestamp }
        return result
    }

    /// AOSP keeps only each app's last five scans; its earlier ones still count in "LE scans (started/stopped)".
    /// When one app alone scanned unfiltered, the all-pass scans just before its first kept one, as many as the
    /// report counts but did not keep, are its scans too ("by count").
    static func inferByCount(_ scans: inout [Scan], report: BugReportApps, candidates: [ReportScan]) {
        let unfiltered = Set(candidates.filter { $0.filterKnown && !$0.record.filtered }.map(\.ref.app))
        let filterUnknown = candidates.contains { !$0.filterKnown }
        guard unfiltered.count == 1, !filterUnknown, let a = unfiltered.first else { return }
        let app = report.scanners[a]
        let missing = app.scansStarted - app.scans.count
        guard missing > 0, let firstKept = scans.firstIndex(where: { $0.matched.contains { $0.app == a } }) else { return }
        let earlier = scans[..<firstKept].indices.filter { scans[$0].allPass == true && scans[$0].owner.kind != .app
            && scans[$0].filterIndex != ScanClient.discoveryFilterIndex }
        for i in earlier.suffix(missing) {
            scans[i].owner = .app(app.name, evidence: "by count: \(app.name) started \(app.scansStarted) scans and the report kept its last \(app.scans.count); "
                                  + "it alone scanned unfiltered (this all-pass filter comes before its first kept scan)")
        }
    }

    /// The owner of a scan no report scan matched: the capture's own evidence, or none.
    static func fallbackOwner(_ s: Scan, mapEmpty: Bool, clock: ClockBasis) -> Owner {
        if s.allPass == true, s.filterIndex == ScanClient.discoveryFilterIndex {
            return .os("device discovery (the stack's all-pass filter at APCF index 0)")
        }
        if mapEmpty { return .unknown("the bug report's GATT Scanner Map is empty: no app is named") }
        if clock == .none { return .unknown("the report's times cannot be put on the capture's clock") }
        switch s.allPass {
        case true?:
            return .unknown("an app's all-pass filter (APCF index \(s.filterIndex.map(String.init) ?? "?")); no scan the bug report kept matches it (it keeps each app's last 5)")
        case false?:
            return .os("filtered background (APCF index \(s.filterIndex.map(String.init) ?? "?")); no scan the bug report kept matches it")
        case nil:
            return .unknown("no scan the bug report kept matches this scan session")
        }
    }

    // MARK: - The report's scans

    struct ReportScan {
        var ref: ReportScanRef
        var app: String
        var record: AppScanRecord
        /// Seconds since the epoch as if the local time were UTC.
        var naiveStart: Int64
        /// Android 7 prints no filter flag: a scan's being filtered is unknown.
        var filterKnown = true

        func span(offset: Int64) -> (Int64, Int64) {
            let from = (naiveStart - offset) * 1_000_000_000
            return (from, from + record.durationMs * 1_000_000)
        }

        var evidence: String {
            var text = "bug report: \(record.ongoing ? "ongoing scan" : "scan") started \(record.start) local, "
                + DecimalText.fixed(Double(record.durationMs) / 1000, fractionDigits: 1) + " s"
            if filterKnown { text += record.filtered ? ", filtered" : ", unfiltered" }
            if let mode = record.mode { text += ", " + mode }
            return text
        }
    }

    static func reportScans(_ report: BugReportApps, defaultYear: Int) -> [ReportScan] {
        var result: [ReportScan] = []
        for (a, app) in report.scanners.enumerated() {
            for (s, scan) in app.scans.enumerated() {
                result.append(ReportScan(ref: ReportScanRef(app: a, scan: s), app: app.name, record: scan,
                                         naiveStart: scan.start.naiveSeconds(before: report.dumpTime, defaultYear: defaultYear),
                                         filterKnown: report.layout != .android7 || app.isFilteredApp))
            }
        }
        return result
    }

    /// The controller scan whose start best matches `r` at `offset`: filtered or not alike, the nearest start
    /// within the tolerance; with `exclusive`, a filtered client already matched is not matched again.
    static func bestStart(_ r: ReportScan, offset: Int64, scans: [Scan], exclusive: Bool) -> Int? {
        let (from, _) = r.span(offset: offset)
        // The app's call lies within the printed second.
        let expected = from + 500_000_000
        let tolerance = r.record.startEstimated ? Tolerance.estimatedStart : Tolerance.start
        var best: (Int64, Int)?
        for (i, s) in scans.enumerated() {
            if r.filterKnown, let allPass = s.allPass, allPass == r.record.filtered { continue }
            if exclusive, s.allPass == false, !s.matched.isEmpty { continue }
            let distance = abs(s.start.timestamp.nanoseconds - expected)
            guard distance <= tolerance else { continue }
            if best == nil || distance < best!.0 { best = (distance, i) }
        }
        return best?.1
    }

    static func durationsAgree(_ a: Int64, _ b: Int64) -> Bool {
        abs(a - b) <= max(Tolerance.duration, Int64(Double(max(a, b)) * Tolerance.durationShare))
    }

    /// Puts the report's local times on the capture's clock: the zone's offset when the pattern does not beat
    /// it, else the offset (in quarter hours) under which most report scans start with a controller scan.
    static func chooseClock(_ reports: [ReportScan], scans: [Scan], zone: Int64?) -> ClockBasis {
        func score(_ offset: Int64) -> (Int, Int) {
            var starts = 0, durations = 0
            for r in reports where !r.record.startEstimated {
                guard let u = bestStart(r, offset: offset, scans: scans, exclusive: false) else { continue }
                starts += 1
                if let end = scans[u].end, !r.record.ongoing,
                   durationsAgree(end.nanoseconds - scans[u].start.timestamp.nanoseconds, r.record.durationMs * 1_000_000) {
                    durations += 1
                }
            }
            return (starts, durations)
        }
        var offsets: Set<Int64> = [0]
        if let zone { offsets.insert(zone) }
        for r in reports.prefix(Tolerance.proposals) {
            for s in scans.prefix(Tolerance.proposals) {
                let d = r.naiveStart - s.start.timestamp.nanoseconds / 1_000_000_000
                let o = (d + Tolerance.offsetStep / 2).floorDivided(by: Tolerance.offsetStep) * Tolerance.offsetStep
                if abs(o) <= Tolerance.maximumOffset, abs(d - o) <= 3 { offsets.insert(o) }
            }
        }
        var best: (offset: Int64, score: (Int, Int))?
        for o in offsets.sorted() {
            let s = score(o)
            if best == nil || s > best!.score { best = (o, s) }
        }
        guard let best else { return zone.map { .clock(offsetSeconds: $0, patternAgrees: false) } ?? .none }
        if let zone {
            let zoneScore = score(zone)
            if zoneScore >= best.score { return .clock(offsetSeconds: zone, patternAgrees: zoneScore.0 > 0) }
            if best.score.0 >= Tolerance.patternOverClock, best.score.0 > zoneScore.0 {
                return .pattern(offsetSeconds: best.offset, clockOffsetSeconds: zone)
            }
            return .clock(offsetSeconds: zone, patternAgrees: false)
        }
        // No zone: one start must also agree in duration, or two starts must match.
        if best.score.0 >= Tolerance.patternOverClock || best.score.1 >= 1 {
            return .pattern(offsetSeconds: best.offset, clockOffsetSeconds: nil)
        }
        return .none
    }

    // MARK: - Links

    static func attributeLinks(_ model: CaptureModel, report: BugReportApps, offset: Int64?, defaultYear: Int)
        -> ([Owner], [Int], [String: Int]) {
        let links = model.links
        var owners: [Owner] = links.map { link in
            switch link.ownership {
            case .os(let reason): .os(reason.description)
            case .app: .unknown("no GATT client in the bug report held it (the report lists only the connections open when it was taken)")
            }
        }
        var counts: [String: Int] = [:]
        let dump = report.dumpTime.map { $0.naiveSeconds(defaultYear: defaultYear) }
        for (app, c) in report.connections {
            let address = c.address.uppercased()
            let candidates = links.indices.filter { links[$0].peerAddress?.description == address }
            guard !candidates.isEmpty else { continue }
            var chosen: Int?
            if let start = c.start, let offset {
                let expected = (start.naiveSeconds(before: report.dumpTime, defaultYear: defaultYear) - offset) * 1_000_000_000 + 500_000_000
                chosen = candidates.min { abs(links[$0].start.timestamp.nanoseconds - expected) < abs(links[$1].start.timestamp.nanoseconds - expected) }
                if let i = chosen, abs(links[i].start.timestamp.nanoseconds - expected) > AppAttribution.Tolerance.start { chosen = nil }
            } else {
                // Listed as open when the report was taken: the link to that peer still up at the capture's end,
                // or else the last one before the report's time.
                chosen = candidates.last { links[$0].end == nil }
                if chosen == nil, let dump, let offset {
                    let at = (dump - offset) * 1_000_000_000
                    chosen = candidates.last { links[$0].start.timestamp.nanoseconds <= at && (links[$0].end?.timestamp.nanoseconds ?? .max) >= at }
                }
            }
            guard let i = chosen else { continue }
            var evidence = "bug report: GATT Client Map, connection \(c.connectionID) to \(c.address)"
            if let start = c.start { evidence += " since \(start) local" }
            owners[i] = .app(app, evidence: evidence)
            counts[app, default: 0] += 1
        }
        return (owners, links.map(\.id), counts)
    }

    /// A link the report does not list (closed before it was taken) goes to the one app whose scan led to it:
    /// stopped within `Tolerance.scanBeforeLink` before the connection was requested, or else started within
    /// `Tolerance.scanLeadingLink` before it and still on. Two apps so placed leave it unattributed.
    static func inferLinkOwners(_ owners: inout [Owner], model: CaptureModel, scans: [Scan]) {
        let links = model.links
        for i in links.indices where owners[i].kind == .unknown && links[i].ownership.isApp {
            let link = links[i]
            let at = (link.connectRequestedTime ?? link.start.timestamp).nanoseconds
            let mine = scans.filter { $0.controller == link.controller && $0.owner.kind == .app && $0.owner.apps.count == 1 }
            let stopped = mine.filter { s in s.end.map { at - $0.nanoseconds >= 0 && at - $0.nanoseconds <= Tolerance.scanBeforeLink } ?? false }
            let leading = mine.filter { s in
                at - s.start.timestamp.nanoseconds >= 0 && at - s.start.timestamp.nanoseconds <= Tolerance.scanLeadingLink
                    && (s.end.map { $0.nanoseconds >= at } ?? true)
            }
            for (group, how) in [(stopped, "stopped its scan"), (leading, "was scanning, started")] {
                let apps = Set(group.flatMap(\.owner.apps))
                guard !group.isEmpty else { continue }
                if apps.count == 1, let app = apps.first, let s = group.last {
                    let gap = DecimalText.fixed(Double(abs(at - (how.hasPrefix("stopped") ? s.end!.nanoseconds : s.start.timestamp.nanoseconds))) / 1e9, fractionDigits: 1)
                    owners[i] = .app(app, evidence: "by timing: \(app) \(how) \(gap) s before the link was requested (the GATT Client Map lists only connections open when the report was taken)")
                }
                break
            }
        }
    }

    // MARK: - Figures

    static func appFigures(_ report: BugReportApps, scans: [Scan], candidates: [ReportScan], clock: ClockBasis,
                           first: Int64, last: Int64, captureEnd: Timestamp) -> [AppFigures] {
        var figures: [AppFigures] = []
        for (a, app) in report.scanners.enumerated() where !app.scans.isEmpty || app.scansStarted > 0 {
            var f = AppFigures(name: app.name, uid: app.uid, filtered: app.isFilteredApp || app.scans.contains(where: \.filtered),
                               reportStarted: app.scansStarted, reportStopped: app.scansStopped, reportTotalMs: app.totalScanMs,
                               reportResults: app.results)
            if let offset = clock.offsetSeconds {
                for r in candidates where r.ref.app == a {
                    let (from, to) = r.span(offset: offset)
                    guard to >= first, from <= last else { continue }
                    f.keptInSpan += 1
                    // Within the capture's span: a scan still on when the report was taken ran on past it.
                    f.keptInSpanMs += max(0, min(to, last) - max(from, first)) / 1_000_000
                    f.keptInSpanResults += r.record.results ?? 0
                }
            }
            for s in scans where s.matched.contains(where: { $0.app == a }) {
                f.matched += s.matched.filter { $0.app == a }.count
                f.matchedMs += s.duration(captureEnd: captureEnd) / 1_000_000
                f.matchedReports += s.reports
            }
            figures.append(f)
        }
        for entry in report.clients + report.scanners where !entry.connections.isEmpty {
            if let i = figures.firstIndex(where: { $0.name == entry.name }) {
                figures[i].connections = max(figures[i].connections, entry.connections.count)
            } else {
                var f = AppFigures(name: entry.name, uid: entry.uid, filtered: false, reportStarted: entry.scansStarted,
                                   reportStopped: entry.scansStopped, reportTotalMs: entry.totalScanMs, reportResults: entry.results)
                f.connections = entry.connections.count
                figures.append(f)
            }
        }
        return figures
    }
}

extension Int64 {
    /// Division rounding toward negative infinity.
    func floorDivided(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
