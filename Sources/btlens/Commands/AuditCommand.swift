import BTWire
import ArgumentParser
import Dispatch
import Foundation
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules
import BTReport

struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Find where an app wastes radio time and battery, and say what to do instead.",
        discussion: """
            Runs the best-practice rules (btlens rules) over the tracking model of each capture. Several files or a \
            directory (every capture in it, recursively) are audited in parallel into one report.

            Formats: text (grouped per connection, colour on a tty), json (a top-level "findings" array; schema \
            Sources/BTReport/Schemas/audit.schema.json), sarif (SARIF 2.1.0, each result located at the record's byte \
            offset and length in the capture), junit (a testsuite per capture, a testcase per rule, a failure per \
            finding at or above --fail-on), markdown (a pull-request comment) and html (a self-contained page with an SVG \
            timeline of scans, advertising and connections with the findings on them).

            Cost: every finding carries what its fix would save (radio time and charge, phone and peripheral, with a \
            low–high range), priced by the energy model of btlens energy (--profile FILE to use another phone or \
            peripheral). Text, Markdown and HTML order findings by cost within severity, group repeats of one rule \
            on one peer, and end with the total ("findings waste about 4.1 mAh per hour of use, 38 % of the app's \
            radio charge").

            Air captures: each link is judged as its central's; the rules that need the host's scan and advertising \
            commands (BTL001, BTL002, BTL007, BTL013) do not apply, and the report says so once (JSON "notes").

            Configuration: --config FILE, or .btlens.yml in the current directory when present (YAML: fail_on, \
            disabled, enabled, rules: {ID or name: {severity, options}}). A baseline (--write-baseline, then \
            --baseline) lists accepted findings so CI fails only on new ones.

            Exit codes: 0 no finding reaches --fail-on, 1 at least one does, 2 usage or configuration error, \
            3 an input could not be read (or a directory held no capture), or --output/--write-baseline could \
            not be written.

            Examples:
              btlens audit samples/wasteful-central.btsnoop
              btlens audit --format sarif --output btlens.sarif captures/
              btlens audit --fail-on error --disable BTL004 btsnoop_hci.log
              btlens audit --profile pixel4.yml --format json btsnoop_hci.log | jq '.findings[] | {rule, cost}'
              btlens audit --write-baseline .btlens-baseline.json captures/ && btlens audit --baseline .btlens-baseline.json captures/

            Test farms: in a directory, captures named as Android's test harness names them, \
            <test>-<serial>-btsnoop_hci.log, are a test run: --format junit makes each one testcase (classname the \
            device serial, name the test) holding its findings, and --baseline DIR / --write-baseline DIR keep one \
            baseline per test (DIR/<test>.json). --test-pattern sets the regular expression over file names (named \
            groups test and serial; default \(TestCaseNaming.defaultPattern)) and applies it to files named on \
            the command line too.
              btlens audit --format junit -o junit.xml farm/build-412/
              btlens audit --write-baseline baselines/ farm/build-411/ && btlens audit --baseline baselines/ farm/build-412/
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, sarif, junit, markdown, html
    }

    enum FailOn: String, ExpressibleByArgument, CaseIterable {
        case info, warning, error, never
        var severity: Severity? { Severity(rawValue: rawValue) }
    }

    @Argument(help: "Capture files, archives, bug reports or directories; - reads standard input.")
    var inputs: [String]

    @Option(name: .long, help: "Report format: text, json, sarif, junit, markdown, html.")
    var format: Format = .text

    @Option(name: [.short, .long], help: "Write the report to this file (- = standard output).")
    var output: String = "-"

    @Option(name: .long, help: "Exit 1 when a finding has at least this severity: info, warning (default), error, never.")
    var failOn: FailOn?

    @OptionGroup var rules: RuleOptions

    @OptionGroup var anonymizing: AnonymizeOptions

    @Flag(name: .long, help: "Accept a capture with no HCI packet or link-layer frame (otherwise exit 7).")
    var allowEmpty = false

    @Option(name: .long, help: "Findings listed in this baseline file are accepted and not reported (a directory: one baseline per test, DIR/<test>.json).")
    var baseline: String?

    @Option(name: .long, help: "Write the findings of this run as a baseline file, then exit 0 (an existing directory or DIR/: one per test).")
    var writeBaseline: String?

    @Option(name: .long, help: ArgumentHelp("Test farms: the regular expression naming a capture's test and device (named groups test, serial).", valueName: "regex"))
    var testPattern: String?

    @Option(name: .long, help: "Captures audited in parallel (default: the number of CPUs).")
    var jobs: Int?

    @Option(name: .long, help: "A YAML radio profile (see btlens energy) that prices what each finding wastes.")
    var profile: String?

    @Option(name: .long, help: ArgumentHelp("Judge only this app's scans and links (an Android bug report names them); the others are named once as context (also the configuration file's app).", valueName: "package"))
    var app: String?

    @Option(name: .long, help: ArgumentHelp("The per-app sections to attribute with when the capture came without its bug report: a bug report's text or `dumpsys bluetooth_manager` output.", valueName: "file"))
    var bugreport: String?

    @Flag(name: .shortAndLong, help: "Text format: show the advice under every finding.")
    var verbose = false

    @Option(name: .long, help: "Colour: auto (only on a terminal), always, never.")
    var color: DecodeCommand.ColorMode = .auto

    func validate() throws {
        if inputs.isEmpty { throw ValidationError("give at least one capture file or directory (or - for standard input)") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func loadConfiguration() throws -> (AuditConfiguration, Severity?) {
        let (configuration, file) = try rules.load()
        let threshold = failOn ?? file.failOn.flatMap(FailOn.init(rawValue:)) ?? .warning
        return (configuration, threshold.severity)
    }

    /// `--app`, else the configuration file's `app`.
    func focusedApp() throws -> String? {
        try app ?? rules.load().file.app
    }

    /// Files to audit: explicit files as given, directories expanded to the captures inside them.
    func expandInputs() -> (files: [String], missing: [String]) { Self.expand(inputs) }

    static func expand(_ inputs: [String]) -> (files: [String], missing: [String]) {
        var files: [String] = []
        var missing: [String] = []
        for input in inputs {
            var isDirectory: ObjCBool = false
            if input != "-" && FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) && isDirectory.boolValue {
                let base = URL(fileURLWithPath: input)
                let found = (FileManager.default.enumerator(atPath: input)?.allObjects as? [String] ?? []).sorted()
                for relative in found where !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                    let path = base.appendingPathComponent(relative).path
                    var dir: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: path, isDirectory: &dir), !dir.boolValue,
                          Self.looksLikeCapture(path)
                    else { continue }
                    files.append(input.hasSuffix("/") ? input + relative : input + "/" + relative)
                }
            } else if input == "-" || FileManager.default.fileExists(atPath: input) {
                files.append(input)
            } else {
                missing.append(input)
            }
        }
        return (files, missing)
    }

    /// In a directory, only files whose content is a capture, or an archive or bug report holding one, are
    /// audited (a README next to them is not).
    static func looksLikeCapture(_ path: String) -> Bool {
        guard let inputs = try? CaptureInputs.resolve(path) else { return false }
        return inputs.count > 1 || inputs.contains { (try? $0.open()) != nil }
    }

    func run() throws {
        let (configuration, threshold) = try loadConfiguration()
        let naming: TestCaseNaming
        do { naming = try TestCaseNaming(pattern: testPattern ?? TestCaseNaming.defaultPattern) } catch {
            throw ValidationError("--test-pattern: \(error)")
        }
        let accepted: Baseline?
        let perTest: TestBaselines?
        if let baseline, TestBaselines.isDirectory(baseline) {
            do { perTest = try TestBaselines(directory: baseline) } catch {
                Diagnostics.error(file: baseline, "\(error)")
                throw ExitStatus.usage
            }
            accepted = nil
        } else if let baseline {
            do { accepted = try Baseline(path: baseline) } catch {
                Diagnostics.error(file: baseline, "\(error)")
                throw ExitStatus.usage
            }
            perTest = nil
        } else {
            accepted = nil
            perTest = nil
        }
        let (files, missing) = expandInputs()
        // A test run's captures: those found in directories, or every one when --test-pattern is given.
        let patternGiven = testPattern != nil, named = Set(inputs)
        @Sendable func testCase(_ file: String) -> TestCaseNaming.TestCase? {
            guard patternGiven || !named.contains(file) else { return nil }
            return naming.testCase(file)
        }
        for m in missing { Diagnostics.error(file: m, "No such file or directory") }
        if files.isEmpty && missing.isEmpty {
            // Nothing was audited: an empty report would read as a clean one.
            Diagnostics.error(file: nil, "no captures found in \(inputs.joined(separator: ", "))")
            throw ExitStatus.inputUnreadable
        }

        let auditor = Auditor(configuration: configuration, energy: try ProfileLoading.energyModel(profile))
        let focusApp = try focusedApp()
        var readApps: BugReportApps?
        if let bugreport {
            do { readApps = try CaptureInput.bugReportApps(path: bugreport) } catch {
                Diagnostics.error(file: bugreport, "\(error)")
                throw ExitStatus.inputUnreadable
            }
            if readApps == nil { Diagnostics.warning(file: bugreport, "no per-app Bluetooth sections (GATT Scanner Map, GATT Client Map, BatteryStats) in it") }
        }
        let givenApps = readApps
        // Each capture an input holds is audited on its own (an archive's members, a bug report's log), rotated
        // pairs as one; an input that holds none is reported unreadable in its place.
        let units = CaptureInputs.resolve(files)
        let results = ResultSlots(count: units.count)
        // One capture: its path and how much of it is read; several: how many are done.
        let inputs = units.map { try? $0.get() }
        let progress = Progress(label: inputs.count == 1 ? inputs[0]?.path ?? "audit" : "audit",
                                sizes: inputs.map { $0.map(Progress.size) ?? 0 })
        let workers = min(jobs ?? ProcessInfo.processInfo.activeProcessorCount, max(units.count, 1))
        let queue = DispatchQueue(label: "btlens.audit", attributes: .concurrent)
        let group = DispatchGroup()
        let semaphore = DispatchSemaphore(value: workers)
        for (index, unit) in units.enumerated() {
            semaphore.wait()
            queue.async(group: group) {
                let (capture, page): (AuditedCapture, AuditHTML.Capture?)
                let reading = progress.start(index)
                defer { reading.finish() }
                switch unit {
                case .success(let input):
                    let chosen = perTest.map { $0.baseline(for: testCase(input.path)) } ?? accepted
                    (capture, page) = Self.audit(input, auditor: auditor, baseline: chosen, anonymizer: anonymizing.makeAnonymizer(),
                                                 html: format == .html, progress: reading.update, app: focusApp, apps: givenApps)
                case .failure(let failure): (capture, page) = (AuditedCapture(file: failure.path, findings: [], error: failure.error.message), nil)
                }
                results.set(index, capture, page: format == .html ? page : nil)
                semaphore.signal()
            }
        }
        group.wait()
        progress.finish()
        var captures = results.values
        captures += missing.map { AuditedCapture(file: $0, findings: [], error: "No such file or directory") }
        for c in captures where c.error != nil && !missing.contains(c.file) { Diagnostics.error(file: c.file, c.error ?? "") }
        if let accepted, let baseline, !accepted.legacyFingerprints.isEmpty {
            // Written by a btlens whose fingerprints held the message: none of those entries matches any more.
            let old = accepted.legacyFingerprints.count
            let again = captures.reduce(0) { $0 + $1.findings.lazy.filter(accepted.acceptedBeforeV2).count }
            Diagnostics.warning(file: baseline, "\(old) entr\(old == 1 ? "y uses" : "ies use") the fingerprint format of btlens before "
                + "\(Finding.fingerprintVersion) and match\(old == 1 ? "es" : "") nothing (\(Plural.of(again, "finding")) of this run "
                + "that \(old == 1 ? "it" : "they") accepted \(again == 1 ? "is" : "are") reported again); write it again with --write-baseline")
        }

        let run = AuditRun(captures: captures, failOn: threshold, version: BTLens.version)
        if let writeBaseline {
            // A baseline missing an unreadable capture's findings would make them all "new" next time.
            if run.status == .unreadable {
                Diagnostics.error(file: writeBaseline, "not written: an input could not be read")
                throw ExitStatus.inputUnreadable
            }
            if TestBaselines.isDirectory(writeBaseline) {
                try TestBaselines.write(run, to: writeBaseline, testCase: testCase)
                return
            }
            let findings = run.baselineFindings
            try checkReadBack(captures)
            try write(AuditJSON.baseline(findings), to: writeBaseline)
            Diagnostics.printRaw("btlens: wrote \(findings.count) accepted findings to \(writeBaseline)")
            return
        }
        // Every format is written as it is made, never held whole.
        switch format {
        case .json, .sarif:
            try writeStreamed(to: output) { out in
                let writer = JSONStreamWriter(write: out)
                if format == .json { AuditJSON.write(run, to: writer) } else { AuditSARIF.write(run, to: writer) }
            }
        case .text:
            let colored = color == .always || (color == .auto && output == "-" && Output.standardOutputIsTerminal)
            try writeStreamed(to: output) { AuditTextReport.write(run, colored: colored, verbose: verbose, to: $0) }
        case .junit:
            var testCases: [String: TestCaseNaming.TestCase] = [:]
            for c in captures { if let t = testCase(c.file) { testCases[c.file] = t } }
            try writeStreamed(to: output) { AuditJUnit.write(run, testCases: testCases, to: $0) }
        case .markdown:
            try writeStreamed(to: output) { AuditMarkdown.write(run, to: $0) }
        case .html:
            try writeStreamed(to: output) { AuditHTML.write(run, captures: results.pages, to: $0) }
        }
        try finish(run, captures: captures)
    }

    /// After the report: an empty capture's error, and the exit status the run calls for.
    func finish(_ run: AuditRun, captures: [AuditedCapture]) throws {
        try checkReadBack(captures)
        let empty = captures.filter(\.nothingToJudge)
        if !empty.isEmpty && !allowEmpty {
            // An empty capture must not pass a CI gate as a clean one.
            for c in empty { Diagnostics.error(file: c.file, "nothing to judge: no HCI packet or link-layer frame (is snoop logging on? --allow-empty accepts it)") }
            if run.status != .unreadable { throw ExitStatus.nothingToJudge }
        }
        switch run.status {
        case .passed: break
        case .failed: throw ExitStatus.findings
        case .unreadable: throw ExitStatus.inputUnreadable
        }
    }

    /// Findings that could not be read back from their spill file (the disk failed under it): the report holds
    /// placeholders in their place, so the run must not pass.
    func checkReadBack(_ captures: [AuditedCapture]) throws {
        for c in captures {
            guard let failure = c.findings.failure ?? c.accepted.failure else { continue }
            Diagnostics.error(file: c.file, "\(failure)")
            throw ExitStatus.inputUnreadable
        }
    }

    /// Finished links kept whole before the oldest is judged (`LinkRetirement`); `BTLENS_LINK_WINDOW` changes it
    /// for tests that compare early judgement with judgement at the end.
    static let retirementWindow = windowFromEnvironment ?? LinkRetirement.defaultWindow
    static let windowFromEnvironment = ProcessInfo.processInfo.environment["BTLENS_LINK_WINDOW"].flatMap { Int($0) }

    static func audit(_ input: CaptureInput, auditor: Auditor, baseline: Baseline?, anonymizer: Anonymizer? = nil,
                      html: Bool = false, progress: ((Int64) -> Void)? = nil, app: String? = nil,
                      apps given: BugReportApps? = nil) -> (AuditedCapture, AuditHTML.Capture?) {
        let path = input.path
        do {
            // The bug report's per-app sections, read first: with them every link is kept whole until the
            // attribution, which needs the links' peers, has named each link's app.
            var apps = given
            if apps == nil {
                do { apps = try input.bugReportApps() } catch {
                    Diagnostics.warning(file: path, "the bug report's per-app sections cannot be read: \(error)")
                }
            }
            let capture = try input.open()
            for notice in input.notices { Diagnostics.printRaw("btlens: \(path): note: \(notice)") }
            var options = TrackerOptions.withoutAdvertisers
            // Findings wait in a temporary file as they are made, not in memory, until the report reads them.
            let spill = findingSpill(path)
            // Links judged as they finish and then slimmed, unless a bug report names the apps. The HTML report
            // sets aside what it draws and prints of each judged link then (`AuditHTMLLinks`).
            let judgement = apps != nil ? nil : auditor.linkJudgement(pricing: true, spill: spill)
            let judgedPage = html && judgement != nil ? htmlLinks(path) : nil
            if let judgement, let judgedPage {
                options.retirement = LinkRetirement(window: retirementWindow, keeping: .summary, interest: judgement.interest) { c, kept in
                    judgement.judge(c, kept: kept)
                    judgedPage.keep(c, kept: kept)
                }
            } else {
                options.retirement = judgement?.retirement(window: retirementWindow)
            }
            options.connectionsWhileScanningListed = 0  // no audit report lists them
            options.scanDevicesListed = 0  // no audit report lists a scan's devices
            options.setScanSessionsAside()
            var collector = TrackingCollector(options: options, progress: progress)
            var model = try capture.accept(&collector, anonymizer: anonymizer)
            InputFiles.reportIssues(path, capture.issues)
            if let refusal = capture.issues.refusal {
                return (AuditedCapture(file: path, findings: [], error: refusal), nil)
            }
            if let failure = judgedPage?.failure {
                return (AuditedCapture(file: path, findings: [], error: "cannot set the judged links aside: \(failure)"), nil)
            }
            if let apps { model.attribution = BugReportClock.attribute(model, report: apps) }
            var focus: AppFocus?
            if let app {
                let energy = auditor.energy
                focus = AppFocus.focus(&model, on: app) { session, seconds in energy.scanCost(session, duration: seconds).chargeMC }
            }
            let attribution = model.attribution, end = model.lastTimestamp
            let (findings, accepted) = try auditor.audit(model, file: path, judged: judgement, spill: spill) { f in
                if let attribution { AttributionReport.assignOwner(&f, attribution, captureEnd: end, preferring: app) }
                return baseline?.contains(f) ?? false ? .accepted : .reported
            }
            if let failure = model.setAsideFailure {
                return (AuditedCapture(file: path, findings: [], error: "cannot set the capture's scans and links aside in \(TemporaryFiles.directory): \(failure)"), nil)
            }
            var audited = AuditedCapture(file: path, findings: Findings(findings), records: model.records,
                                         connections: model.linkCount, accepted: Findings(accepted), platform: model.platform)
            audited.setRadioCharge(EnergyReport.accountedTotal(model: model, energy: auditor.energy, priced: judgement?.priced))
            audited.hostChargeMC = auditor.energy.profile.phone.awakeMilliamps * model.hostWakeups.awakeSeconds.typical
            audited.notes = AuditNotes.notes(model, phone: auditor.energy.profile.phone)
            audited.attribution = model.attribution
            audited.focus = focus
            audited.captureEnd = model.lastTimestamp
            if model.hasNothingToJudge {
                audited.nothingToJudge = true
                audited.notes.insert("nothing to judge: the capture holds no HCI packet or link-layer frame (is snoop logging on?)", at: 0)
            }
            if let first = model.firstTimestamp, let last = model.lastTimestamp {
                audited.captureSeconds = max(0, Double(last.nanoseconds - first.nanoseconds) / 1e9)
            }
            return (audited, html ? AuditHTML.Capture(model: model, judged: judgedPage) : nil)
        } catch let error as CaptureError {
            return (AuditedCapture(file: path, findings: [], error: error.message), nil)
        } catch {
            return (AuditedCapture(file: path, findings: [], error: "\(error)"), nil)
        }
    }

    /// Where a capture's findings wait until the report is written: an unlinked file in the temporary directory
    /// (`$TMPDIR`), or memory when none can be made there.
    static func findingSpill(_ path: String) -> FindingSpill {
        do { return try FindingSpill(directory: FileManager.default.temporaryDirectory.path) } catch {
            Diagnostics.warning(file: path, "\(error); keeping them in memory")
            return try! FindingSpill(directory: nil)
        }
    }

    /// Where the HTML report sets aside what it reads of each judged link: unlinked files in the temporary
    /// directory (`$TMPDIR`), or memory when none can be made there.
    static func htmlLinks(_ path: String) -> AuditHTMLLinks {
        let links = AuditHTMLLinks(spillDirectory: TemporaryFiles.directory)
        if let failure = links.spillFailure {
            Diagnostics.warning(file: path, "\(failure): the judged links' timelines are kept in memory")
        }
        return links
    }

    /// A report `body` writes piece by piece (`ReportFile.writeStreamed`).
    func writeStreamed(to path: String, _ body: (@escaping (String) -> Void) -> Void) throws {
        try ReportFile.writeStreamed(to: path, body)
    }

    func write(_ text: String, to path: String) throws {
        if path == "-" {
            Output.line(text)
            Output.flushStandardOutput()
            return
        }
        do {
            try ReportFile.write(text + "\n", to: path)
        } catch {
            Diagnostics.error(file: path, "cannot write the report: \(error.localizedDescription)")
            throw ExitStatus.inputUnreadable
        }
    }
}

/// Results of the parallel audit, one slot per input, filled from worker threads.
final class ResultSlots: @unchecked Sendable {
    private var slots: [AuditedCapture?]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    private var kept: [String: AuditHTML.Capture] = [:]

    func set(_ index: Int, _ value: AuditedCapture, page: AuditHTML.Capture?) {
        lock.lock()
        slots[index] = value
        if let page { kept[value.file] = page }
        lock.unlock()
    }

    /// What the HTML report reads of each capture (its model and judged links), by file.
    var pages: [String: AuditHTML.Capture] {
        lock.lock()
        defer { lock.unlock() }
        return kept
    }

    var values: [AuditedCapture] {
        lock.lock()
        defer { lock.unlock() }
        return slots.compactMap { $0 }
    }
}
