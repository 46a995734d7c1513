import Foundation
import BTDecode
import BTTrack

/// Where commands set aside what they print at the end of a long capture (`energy`'s priced links, the text
/// `timeline`'s lines of finished links): `TMPDIR`, else `/tmp`. The files' names are removed as soon as they are
/// made, so nothing is left behind.
enum TemporaryFiles {
    static var directory: String {
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }
}

extension Anonymizer {
    /// An anonymizer whose addresses beyond the latest tens of thousands wait in the temporary directory
    /// (`BTLENS_LINK_WINDOW` sets how many stay in memory, as it does for links, but not fewer than
    /// `fewestAddressesInMemory`: each segment set aside is searched apart).
    static func setAside(key: String? = nil, keepValues: Bool = false) -> Anonymizer {
        Anonymizer(key: key, keepValues: keepValues, directory: TemporaryFiles.directory,
                   addressesInMemory: AuditCommand.windowFromEnvironment.map { max($0, fewestAddressesInMemory) }
                       ?? AddressTable.defaultSegmentLength)
    }

    static let fewestAddressesInMemory = 16
}

extension TrackerOptions {
    /// Scan sessions set aside in the temporary directory as they end (`ScanSessions`), for a batch command;
    /// `BTLENS_LINK_WINDOW` sets how many stay in memory too (tests run every window at 1).
    mutating func setScanSessionsAside() {
        scanSessionSpillDirectory = TemporaryFiles.directory
        if let window = AuditCommand.windowFromEnvironment { scanSessionsKept = window }
    }
}
