import ArgumentParser
import BTCapture

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
        var text = "\(issues.count) malformed record\(issues.count == 1 ? "" : "s")"
        if let first = issues.issues.first { text += "; first: \(first)" }
        Diagnostics.warning(file: path, text)
        if shown > 1 {
            for issue in issues.issues.dropFirst().prefix(shown - 1) {
                Diagnostics.printRaw("  \(issue)")
            }
        }
    }
}
