import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import BTCapture
import BTRules
import BTLive

extension ExitStatus {
    /// `live`: the kernel has no Bluetooth (socket(AF_BLUETOOTH) fails with EAFNOSUPPORT), or the monitor
    /// channel cannot be opened or read.
    static let noBluetooth = ExitStatus(code: 4)
    /// `live`: no permission for the monitor channel (EPERM/EACCES: needs root or CAP_NET_RAW).
    static let bluetoothPermission = ExitStatus(code: 5)
    /// `live`: no controller announced itself within a second (or not the one `--index` names).
    static let noController = ExitStatus(code: 6)
}

struct LiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Watch Bluetooth traffic as it happens: decoded records, connections and findings.",
        discussion: """
            Without an input, captures from the Linux HCI monitor channel (every controller, as btmon does; \
            needs root or CAP_NET_RAW). --follow FILE follows a btsnoop or PacketLogger file that is still being \
            written (from its start, or its current end with --from-end), across truncation and rotation. - reads \
            a btsnoop stream from standard input.

            Prints one line per record (as btlens decode), a line (==) when a connection comes up, goes down or \
            fails, and a line (!!) when a rule finds something — rules that can decide early report within about \
            a second of capture time. Ctrl-C (SIGINT) or SIGTERM ends the capture cleanly: the summary and every \
            finding are printed and the --write file is complete (it is written through record by record, in the \
            Linux monitor btsnoop format that btmon -r and Wireshark open). The rules run as btlens audit runs \
            them: --config FILE or .btlens.yml in the current directory, with --enable/--disable on top.

            Exit codes: 0 the capture ended (interrupted or end of input), 2 usage error, 3 input missing or not a \
            capture, or the --write file cannot be created, 4 no Bluetooth in the kernel (or the monitor channel \
            failed), 5 no permission for the monitor channel, 6 no Bluetooth controller (or not the --index one) \
            within 1 s.

            Examples:
              sudo btlens live --write session.btsnoop
              sudo setcap cap_net_raw+ep $(command -v btlens) && btlens live --index 0
              btlens live --follow /var/log/bt/btmon.btsnoop --from-end
              adb exec-out su -c 'tail -f -c +1 /data/misc/bluetooth/logs/btsnoop_hci.log' | btlens live -
              sudo sh -c 'btmon -w /dev/fd/3 3>&1 >/dev/null' | btlens live --format json - | jq 'select(.type == "finding")'
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
        var live: LiveFormat { self == .json ? .json : .text }
    }

    @Argument(help: "- reads a btsnoop (or PacketLogger) stream from standard input. Leave out to capture from the HCI monitor socket.")
    var input: String?

    @Option(name: .long, help: "Only controller hciN (others are ignored; with the socket, exit 6 if it is absent).")
    var index: UInt16?

    @Option(name: .long, help: "Also save the capture as btsnoop (Linux monitor datalink 2001), flushed after every record.")
    var write: String?

    @Option(name: .long, help: "Output: text (lines as btlens decode) or json (JSON Lines).")
    var format: Format = .text

    @Option(name: .long, help: "Follow a btsnoop or PacketLogger file that is still being written.")
    var follow: String?

    @Flag(name: .long, help: "With --follow: start at the file's current end instead of its start.")
    var fromEnd = false

    @OptionGroup var rules: RuleOptions

    func validate() throws {
        if let input, input != "-" {
            throw ValidationError("live reads '-' (standard input), --follow FILE, or the monitor socket (no argument); for a finished capture use btlens audit or decode")
        }
        if input != nil && follow != nil { throw ValidationError("give either - or --follow FILE, not both") }
        if fromEnd && follow == nil { throw ValidationError("--from-end needs --follow FILE") }
    }

    func run() throws {
        let configuration = try rules.load().configuration
        let stop = LiveStop()
        stop.installSignalHandlers()
        let issues = IssueLog()
        if let follow {
            try runFollowing(follow, stop: stop, issues: issues, configuration: configuration)
        } else if input == "-" {
            try runStandardInput(stop: stop, issues: issues, configuration: configuration)
        } else {
            try runSocket(stop: stop, issues: issues, configuration: configuration)
        }
    }

    // MARK: - Inputs

    func runSocket(stop: LiveStop, issues: IssueLog, configuration: AuditConfiguration) throws {
        let source: MonitorSocketSource
        do {
            source = try MonitorSocketSource.open(stop: stop, issues: issues)
            try source.awaitController(index: index)
        } catch {
            throw fail(error)
        }
        let session = try makeSession(label: "Bluetooth", issues: issues, configuration: configuration)
        source.onIdle = { session.idle() }
        var visitor = LiveVisitor(session: session, stop: stop)
        try visitor.visit(source)
        end(session, stop: stop, label: "Bluetooth", issues: issues)
        if let failure = source.failure { throw fail(failure) }
    }

    func runFollowing(_ path: String, stop: LiveStop, issues: IssueLog, configuration: AuditConfiguration) throws {
        let source: FollowingSource
        do {
            source = try FollowingSource(path: path, fromEnd: fromEnd, stop: stop, issues: issues)
        } catch let error as CaptureError {
            Diagnostics.error(file: path, error.message)
            throw ExitStatus.inputUnreadable
        }
        let session = try makeSession(label: path, issues: issues, configuration: configuration)
        source.onIdle = { session.idle() }
        source.onChange = { session.note($0.note) }
        var visitor = LiveVisitor(session: session, stop: stop)
        try visitor.visit(source)
        end(session, stop: stop, label: path, issues: issues)
        if let failure = source.failure {
            Diagnostics.error(file: path, failure.message)
            throw ExitStatus.inputUnreadable
        }
    }

    func runStandardInput(stop: LiveStop, issues: IssueLog, configuration: AuditConfiguration) throws {
        let stream: LiveStreamInput
        do {
            stream = try LiveStreamInput(fd: 0, stop: stop, issues: issues)
        } catch let error as CaptureError {
            Diagnostics.error(file: "-", error.message)
            throw ExitStatus.inputUnreadable
        }
        let session = try makeSession(label: "<stdin>", issues: issues, configuration: configuration)
        stream.waiter.onIdle = { session.idle() }
        var visitor = LiveVisitor(session: session, stop: stop)
        if let capture = stream.capture { try capture.accept(&visitor) }
        end(session, stop: stop, label: "-", issues: issues)
    }

    // MARK: - Shared

    func makeSession(label: String, issues: IssueLog, configuration: AuditConfiguration) throws -> LiveSession {
        var writer: LiveCaptureWriter?
        if let write {
            do {
                writer = try LiveCaptureWriter(path: write)
            } catch let error as CaptureError {
                Diagnostics.error(file: write, "cannot write the capture: \(error.message)")
                throw ExitStatus.inputUnreadable
            }
        }
        var options = LiveOptions(label: label, index: index, format: format.live)
        options.configuration = configuration
        options.version = BTLens.version
        return LiveSession(options: options, output: TerminalLiveOutput(label: label), writer: writer, issues: issues)
    }

    func end(_ session: LiveSession, stop: LiveStop, label: String, issues: IssueLog) {
        let reason: String
        switch stop.signal {
        case SIGINT?: reason = "interrupted (SIGINT)"
        case SIGTERM?: reason = "terminated (SIGTERM)"
        case let s?: reason = "stopped by signal \(s)"
        case nil: reason = stop.isRequested ? "stopped" : "end of input"
        }
        session.finish(reason: reason)
        Output.flushStandardOutput()
        InputFiles.reportIssues(label, issues)
    }

    /// Prints the one-line error and picks the documented exit status.
    func fail(_ error: LiveError) -> ExitStatus {
        Output.flushStandardOutput()
        Diagnostics.error(file: "Bluetooth", error.description)
        switch error.code {
        case .permission: return .bluetoothPermission
        case .noController: return .noController
        case .noBluetooth, .readFailed: return .noBluetooth
        }
    }

}

/// Live lines on buffered standard output, notes on standard error as `btlens: LABEL: note`.
final class TerminalLiveOutput: LiveOutput {
    let label: String

    init(label: String) { self.label = label }

    func line(_ text: String) { Output.line(text) }

    func flush() { Output.flushStandardOutput() }

    func note(_ text: String) {
        Output.flushStandardOutput()
        Diagnostics.printRaw("btlens: \(label == "-" ? "<stdin>" : label): \(text)")
    }
}
