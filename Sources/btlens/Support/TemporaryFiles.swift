import Foundation
import BTTrack

/// Where commands set aside what they print at the end of a long capture (`energy`'s priced links, the text
/// `timeline`'s lines of finished links): `TMPDIR`, else `/tmp`. The files' names are removed as soon as they are
/// made, so nothing is left behind.
enum TemporaryFiles {
    static var directory: String {
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }
}

extension TrackerOptions {
    /// Scan sessions set aside in the temporary directory as they end (`ScanSessions`), for a batch command;
    /// `BTLENS_LINK_WINDOW` sets how many stay in memory too (tests run every window at 1).
    mutating func setScanSessionsAside() {
        scanSessionSpillDirectory = TemporaryFiles.directory
        if let window = AuditCommand.windowFromEnvironment { scanSessionsKept = window }
    }
}
