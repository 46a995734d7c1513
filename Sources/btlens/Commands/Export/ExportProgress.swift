import Dispatch
import Foundation
import BTWire

/// The export's progress line on a terminal: files done, MB/s and the time left, redrawn at most
/// `redrawInterval` apart from whichever worker finishes a file. Nothing when standard error is not a terminal.
final class ExportProgress: @unchecked Sendable {
    static let redrawInterval: UInt64 = 200_000_000  // ns

    let files: Int
    let bytes: Int64
    let enabled: Bool
    private let started = DispatchTime.now().uptimeNanoseconds
    private var doneFiles = 0
    private var doneBytes: Int64 = 0
    private var lastDrawn: UInt64 = 0
    private let lock = NSLock()

    init(files: Int, bytes: Int64) {
        self.files = files
        self.bytes = bytes
        enabled = Diagnostics.standardErrorIsTerminal
    }

    func advance(bytes size: Int64) {
        lock.lock()
        defer { lock.unlock() }
        doneFiles += 1
        doneBytes += size
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastDrawn >= Self.redrawInterval || doneFiles == files else { return }
        lastDrawn = now
        let seconds = Double(now - started) / 1e9
        let rate = seconds > 0 ? Double(doneBytes) / 1e6 / seconds : 0
        var line = "export: \(doneFiles)/\(files) files, " + DecimalText.fixed(rate, fractionDigits: 1) + " MB/s"
        if doneBytes > 0, doneBytes < bytes {
            let left = seconds * Double(bytes - doneBytes) / Double(doneBytes)
            line += ", ETA \(Int(left) / 60):" + String(format: "%02d", Int(left) % 60)
        }
        Diagnostics.writeStandardError("\r\u{1B}[K" + line)
    }

    func finish() {
        guard enabled else { return }
        Diagnostics.writeStandardError("\r\u{1B}[K")
    }
}
