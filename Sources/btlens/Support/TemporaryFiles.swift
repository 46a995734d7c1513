import Foundation

/// Where commands set aside what they print at the end of a long capture (`energy`'s priced links, the text
/// `timeline`'s lines of finished links): `TMPDIR`, else `/tmp`. The files' names are removed as soon as they are
/// made, so nothing is left behind.
enum TemporaryFiles {
    static var directory: String {
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }
}
