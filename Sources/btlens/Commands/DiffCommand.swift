import ArgumentParser
import Foundation
import BTCapture
import BTTrack
import BTEnergy
import BTRules
import BTReport

struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two captures of the same scenario (or two audit JSON reports): findings and radio charge.",
        discussion: """
            BASE and HEAD are two captures of the same scenario — say the app before and after a change, recorded \
            by the same UI test — or two `btlens audit --format json` reports. Findings are matched by fingerprint \
            (never by message or connection handle) into new, fixed and unchanged. For captures, the phone's radio \
            charge is compared in all and per activity (scanning, each peer's connections, advertising), with \
            connection counts, time connected and ATT transactions; for audit reports, the total charge their \
            captures recorded.

            Exit codes: 0, or 1 when the phone's radio charge rose more than --fail-on-increase PCT percent or a \
            new finding reaches --fail-on (default warning; never to ignore findings); 2 usage; 3 an input could \
            not be read.

            --format json prints {"base", "head", "findings": {"new", "fixed", "unchanged"}, "charge": \
            {"base_mc", "head_mc", "change_pct"}, "activities": [{"name", "base", "head"}], "connections", \
            "connection_s", "att_transactions"}; schema Sources/BTReport/Schemas/diff.schema.json. --format \
            markdown is a pull-request comment.

            Test farms: when BASE and HEAD are directories (two runs of a device farm's tests, say builds 411 \
            and 412), captures are paired by test and device from their names (<test>-<serial>-btsnoop_hci.log; \
            --test-pattern as in audit), each pair compared as two captures are, and the report gives per test and \
            in total the new and fixed findings and the change in the phone's radio charge. --fail-on-increase and \
            --fail-on apply per test (its devices together): exit 1 when any test fails. --format json prints \
            {"base", "head", "tests": [{"test", "devices", "new", "fixed", "unchanged", "charge", "failed", \
            "new_findings", "fixed_findings", "base_only", "head_only"}], "total", "unnamed"}; schema \
            Sources/BTReport/Schemas/farm-diff.schema.json.

            Examples:
              btlens diff before.btsnoop after.btsnoop
              btlens diff --fail-on-increase 5 farm/build-411 farm/build-412
              btlens diff --fail-on-increase 10 --format markdown main.log pr.log > comment.md
              btlens audit --format json -o base.json main.log && btlens diff base.json pr.json
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, markdown }

    @Argument(help: "The capture (or audit JSON report) before the change.")
    var base: String

    @Argument(help: "The capture (or audit JSON report) after the change.")
    var head: String

    @Option(name: .long, help: "Output: text, json or markdown.")
    var format: Format = .text

    @Option(name: [.short, .long], help: "Write the report to this file (- = standard output).")
    var output: String = "-"

    @Option(name: .long, help: "Exit 1 when the phone's radio charge rose more than this many percent.")
    var failOnIncrease: Double?

    @Option(name: .long, help: "Exit 1 when a new finding has at least this severity: info, warning (default), error, never.")
    var failOn: AuditCommand.FailOn = .warning

    @Option(name: .long, help: "A YAML radio profile (see btlens energy).")
    var profile: String?

    @OptionGroup var rules: RuleOptions

    @OptionGroup var anonymizing: AnonymizeOptions

    @Option(name: .long, help: ArgumentHelp("Directories: the regular expression naming a capture's test and device (named groups test, serial).", valueName: "regex"))
    var testPattern: String?

    func validate() throws {
        if let failOnIncrease, !(failOnIncrease >= 0) { throw ValidationError("--fail-on-increase must be a percentage ≥ 0") }
    }

    func run() throws {
        let energy = try ProfileLoading.energyModel(profile)
        let (configuration, _) = try rules.load()
        let auditor = Auditor(configuration: configuration, energy: energy)
        if TestBaselines.isDirectory(base) && TestBaselines.isDirectory(head) {
            try runFarm(auditor: auditor)
            return
        }
        let progress = Progress(label: "diff", sizes: [fileSize(base), fileSize(head)])
        defer { progress.finish() }
        let baseSide = try side(base, auditor: auditor, reading: progress.start(0))
        let headSide = try side(head, auditor: auditor, reading: progress.start(1))
        progress.finish()
        let diff = CaptureDiff(base: baseSide, head: headSide, directory: TemporaryFiles.directory)
        // Written as it is made: the findings are read back one at a time.
        try ReportFile.writeStreamed(to: output) { out in
            switch format {
            case .text: diff.text(out)
            case .json: diff.write(to: JSONStreamWriter(write: out))
            case .markdown: diff.markdown(out)
            }
        }
        if let failure = diff.failure {
            Diagnostics.error(file: TemporaryFiles.directory, "cannot set the comparison aside: \(failure)")
            throw ExitStatus.inputUnreadable
        }
        for side in [baseSide, headSide] {
            if let failure = side.findings.failure {
                Diagnostics.error(file: side.label, "\(failure)")
                throw ExitStatus.inputUnreadable
            }
        }
        if diff.fails(increase: failOnIncrease, failOn: failOn.severity) { throw ExitStatus.findings }
    }

    func write(_ text: String) throws {
        if output == "-" {
            Output.line(text)
            Output.flushStandardOutput()
        } else {
            do { try ReportFile.write(text + "\n", to: output) } catch {
                Diagnostics.error(file: output, "cannot write the report: \(error.localizedDescription)")
                throw ExitStatus.inputUnreadable
            }
        }
    }

    /// Two directories: a device farm's two runs, paired by test and device.
    func runFarm(auditor: Auditor) throws {
        let naming: TestCaseNaming
        do { naming = try TestCaseNaming(pattern: testPattern ?? TestCaseNaming.defaultPattern) } catch {
            throw ValidationError("--test-pattern: \(error)")
        }
        var failed = false
        let baseFiles = AuditCommand.expand([base]).files, headFiles = AuditCommand.expand([head]).files
        // One progress line over both runs' files.
        let progress = Progress(label: "diff", sizes: (baseFiles + headFiles).map(fileSize))
        func captures(_ directory: String, _ files: [String], first: Int) -> [(file: String, testCase: TestCaseNaming.TestCase?, side: DiffSide)] {
            if files.isEmpty {
                Diagnostics.error(file: directory, "no captures found")
                failed = true
            }
            var out: [(file: String, testCase: TestCaseNaming.TestCase?, side: DiffSide)] = []
            for (index, file) in files.enumerated() {
                do {
                    let side = try self.side(file, auditor: auditor, reading: progress.start(first + index), spilling: false)
                    out.append((file, naming.testCase(file), side))
                } catch {
                    failed = true  // reported by side()
                }
            }
            return out
        }
        let baseCaptures = captures(base, baseFiles, first: 0)
        let headCaptures = captures(head, headFiles, first: baseFiles.count)
        progress.finish()
        let diff = FarmDiff(base: base, head: head, baseCaptures: baseCaptures, headCaptures: headCaptures)
        let increase = failOnIncrease, severity = failOn.severity
        switch format {
        case .text: try write(diff.text(increase: increase, failOn: severity))
        case .json: try write(diff.json(increase: increase, failOn: severity).serialized())
        case .markdown: try write(diff.markdown(increase: increase, failOn: severity))
        }
        if failed { throw ExitStatus.inputUnreadable }
        if !diff.failing(increase: increase, failOn: severity).isEmpty { throw ExitStatus.findings }
    }

    /// A capture, tracked, audited and priced; or an audit JSON report. `reading`: its file on the progress line.
    /// `spilling`: the findings and the links' costs wait in temporary files (two captures); a farm's many sides
    /// hold theirs, as a file per capture would run out of descriptors.
    func side(_ path: String, auditor: Auditor, reading: Progress.Reading, spilling: Bool = true) throws -> DiffSide {
        defer { reading.finish() }
        let label = path == "-" ? "-" : String(path.split(separator: "/").last ?? Substring(path))
        if path != "-", let handle = FileHandle(forReadingAtPath: path) {
            let head = handle.readData(ofLength: 64)
            try? handle.close()
            if DiffSide.isJSON(head) {
                guard let data = FileManager.default.contents(atPath: path) else {
                    Diagnostics.error(file: path, "cannot read it")
                    throw ExitStatus.inputUnreadable
                }
                do { return try DiffSide(label: label, auditJSON: data) } catch {
                    Diagnostics.error(file: path, "\(error)")
                    throw ExitStatus.inputUnreadable
                }
            }
        }
        // An archive or bug report is read as `audit` reads it; its first capture is the side compared. Its links
        // are judged and let go as they finish, as `audit` judges them, and priced then (`DiffLinks`); the
        // findings wait in a temporary file.
        var side: DiffSide?
        var judging: (spill: FindingSpill, judgement: LinkJudgement, links: DiffLinks)?
        let directory = spilling ? TemporaryFiles.directory : nil
        let failed = try Tracking.each([path], label: "diff", within: reading, anonymizing: anonymizing, retirement: {
            let spill = spilling ? AuditCommand.findingSpill(path) : try! FindingSpill(directory: nil)
            let judgement = auditor.linkJudgement(spill: spill)
            let links = DiffLinks(energy: auditor.energy, directory: directory)
            judging = (spill, judgement, links)
            return LinkRetirement(window: AuditCommand.retirementWindow, keeping: .summary, interest: judgement.interest) { c, kept in
                judgement.judge(c, kept: kept)
                if kept { links.add(c) }
            }
        }, keepsModels: false) { input, model in
            guard side == nil, let judging else { return }
            let name = input.displayName == path ? label : input.displayName
            do {
                let findings = try auditor.audit(model, file: name, judged: judging.judgement, spill: judging.spill).reported
                side = DiffSide(label: name, model: model, findings: findings, energy: auditor.energy, links: judging.links,
                                directory: directory)
            } catch {
                Diagnostics.error(file: path, "\(error)")
                throw ExitStatus.inputUnreadable
            }
        }
        guard let side, !failed else { throw ExitStatus.inputUnreadable }
        return side
    }
}
