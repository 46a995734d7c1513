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

            Examples:
              btlens diff before.btsnoop after.btsnoop
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

    func validate() throws {
        if let failOnIncrease, !(failOnIncrease >= 0) { throw ValidationError("--fail-on-increase must be a percentage ≥ 0") }
    }

    func run() throws {
        let energy = try ProfileLoading.energyModel(profile)
        let (configuration, _) = try rules.load()
        let auditor = Auditor(configuration: configuration, energy: energy)
        let baseSide = try side(base, auditor: auditor)
        let headSide = try side(head, auditor: auditor)
        let diff = CaptureDiff(base: baseSide, head: headSide)
        let text: String
        switch format {
        case .text: text = diff.text()
        case .json: text = diff.json().serialized()
        case .markdown: text = diff.markdown()
        }
        if output == "-" {
            Output.line(text)
            Output.flushStandardOutput()
        } else {
            do { try (text + "\n").write(toFile: output, atomically: true, encoding: .utf8) } catch {
                Diagnostics.error(file: output, "cannot write the report: \(error.localizedDescription)")
                throw ExitStatus.inputUnreadable
            }
        }
        if diff.fails(increase: failOnIncrease, failOn: failOn.severity) { throw ExitStatus.findings }
    }

    /// A capture, tracked, audited and priced; or an audit JSON report.
    func side(_ path: String, auditor: Auditor) throws -> DiffSide {
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
        // An archive or bug report is read as `audit` reads it; its first capture is the side compared.
        var side: DiffSide?
        let failed = try Tracking.each([path], anonymizing: anonymizing) { input, model in
            guard side == nil else { return }
            let name = input.displayName == path ? label : input.displayName
            side = DiffSide(label: name, model: model, findings: auditor.audit(model, file: name), energy: auditor.energy)
        }
        guard let side, !failed else { throw ExitStatus.inputUnreadable }
        return side
    }
}
