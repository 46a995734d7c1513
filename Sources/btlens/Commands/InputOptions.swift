import BTWire
import ArgumentParser
import BTCapture
import BTReport

/// Opens a capture for a command, turning failures into the one-line `btlens: FILE: cause` form.
enum CaptureInput {
    static func open(_ path: String) -> OpenedCapture? {
        do {
            return try OpenedCapture.open(path: path)
        } catch let error as CaptureError {
            Diagnostics.error(file: path, error.message)
        } catch {
            Diagnostics.error(file: path, "\(error)")
        }
        return nil
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
/// run a pipeline over it with progress, print text as it goes or JSON at the end (an array for several files),
/// and exit 3 when an input could not be read.
struct MultiFileReport {
    let files: [String]
    let json: Bool

    /// One capture's report, in the form asked for.
    enum Rendered {
        case text(String)
        case json(JSONValue)
    }

    /// `render` returns one capture's report: JSON when `json` is set, text otherwise.
    func run<V: RecordSourceVisitor>(
        makeVisitor: (_ progress: @escaping (Int64) -> Void) -> V,
        render: (_ path: String, _ name: String, _ capture: OpenedCapture, _ result: V.Result) -> Rendered
    ) throws {
        var results: [JSONValue] = []
        var failed = false
        var printed = 0
        for path in files {
            guard let capture = CaptureInput.open(path) else {
                failed = true
                continue
            }
            var progress = Progress(label: path, total: fileSize(path))
            var visitor = makeVisitor { progress.update($0) }
            let result = try capture.accept(&visitor)
            progress.finish()
            CaptureInput.reportIssues(path, capture.issues)
            let name = path == "-" ? "-" : String(path.split(separator: "/").last ?? Substring(path))
            switch render(path, name, capture, result) {
            case .json(let value):
                results.append(value)
            case .text(let text):
                if printed > 0 { Output.line("") }
                Output.line(text)
                printed += 1
            }
        }
        if json {
            Output.line(results.count == 1 && files.count == 1 ? results[0].serialized() : JSONValue.array(results).serialized())
        }
        Output.flushStandardOutput()
        if failed { throw ExitStatus.inputUnreadable }
    }
}

/// The inputs of the per-file report commands (`stats`, `devices`).
struct MultiFileOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON (an object per file; an array when there are several).")
    var json = false

    @Argument(help: "Capture files (btsnoop, pcap, pcapng, PacketLogger); - reads standard input.")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one capture file (or - for standard input)") }
    }

    var report: MultiFileReport { MultiFileReport(files: files, json: json) }
}
