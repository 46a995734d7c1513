import Dispatch
import Foundation
import BTCapture
import BTWire

/// The progress line every command that reads captures draws on standard error, only when it is a terminal,
/// and clears when the work ends (and before any message: `Diagnostics`). One place for all of them.
///
/// One capture: `PATH: 42%` as its bytes are read, for a capture over `minimumBytes` (a smaller one is read
/// before a line would help). Several: `LABEL: 3/40 files, 41.2 MB/s, ETA 0:12`, the bytes counting the files
/// done and those being read, redrawn at most every `redrawInterval` and first after it, so a quick run draws
/// nothing. Sizes come from the files: a capture in an archive or joined from several counts as a file only.
/// Thread-safe: parallel workers (audit, export) report into one line.
final class Progress: @unchecked Sendable {
    static let minimumBytes: Int64 = 32 << 20
    static let redrawInterval: UInt64 = 200_000_000  // ns
    /// For tests through a pseudo-terminal: draw at every step, whatever the sizes and the time.
    static let unthrottled = ProcessInfo.processInfo.environment["BTLENS_PROGRESS_UNTHROTTLED"] == "1"

    let label: String
    let sizes: [Int64]
    let total: Int64
    let enabled: Bool
    private let lock = NSLock()
    private let started = DispatchTime.now().uptimeNanoseconds
    private var lastDrawn: UInt64
    private var lastPercent = -1
    private var doneFiles = 0
    private var doneBytes: Int64 = 0
    /// Bytes read so far of the files being read, by index.
    private var reading: [Int: Int64] = [:]

    /// Progress over files of `sizes` bytes (0: unknown); `label` names the work when there are several (the
    /// command), the file's path when there is one. `when`: a further condition (decode: not while its own
    /// output fills the terminal).
    init(label: String, sizes: [Int64], when condition: Bool = true) {
        self.label = label
        self.sizes = sizes
        total = sizes.reduce(0, +)
        lastDrawn = started
        let worthIt = sizes.count > 1 || total > Self.minimumBytes || Self.unthrottled
        enabled = condition && worthIt && Diagnostics.standardErrorIsTerminal
    }

    /// Progress over the captures `inputs` hold: several under `label`, one under its path.
    convenience init(label: String, inputs: [CaptureInput], when condition: Bool = true) {
        self.init(label: inputs.count == 1 ? inputs[0].path : label, sizes: inputs.map(Self.size), when: condition)
    }

    /// A capture's size when its offsets run over one file's bytes; 0 otherwise.
    static func size(_ input: CaptureInput) -> Int64 { input.isPlainFile ? fileSize(input.path) : 0 }

    /// One file being read: `update` with the bytes read so far (a record's offset), `finish` when it is done.
    struct Reading {
        let progress: Progress
        let index: Int

        func update(_ offset: Int64) { progress.update(index, offset) }
        func finish() { progress.finished(index) }
    }

    /// Starts reading the file at `index` (of `sizes`).
    func start(_ index: Int) -> Reading {
        let reading = Reading(progress: self, index: index)
        if enabled { update(index, 0) }
        return reading
    }

    func update(_ index: Int, _ offset: Int64) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        reading[index] = min(max(offset, 0), sizes[index])
        draw()
    }

    func finished(_ index: Int) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        reading[index] = nil
        doneFiles += 1
        doneBytes += sizes[index]
        if doneFiles >= sizes.count {
            Diagnostics.clearProgress()  // all read: what comes next is the report
        } else {
            draw()
        }
    }

    /// Clears the line: the work is over.
    func finish() {
        guard enabled else { return }
        Diagnostics.clearProgress()
    }

    /// With the lock held.
    private func draw() {
        let bytes = doneBytes + reading.values.reduce(0, +)
        if sizes.count == 1 {
            guard total > 0, doneFiles == 0 else { return }
            let percent = Int(bytes * 100 / total)
            guard percent != lastPercent else { return }
            lastPercent = percent
            Diagnostics.drawProgress("\(label): \(percent)%")
            return
        }
        let now = DispatchTime.now().uptimeNanoseconds
        guard Self.unthrottled || now - lastDrawn >= Self.redrawInterval else { return }
        lastDrawn = now
        let seconds = Double(now - started) / 1e9
        let rate = seconds > 0 ? Double(bytes) / 1e6 / seconds : 0
        var line = "\(label): \(doneFiles)/\(sizes.count) files, " + DecimalText.fixed(rate, fractionDigits: 1) + " MB/s"
        if bytes > 0, bytes < total {
            let left = seconds * Double(total - bytes) / Double(bytes)
            line += ", ETA \(Int(left) / 60):" + String(format: "%02d", Int(left) % 60)
        }
        Diagnostics.drawProgress(line)
    }
}

func fileSize(_ path: String) -> Int64 {
    var st = stat()
    guard path != "-", stat(path, &st) == 0 else { return 0 }
    return Int64(st.st_size)
}
