import ArgumentParser
import BTCapture
import BTDecode
import BTWire
#if canImport(Glibc)
import Glibc
#endif

struct AnonymizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anonymize",
        abstract: "Write a copy of a capture that is safe to share: no addresses, names, data, values or keys.",
        discussion: """
            Addresses become stable pseudonyms that keep a random address's kind (static, resolvable, \
            non-resolvable); names become name-1, name-2, …; manufacturer and service data, URIs and attribute \
            values become zeros of the same length; SMP keys and values, LTKs, IRKs, link keys, PINs and \
            passkeys are zeroed; payloads of L2CAP dynamic channels (RFCOMM, AVDTP, credit-based channels, \
            Enhanced ATT) are zeroed whole. Structure, timing, handles, opcodes and UUIDs are kept, so timeline, \
            gatt and audit give the same connections, GATT tree and findings.

            Then by value: a first reading collects every identifier the fields hold (addresses, names, GAP \
            Device Names, IRKs, LTKs, link keys, serial numbers read from Device Information), and the copy \
            replaces their bytes wherever else they appear, with the same replacements: addresses in either byte \
            order and as text, in vendor events and commands, in fields not rewritten one by one. Identifiers of \
            fewer than 4 bytes, and addresses or keys of fewer than 3 distinct byte values, are not looked for. \
            The controller's debug log (Qualcomm, ACL handle 0x0edc) repeats remote names and addresses in a \
            layout of its own: its packets are left out unless --keep-vendor-logs.

            --check ORIGINAL COPY looks for every identifier of ORIGINAL in COPY's records (within one or across \
            two consecutive ones), prints one line for each found, with the records, and exits 1 when any is; \
            0 when none.

            The copy is in the input's format family: pcap (linktype 201, H4 with direction) for pcap and pcapng, \
            btsnoop H4 (Android's format) for the rest; HCI packets only: notes and other records are left out \
            (counted on standard error), and controller indexes are not kept.

            --anonymize-key K keys the pseudonyms, so an address gets the same one in every run and capture (without \
            it they are numbered in order of appearance); --keep-values keeps attribute values. Every command that \
            prints also takes --anonymize (and --anonymize-key): it reports on the rewritten bytes.

            Examples:
              btlens anonymize btsnoop_hci.log shared.btsnoop
              btlens anonymize --anonymize-key team-secret bugreport.zip shared.btsnoop
              btlens audit --anonymize --format markdown btsnoop_hci.log > for-the-issue.md
              btlens anonymize --check btsnoop_hci.log shared.btsnoop

            Exit status: 0 written (--check: nothing of the original found); 1 --check found identifiers of \
            the original in the copy; 2 usage; 3 an input unreadable or the output not writable.
            """
    )

    @Argument(help: "The capture (file, archive or bug report holding one capture); - reads standard input.")
    var input: String

    @Argument(help: "Where to write the anonymised copy (replaced if it exists; - writes standard output); with --check, the copy to check.")
    var output: String

    @Option(name: .long, help: "Key the pseudonyms: the same address gets the same pseudonym in every run and capture.")
    var anonymizeKey: String?

    @Flag(name: .long, help: "Keep attribute values (ATT payloads); addresses, names, advertising data and keys are still rewritten.")
    var keepValues = false

    @Flag(name: .long, help: ArgumentHelp(
        "Keep the controller's debug log (Qualcomm, ACL handle 0x0edc), left out by default.",
        discussion: "It may hold addresses, names and keys in a layout of its own: only those the capture shows elsewhere are replaced."))
    var keepVendorLogs = false

    @Flag(name: .long, help: "Check a copy: list every identifier of the first file (the original) found in the second (the copy); exit 1 when any is.")
    var check = false

    func validate() throws {
        if check {
            if input == "-" && output == "-" { throw ValidationError("only one of the original and the copy can be standard input") }
        } else if input == output && input != "-" {
            throw ValidationError("the output must not be the input")
        }
    }

    /// The one capture a path holds; nil (after saying why) when none or several.
    static func single(_ path: String) throws -> CaptureInput {
        let (inputs, failed) = InputFiles.resolve([path])
        if failed { throw ExitStatus.inputUnreadable }
        guard inputs.count == 1, let only = inputs.first else {
            Diagnostics.error(file: path, "holds \(inputs.count) captures (\(inputs.map(\.displayName).joined(separator: ", "))); anonymize one at a time")
            throw ExitStatus.usage
        }
        return only
    }

    /// Every identifier of the original, from reading it once through the field pass.
    static func collect(_ input: CaptureInput, anonymizer: Anonymizer, progress: ((Int64) -> Void)? = nil) throws -> CapturedIdentifiers {
        let capture: OpenedCapture
        do {
            capture = try input.open()
        } catch let error as CaptureError {
            Diagnostics.error(file: input.path, error.message)
            throw ExitStatus.inputUnreadable
        }
        var collector = IdentifierCollector(anonymizer: anonymizer)
        collector.progress = progress
        let found = try capture.accept(&collector)
        if let refusal = capture.issues.refusal {
            Diagnostics.error(file: input.path, refusal)
            throw ExitStatus.inputUnreadable
        }
        return found
    }

    func run() throws {
        if check { return try runCheck() }
        // Two readings: standard input is set aside in a temporary file first (removed at the end).
        var spooled: String?
        defer { if let spooled { unlink(spooled) } }
        if input == "-" {
            spooled = try Self.spoolStandardInput()
        }
        var only = try Self.single(spooled ?? input)
        if spooled != nil {
            only.path = "-"
            only.displayName = "-"
        }
        let anonymizer = Anonymizer.setAside(key: anonymizeKey, keepValues: keepValues)
        // Two readings of one file: the progress line runs through both (each half of it).
        let progress = Progress(label: "anonymize", inputs: [only])
        let reading = progress.start(0)
        defer { reading.finish() }
        let size = progress.sizes[0]
        _ = try Self.collect(only, anonymizer: anonymizer, progress: { reading.update($0 / 2) })
        if let reason = anonymizer.addressesKeptInMemory {
            Diagnostics.warning(file: nil, "\(reason): the addresses are kept in memory")
        }
        let byValue = anonymizer.byValueScanner()
        guard let capture = InputFiles.open(only) else { throw ExitStatus.inputUnreadable }
        // The same format family as the input: pcap (H4 with its direction pseudo-header) for pcap and pcapng,
        // btsnoop H4 for the rest (btsnoop, PacketLogger, archives' captures).
        let writer: any HCIRecordWriter
        // - writes standard output (its device, so the writers need no descriptor of their own).
        let path = output == "-" ? "/dev/stdout" : output
        do {
            if capture.info.format.isPcapFamily {
                writer = try PcapWriter(path: path, linktype: Linktype.bluetoothHCIH4WithPHDR)
            } else {
                writer = try BTSnoopWriter(path: path, datalink: BTSnoopDatalink.h4)
            }
        } catch {
            Diagnostics.error(file: output, "cannot write: \(error)")
            throw ExitStatus.inputUnreadable
        }
        var visitor = AnonymizingCopier(writer: writer, anonymizer: anonymizer, byValue: byValue, keepVendorLogs: keepVendorLogs)
        visitor.progress = { reading.update(size / 2 + $0 / 2) }
        let result: AnonymizingCopier.Result
        do {
            result = try capture.accept(&visitor)
            try writer.finish()
        } catch {
            Diagnostics.error(file: output, "cannot write: \(error)")
            throw ExitStatus.inputUnreadable
        }
        guard InputFiles.finish(only, capture) else {
            if output != "-" { unlink(output) }
            throw ExitStatus.inputUnreadable
        }
        // An address that could not be read back may have been missed: no copy rather than one that leaks.
        do { try Self.expectAddressesReadBack(anonymizer) } catch {
            if output != "-" { unlink(output) }
            throw error
        }
        Diagnostics.printRaw("btlens: wrote \(output == "-" ? "standard output" : output): \(Plural.of(result.written, "record")), "
            + "\(Plural.of(result.addresses, "address", plural: "addresses")) and \(Plural.of(result.names, "name")) replaced"
            + (result.byValue > 0 ? ", \(Plural.of(result.byValue, "identifier")) more by value" : "")
            + (result.leftOut > 0 ? "; \(Plural.of(result.leftOut, "record")) that are not HCI packets left out" : "")
            + (result.vendorLogsLeftOut > 0
               ? "; \(Plural.of(result.vendorLogsLeftOut, "packet")) of the controller's debug log left out (--keep-vendor-logs keeps them)" : ""))
    }

    /// Copies standard input to a temporary file (a capture is read twice).
    static func spoolStandardInput() throws -> String {
        var template = Array((TemporaryFiles.directory + "/btlens-anonymize-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            Diagnostics.error(file: TemporaryFiles.directory, "cannot set standard input aside: \(String(cString: strerror(errno)))")
            throw ExitStatus.inputUnreadable
        }
        defer { close(fd) }
        let path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            var written = 0
            while written < n {
                let w = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + written, n - written) }
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else {
                    unlink(path)
                    Diagnostics.error(file: TemporaryFiles.directory, "cannot set standard input aside: \(String(cString: strerror(errno)))")
                    throw ExitStatus.inputUnreadable
                }
                written += w
            }
        }
        return path
    }

    /// Fails (exit 3, one line) when addresses set aside in `TMPDIR` could not be read back: some may have been
    /// missed.
    static func expectAddressesReadBack(_ anonymizer: Anonymizer) throws {
        guard let failure = anonymizer.addressesSetAsideFailure else { return }
        Diagnostics.error(file: TemporaryFiles.directory, "cannot set the addresses aside: \(failure)")
        throw ExitStatus.inputUnreadable
    }

    /// `--check ORIGINAL COPY`: every identifier of the original found in the copy, one line each (stdout).
    func runCheck() throws {
        let original = try Self.single(input)
        let anonymizer = Anonymizer.setAside()
        let found = try Self.collect(original, anonymizer: anonymizer)
        let copyInput = try Self.single(output)
        guard let copy = InputFiles.open(copyInput) else { throw ExitStatus.inputUnreadable }
        var checker = AnonymizeCheck(identifiers: found)
        let report = try copy.accept(&checker)
        guard InputFiles.finish(copyInput, copy) else { throw ExitStatus.inputUnreadable }
        try Self.expectAddressesReadBack(anonymizer)
        for line in report.lines { Output.line(line) }
        Output.flushStandardOutput()
        let looked = "\(Plural.of(report.lookedFor, "identifier")) looked for"
        if report.hits.isEmpty {
            Diagnostics.printRaw("btlens: \(output): none of the identifiers of \(input) found (\(looked) in \(Plural.of(report.records, "record")))")
        } else {
            Diagnostics.printRaw("btlens: \(output): \(Plural.of(report.identifiersFound, "identifier")) of \(input) found in \(Plural.of(report.recordsWithHits, "record")) (\(looked))")
            throw ExitStatus.findings
        }
    }
}

