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
            """
    )

    @Argument(help: "The capture (file, archive or bug report holding one capture); - reads standard input.")
    var input: String

    @Argument(help: "Where to write the anonymised btsnoop file (replaced if it exists).")
    var output: String

    @Option(name: .long, help: "Key the pseudonyms: the same address gets the same pseudonym in every run and capture.")
    var anonymizeKey: String?

    @Flag(name: .long, help: "Keep attribute values (ATT payloads); addresses, names, advertising data and keys are still rewritten.")
    var keepValues = false

    func validate() throws {
        if input == output && input != "-" { throw ValidationError("the output must not be the input") }
    }

    func run() throws {
        let (inputs, failed) = InputFiles.resolve([input])
        if failed { throw ExitStatus.inputUnreadable }
        guard inputs.count == 1, let only = inputs.first else {
            Diagnostics.error(file: input, "holds \(inputs.count) captures (\(inputs.map(\.displayName).joined(separator: ", "))); anonymize one at a time")
            throw ExitStatus.usage
        }
        guard let capture = InputFiles.open(only) else { throw ExitStatus.inputUnreadable }
        // The same format family as the input: pcap (H4 with its direction pseudo-header) for pcap and pcapng,
        // btsnoop H4 for the rest (btsnoop, PacketLogger, archives' captures).
        let writer: any HCIRecordWriter
        do {
            if capture.info.format.isPcapFamily {
                writer = try PcapWriter(path: output, linktype: Linktype.bluetoothHCIH4WithPHDR)
            } else {
                writer = try BTSnoopWriter(path: output, datalink: BTSnoopDatalink.h4)
            }
        } catch {
            Diagnostics.error(file: output, "cannot write: \(error)")
            throw ExitStatus.inputUnreadable
        }
        var visitor = AnonymizingCopier(writer: writer, anonymizer: Anonymizer(key: anonymizeKey, keepValues: keepValues))
        let progress = Progress(label: "anonymize", inputs: [only])
        let reading = progress.start(0)
        visitor.progress = reading.update
        let result: AnonymizingCopier.Result
        do {
            defer { reading.finish() }
            result = try capture.accept(&visitor)
            try writer.finish()
        } catch {
            Diagnostics.error(file: output, "cannot write: \(error)")
            throw ExitStatus.inputUnreadable
        }
        guard InputFiles.finish(only, capture) else {
            unlink(output)
            throw ExitStatus.inputUnreadable
        }
        Diagnostics.printRaw("btlens: wrote \(output): \(Plural.of(result.written, "record")), "
            + "\(Plural.of(result.addresses, "address", plural: "addresses")) and \(Plural.of(result.names, "name")) replaced"
            + (result.leftOut > 0 ? "; \(Plural.of(result.leftOut, "record")) that are not HCI packets left out" : ""))
    }
}

