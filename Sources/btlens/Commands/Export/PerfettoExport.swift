import ArgumentParser
import BTWire
import Glibc
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules
import BTReport

/// `export --format perfetto`: every capture of the paths as processes of one Perfetto trace
/// (`CaptureTrace`), written to -o (a file, or - for standard output). Finished links are drawn as they are
/// judged, as `audit` judges them (`LinkTraceStream`; `BTLENS_LINK_WINDOW` sets the window as for audit), so
/// memory holds what is live, not every link's history.
enum PerfettoExport {
    /// Answered ATT requests drawn per connection: the rest are counted in the track's description.
    static let keptATTTransactions = 20_000

    static func run(_ command: ExportCommand) throws {
        let output: BufferedDescriptorWriter
        if command.output == "-" {
            output = BufferedDescriptorWriter(fd: 1)
        } else {
            do { output = try BufferedDescriptorWriter(path: command.output) } catch {
                Diagnostics.error(file: command.output, "cannot write the trace: \(error)")
                throw ExitStatus.inputUnreadable
            }
        }
        let writer = PerfettoTraceWriter(out: output)
        let auditor = Auditor()
        var (inputs, failed) = InputFiles.resolve(command.files)
        var written = 0
        var index = 0  // the next file's number in the trace (its processes' ids)
        let progress = Progress(label: "export", inputs: inputs)
        defer { progress.finish() }
        do {
            for (number, input) in inputs.enumerated() {
                let reading = progress.start(number)
                defer { reading.finish() }
                guard let capture = InputFiles.open(input) else {
                    failed = true
                    continue
                }
                var options = TrackerOptions.withoutAdvertisers
                options.keptATTTransactions = keptATTTransactions
                options.connectionsWhileScanningListed = 0  // a scan's slice counts them
                options.scanDevicesListed = 0  // and its devices
                options.setScanSessionsAside()
                // Findings wait in a temporary file as they are made, as in `audit`.
                let spill = AuditCommand.findingSpill(input.path)
                let judgement = auditor.linkJudgement(spill: spill)
                let stream = LinkTraceStream(writer: writer, file: input.displayName, index: index, judgement: judgement,
                                             energy: auditor.energy, spillDirectory: TemporaryFiles.directory)
                options.retirement = stream.retirement(window: AuditCommand.retirementWindow)
                let advertising = AdvertisingSampler(spillDirectory: TemporaryFiles.directory)
                var collector = TrackingCollector(options: options, progress: reading.update)
                var started = false
                collector.frameObserver = { frame in
                    if !started {
                        stream.captureStarted(at: frame.record.timestamp.nanoseconds)
                        started = true
                    }
                    advertising.observe(frame)
                }
                var model = try capture.accept(&collector, anonymizer: command.anonymizing.makeAnonymizer())
                try stream.rethrowFailure()
                // A bug report that names the apps: a track of the scans by app, and each finding's owner.
                if let apps = (try? input.bugReportApps()) ?? nil { model.attribution = BugReportClock.attribute(model, report: apps) }
                guard InputFiles.finish(input, capture) else {
                    // Refused part-way (a decompression bomb): the links drawn before stay, under ids of their own.
                    if stream.drawn > 0 { index += 1 }
                    failed = true
                    continue
                }
                if !writer.clockDeclared { try writer.clockSnapshot(at: model.firstTimestamp?.nanoseconds ?? 0) }
                // The links drawn already need no pricing.
                let energy = EnergyReport(model: model.withoutJudgedLinks, energy: auditor.energy)
                let attribution = model.attribution, end = model.lastTimestamp
                let findings: StoredFindings
                do {
                    findings = try auditor.audit(model, file: input.path, judged: judgement, spill: spill) { f in
                        if let attribution { AttributionReport.assignOwner(&f, attribution, captureEnd: end) }
                        return .reported
                    }.reported
                } catch {
                    Diagnostics.error(file: input.path, "\(error)")
                    if stream.drawn > 0 { index += 1 }
                    failed = true
                    continue
                }
                let trace = CaptureTrace(file: input.displayName, model: model, energy: energy, findings: findings,
                                         advertising: advertising, streamed: stream)
                try trace.write(index: index, to: writer)
                if let failure = findings.failure { Diagnostics.error(file: input.path, "\(failure)"); failed = true }
                index += 1
                written += 1
            }
            try writer.finish()
        } catch let error as ExitStatus {
            throw error
        } catch let error as CaptureError {
            throw error
        } catch {
            Diagnostics.error(file: command.output, "cannot write the trace: \(error)")
            throw ExitStatus.inputUnreadable
        }
        if command.output != "-" && written == 0 {
            // Nothing could be read: no trace, only the inputs' errors (as the other commands give).
            unlink(command.output)
        } else if command.output != "-" {
            Diagnostics.printRaw("btlens: wrote \(command.output): \(Plural.of(written, "capture")), \(Plural.of(writer.packets, "packet"))")
        }
        if failed { throw ExitStatus.inputUnreadable }
    }
}
