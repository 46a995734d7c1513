import BTTrack
import BTWire
import ArgumentParser
import BTCapture
import BTDecode
import BTReport

/// Opens the captures of a command's paths — files, archives, bug reports, rotated pairs (`CaptureInputs`) —
/// turning failures into the one-line `btlens: FILE: cause` form.
enum InputFiles {
    /// The captures the paths hold, in order; `failed` when a path held none or could not be read (reported).
    static func resolve(_ paths: [String]) -> (inputs: [CaptureInput], failed: Bool) {
        var inputs: [CaptureInput] = []
        var failed = false
        for result in CaptureInputs.resolve(paths) {
            switch result {
            case .success(let input): inputs.append(input)
            case .failure(let failure):
                Diagnostics.error(file: failure.path, failure.error.message)
                failed = true
            }
        }
        return (inputs, failed)
    }

    /// Opens one capture; nil after reporting why it cannot be read. Says where the capture came from when
    /// that is not plain (which log of a bug report, a btsnooz summary, joined rotated logs).
    static func open(_ input: CaptureInput) -> OpenedCapture? {
        do {
            let capture = try input.open()
            for notice in input.notices { Diagnostics.printRaw("btlens: \(input.path): note: \(notice)") }
            if case .joined = capture, let joined = capture.issues.notices.first(where: { $0.hasPrefix("read as one capture") }) {
                Diagnostics.printRaw("btlens: \(input.path): note: \(joined)")
            }
            return capture
        } catch let error as CaptureError {
            Diagnostics.error(file: input.path, error.message)
        } catch {
            Diagnostics.error(file: input.path, "\(error)")
        }
        return nil
    }

    /// After a capture was read: its malformed records on stderr; false (after a one-line error) when reading was
    /// refused part-way (a decompression bomb), which makes the input unreadable.
    static func finish(_ input: CaptureInput, _ capture: OpenedCapture) -> Bool {
        reportIssues(input.path, capture.issues)
        if let refusal = capture.issues.refusal {
            Diagnostics.error(file: input.path, refusal)
            return false
        }
        return true
    }

    /// Reports malformed records on stderr: a count and the first few locations.
    static func reportIssues(_ path: String, _ issues: IssueLog, verbose: Bool = false) {
        guard issues.count > 0 else { return }
        let shown = verbose ? issues.issues.count : min(3, issues.issues.count)
        var text = Plural.of(issues.count, "malformed record")
        if let first = issues.issues.first { text += "; first: \(first)" }
        Diagnostics.warning(file: path, text)
        if shown > 1 {
            for issue in issues.issues.dropFirst().prefix(shown - 1) {
                Diagnostics.printRaw("  \(issue)")
            }
        }
    }
}

/// The per-file report loop shared by `stats` and `devices`: open each capture (reporting the unreadable ones),
/// run a pipeline over it with progress, print its text or JSON as it goes (an array for several files),
/// and exit 3 when an input could not be read.
struct MultiFileReport {
    let files: [String]
    let json: Bool
    var anonymizing = AnonymizeOptions()

    /// One capture's report, in the form asked for.
    enum Rendered {
        case text(String)
        /// Text given line by line (each without its newline) as it is made, printed at once: a large report is
        /// never gathered into one string.
        case lines((_ line: (String) -> Void) -> Void)
        case json(JSONValue)
        /// JSON written piece by piece by the report at the nesting level given.
        case jsonStream((_ writer: JSONStreamWriter, _ level: Int) -> Void)
        /// Nothing to print: the command said why (the run ends with exit status 3).
        case failed
    }

    /// `render` returns one capture's report: JSON when `json` is set, text otherwise. `label` names the work on
    /// the progress line (the command).
    func run<V: RecordSourceVisitor>(
        label: String,
        makeVisitor: (_ progress: @escaping (Int64) -> Void) -> V,
        render: (_ path: String, _ name: String, _ capture: OpenedCapture, _ result: V.Result) -> Rendered
    ) throws {
        var (inputs, failed) = InputFiles.resolve(files)
        var printed = 0
        // JSON is printed as each capture is rendered: one object for one capture (a file, an archive holding one,
        // rotated logs read as one), an array otherwise.
        let writer = JSONStreamWriter { Output.write($0) }
        var single = false
        var array: JSONStreamWriter.Elements?
        func jsonLevel() -> Int {
            if inputs.count == 1 && !failed {
                single = true
                return 0
            }
            if array == nil { array = writer.elements() }
            array?.next()
            return 1
        }
        let progress = Progress(label: label, inputs: inputs)
        for (index, input) in inputs.enumerated() {
            let reading = progress.start(index)
            defer { reading.finish() }
            guard let capture = InputFiles.open(input) else {
                failed = true
                continue
            }
            var visitor = makeVisitor { reading.update($0) }
            let result = try capture.accept(&visitor, anonymizer: anonymizing.makeAnonymizer())
            guard InputFiles.finish(input, capture) else {
                failed = true
                continue
            }
            if let model = result as? CaptureModel, let failure = model.setAsideFailure {
                Diagnostics.error(file: input.path, "cannot set the capture's scans and links aside in \(TemporaryFiles.directory): \(failure)")
                failed = true
                continue
            }
            switch render(input.path, input.displayName, capture, result) {
            case .json(let value):
                writer.value(value, level: jsonLevel())
            case .jsonStream(let write):
                write(writer, jsonLevel())
            case .text(let text):
                if printed > 0 { Output.line("") }
                Output.line(text)
                printed += 1
            case .lines(let write):
                if printed > 0 { Output.line("") }
                write { Output.line($0) }
                printed += 1
            case .failed:
                failed = true
            }
        }
        progress.finish()
        if json {
            if !single { (array ?? writer.elements()).close() }
            Output.line("")
        }
        Output.flushStandardOutput()
        if failed { throw ExitStatus.inputUnreadable }
    }
}

/// The inputs of the per-file report commands (`stats`, `devices`).
struct MultiFileOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON (an object per file; an array when there are several).")
    var json = false

    @Argument(help: "Capture files (btsnoop, pcap, pcapng, PacketLogger; compressed or in archives: gzip, xz, zstd, zip, tar; Android bug reports, iOS sysdiagnoses); - reads standard input.")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one capture file (or - for standard input)") }
    }

    @OptionGroup var anonymizing: AnonymizeOptions

    var report: MultiFileReport { MultiFileReport(files: files, json: json, anonymizing: anonymizing) }
}
