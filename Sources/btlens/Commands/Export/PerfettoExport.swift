import ArgumentParser
import BTWire
import Glibc
import BTCapture
import BTDecode
import BTTrack
import BTEnergy
import BTRules
import BTReport

/// `export --format perfetto` (issue 28): every capture of the paths as processes of one Perfetto trace
/// (`CaptureTrace`), written to -o (a file, or - for standard output).
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
        var clockDeclared = false
        var written = 0
        do {
            for input in inputs {
                guard let capture = InputFiles.open(input) else {
                    failed = true
                    continue
                }
                var options = TrackerOptions.withoutAdvertisers
                options.keptATTTransactions = keptATTTransactions
                let advertising = AdvertisingSampler()
                var progress = Progress(label: input.path, total: fileSize(input.path))
                var collector = TrackingCollector(options: options, progress: { progress.update($0) })
                collector.frameObserver = { advertising.observe($0) }
                let model = try capture.accept(&collector, anonymizer: command.anonymizing.makeAnonymizer())
                progress.finish()
                guard InputFiles.finish(input, capture) else {
                    failed = true
                    continue
                }
                if !clockDeclared {
                    try writer.clockSnapshot(at: model.firstTimestamp?.nanoseconds ?? 0)
                    clockDeclared = true
                }
                let trace = CaptureTrace(file: input.displayName, model: model, energy: EnergyReport(model: model, energy: auditor.energy),
                                         findings: auditor.audit(model, file: input.path), advertising: advertising)
                try trace.write(index: written, to: writer)
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
