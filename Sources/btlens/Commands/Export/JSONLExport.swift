import ArgumentParser
import Dispatch
import Foundation
import BTWire
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules
import BTReport
#if canImport(Glibc)
import Glibc
#endif

/// `export --format jsonl` (and `parquet`): the facts tables of many captures (BTReport's `FactsTable`), one JSON
/// Lines file per table in the output directory, plus manifest.json. Files are read in parallel; a file that
/// cannot be read is a `captures` row with its error, never the end of the run.
enum JSONLExport {
    /// What one run did, for the summary line.
    struct Tally {
        var files = 0
        var captures = 0
        var unreadable = 0
        var skipped = 0
        var bytes: Int64 = 0
        var rows: [FactsTable: Int] = [:]
    }

    /// Bytes of a capture's rows held before they are set aside in the output directory (`FactsRows`);
    /// `BTLENS_ROWS_MEMORY` changes it for tests that compare rows set aside with rows held.
    static let rowsMemory = ProcessInfo.processInfo.environment["BTLENS_ROWS_MEMORY"].flatMap { Int($0) }
        ?? FactsRows.defaultMemoryLimit

    static func run(_ command: ExportCommand) throws {
        if command.files.contains("-") {
            throw ValidationError("--format \(command.format.rawValue) reads files and directories, not standard input (its rows name the file and its sha256)")
        }
        let directory = command.output
        if command.format == .parquet, ParquetConversion.duckdb() == nil {
            Diagnostics.error(file: nil, "--format parquet needs the duckdb command on PATH; without it, export JSON Lines and convert each table with: "
                + ParquetConversion.oneLiner)
            throw ExitStatus.usage
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            Diagnostics.error(file: directory, "not a directory (--format \(command.format.rawValue) writes one file per table into -o DIR)")
            throw ExitStatus.usage
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            Diagnostics.error(file: directory, "cannot create the output directory: \(error.localizedDescription)")
            throw ExitStatus.inputUnreadable
        }
        var (files, missing) = expand(command.files)
        // -o inside an input directory: its own tables are not captures to export.
        let outputPrefix = URL(fileURLWithPath: directory).standardizedFileURL.path + "/"
        files.removeAll { URL(fileURLWithPath: $0).standardizedFileURL.path.hasPrefix(outputPrefix) }
        for m in missing { Diagnostics.error(file: m, "No such file or directory") }

        let exported = command.incremental ? FactsTableFiles.exportedHashes(in: directory) : []
        let tables: FactsTableFiles
        do {
            tables = try FactsTableFiles(directory: directory, append: command.incremental)
        } catch {
            Diagnostics.error(file: directory, "\(error)")
            throw ExitStatus.inputUnreadable
        }
        let energy = try ProfileLoading.energyModel(command.profile)
        let auditor = Auditor(energy: energy)
        let sizes = files.map(fileSize)
        let progress = Progress(label: "export", sizes: sizes)
        let tally = Locked(Tally())
        let workers = min(command.jobs ?? ProcessInfo.processInfo.activeProcessorCount, max(files.count, 1))
        let queue = DispatchQueue(label: "btlens.export", attributes: .concurrent)
        let group = DispatchGroup()
        let semaphore = DispatchSemaphore(value: workers)
        let anonymizing = command.anonymizing
        let started = DispatchTime.now()
        for (index, path) in files.enumerated() {
            semaphore.wait()
            queue.async(group: group) {
                defer { semaphore.signal() }
                let reading = progress.start(index)
                let size = sizes[index]
                var failure: String?
                // Each capture's rows are written as soon as they are made (an archive holds several).
                let result = exportFile(path, size: size, skip: exported, auditor: auditor, energy: energy,
                                        anonymizer: anonymizing.makeAnonymizer(), spillDirectory: directory,
                                        progress: reading.update) { rows in
                    do { try tables.write(rows) } catch { failure = "\(error)" }
                    tally.update { t in
                        t.captures += 1
                        for table in FactsTable.allCases { t.rows[table, default: 0] += rows.count(table) }
                    }
                }
                tally.update { t in
                    t.files += 1
                    t.bytes += size
                    if result.skipped { t.skipped += 1 }
                    t.unreadable += result.unreadable
                }
                reading.finish()
                if let failure { Diagnostics.error(file: directory, "cannot write a table: \(failure)") }
            }
        }
        group.wait()
        progress.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        do {
            try tables.close()
            let counts = try FactsTableFiles.rowCounts(in: directory)
            let manifest = FactsTable.manifest(version: BTLens.version, rows: counts)
            try (manifest.serialized() + "\n").write(toFile: directory + "/manifest.json", atomically: true, encoding: .utf8)
        } catch {
            Diagnostics.error(file: directory, "cannot write the tables: \(error)")
            throw ExitStatus.inputUnreadable
        }
        let t = tally.value
        summarize(t, seconds: seconds, directory: directory)
        if command.format == .parquet { try ParquetConversion.convert(directory) }
        if !missing.isEmpty { throw ExitStatus.inputUnreadable }
    }

    /// What became of one file besides its captures' rows (`exportFile`'s `write`): how many of them could not
    /// be read, or whether `--incremental` found its sha256 already exported.
    struct FileResult {
        var unreadable = 0
        var skipped = false
    }

    /// Hands `write` the rows of each capture the file holds (an archive holds several), one capture at a time;
    /// rows past a few megabytes are set aside in `spillDirectory` (`FactsRows`).
    static func exportFile(_ path: String, size: Int64, skip: Set<String>, auditor: Auditor, energy: EnergyModel,
                           anonymizer: Anonymizer?, spillDirectory: String?, progress: ((Int64) -> Void)? = nil,
                           write: (FactsRows) -> Void) -> FileResult {
        var result = FileResult()
        let sha256: String
        do {
            sha256 = try FileDigest.sha256(path)
        } catch {
            write(FactsCapture(file: path, sha256: nil, size: size).unreadable("\(error)"))
            result.unreadable = 1
            return result
        }
        if skip.contains(sha256) {
            result.skipped = true
            return result
        }
        for unit in CaptureInputs.resolve([path]) {
            switch unit {
            case .failure(let failure):
                write(FactsCapture(file: failure.path, sha256: sha256, size: size).unreadable(failure.error.message))
                result.unreadable += 1
            case .success(let input):
                var facts = FactsCapture(file: input.path, sha256: sha256, size: size, spillDirectory: spillDirectory)
                facts.memoryLimit = rowsMemory
                do {
                    let capture = try input.open()
                    // Each link's rows, findings and energy are made when it is judged, as in `btlens audit`, and
                    // the link is then slimmed; its rows are set aside in the output directory: memory holds
                    // neither the finished links' histories nor their rows.
                    // Findings wait in a temporary file as they are made, as in `btlens audit`.
                    let spill = AuditCommand.findingSpill(input.path)
                    let judged = FactsLinkRows(facts, auditor: auditor, findings: spill)
                    var options = TrackerOptions()
                    options.retirement = judged.retirement(window: AuditCommand.retirementWindow)
                    options.connectionsWhileScanningListed = 0  // a scan's row counts them (`FactsCapture.scanRow`)
                    options.scanDevicesListed = ScanSessionJSON.topDeviceCount  // and lists its top devices
                    options.setScanSessionsAside()
                    // The bytes read are the file's only when the capture is the file (not in an archive).
                    var collector = TrackingCollector(options: options, progress: input.isPlainFile ? progress : nil)
                    let model = try capture.accept(&collector, anonymizer: anonymizer)
                    if let refusal = capture.issues.refusal {
                        write(facts.unreadable(refusal, format: capture.info.format.name))
                        result.unreadable += 1
                        continue
                    }
                    // A bug report that names the apps gives each finding row its owner (owner_* columns).
                    let attribution = ((try? input.bugReportApps()) ?? nil).map { BugReportClock.attribute(model, report: $0) }
                    let end = model.lastTimestamp
                    let findings = try auditor.audit(model, file: input.path, judged: judged.judgement, spill: spill) { f in
                        if let attribution { AttributionReport.assignOwner(&f, attribution, captureEnd: end) }
                        return .reported
                    }.reported
                    write(facts.rows(format: capture.info.format.name, model: model, problems: capture.issues.count,
                                     findings: findings, energy: energy, judged: judged))
                } catch let error as CaptureError {
                    write(facts.unreadable(error.message))
                    result.unreadable += 1
                } catch {
                    write(facts.unreadable("\(error)"))
                    result.unreadable += 1
                }
            }
        }
        return result
    }

    /// Every regular, non-hidden file under the directories (recursively, sorted) and the files as given: a file
    /// that is not a capture becomes a `captures` row saying so, as the issue of a fleet is to see them all.
    static func expand(_ inputs: [String]) -> (files: [String], missing: [String]) {
        var files: [String] = []
        var missing: [String] = []
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
                missing.append(input)
                continue
            }
            guard isDirectory.boolValue else {
                files.append(input)
                continue
            }
            let found = (FileManager.default.enumerator(atPath: input)?.allObjects as? [String] ?? []).sorted()
            for relative in found where !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                let path = input.hasSuffix("/") ? input + relative : input + "/" + relative
                var dir: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &dir), !dir.boolValue { files.append(path) }
            }
        }
        return (files, missing)
    }

    static func summarize(_ t: Tally, seconds: Double, directory: String) {
        let megabytes = Double(t.bytes) / 1e6
        var line = "btlens: exported \(Plural.of(t.captures, "capture")) from \(Plural.of(t.files, "file"))"
        var notes: [String] = []
        if t.unreadable > 0 { notes.append("\(t.unreadable) unreadable, each a captures row with its error") }
        if t.skipped > 0 { notes.append("\(t.skipped) already exported") }
        if !notes.isEmpty { line += " (" + notes.joined(separator: "; ") + ")" }
        line += " in " + DecimalText.fixed(seconds, fractionDigits: 1) + " s"
        if seconds > 0 {
            line += " (" + DecimalText.fixed(Double(t.files) / seconds, fractionDigits: 1) + " files/s, "
                + DecimalText.fixed(megabytes / seconds, fractionDigits: 1) + " MB/s)"
        }
        line += " to \(directory): " + FactsTable.allCases.map { "\(t.rows[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        Diagnostics.printRaw(line)
    }
}

/// A value shared by the export's workers.
final class Locked<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()

    init(_ value: Value) { stored = value }

    func update(_ body: (inout Value) -> Void) {
        lock.lock()
        body(&stored)
        lock.unlock()
    }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
