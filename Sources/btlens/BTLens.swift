import ArgumentParser
import CMalloc
#if canImport(Glibc)
import Glibc
#endif

/// btlens: what an app did on the Bluetooth radio, from an HCI capture.
struct BTLens: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "btlens",
        abstract: "Read Bluetooth HCI captures and explain what an app did on the radio.",
        discussion: """
            Captures are recognised by content, not by name: btsnoop (H1, H4, Linux monitor), pcap and pcapng \
            (linktypes 187, 201, 254; LE air-sniffer captures 251, 256, 272 and PPI are decoded by stats and decode) \
            and Apple PacketLogger (.pklg). \
            Compressed captures and archives (gzip, xz, zstd, bzip2, zip, tar, 7z), Android bug reports (the snoop \
            log, or the btsnooz summary in the report's text) and iOS sysdiagnoses are read as they are, each capture \
            inside named archive:path; a rotated btsnoop_hci.log.last and the log after it are read as one. \
            Use - to read a capture from standard input.

            Exit codes: 0 success, 1 findings at or above the failure threshold (audit; diff: also a radio charge that rose past --fail-on-increase), 2 usage error, \
            3 input unreadable (missing, not a capture, not Bluetooth) or output unwritable; live capture: 4 no Bluetooth in the \
            kernel, 5 no permission (root or CAP_NET_RAW), 6 no controller; 7 audit found nothing to judge (no HCI packet or \
            link-layer frame: snoop logging off?) unless --allow-empty.

            Examples:
              btlens audit samples/wasteful-central.btsnoop
              btlens timeline samples/heart-rate-session.btsnoop
              btlens stats --json capture.log other.pcapng
              btlens decode -v --handle 0x0040 --cid 4 btsnoop_hci.log
              btlens energy samples/wasteful-central.btsnoop
              btlens diff samples/wasteful-central.btsnoop samples/tidy-central.btsnoop
              btlens audit bugreport.zip
              btlens anonymize btsnoop_hci.log shared.btsnoop
              adb exec-out cat /data/misc/bluetooth/logs/btsnoop_hci.log | btlens audit -
              btlens help audit
            """,
        version: version,
        subcommands: [StatsCommand.self, DecodeCommand.self, DevicesCommand.self, TimelineCommand.self, GATTCommand.self, EnergyCommand.self, AuditCommand.self, DiffCommand.self, RulesCommand.self, ExplainCommand.self, LiveCommand.self, AnonymizeCommand.self, ExportCommand.self]
    )
}

@main
enum Main {
    /// Blocks at least this large are mapped on their own and returned to the system when freed.
    static let mmapThreshold: Int32 = 128 << 10

    static func main() {
        // glibc raises its threshold for mapping a block on its own up to 32 MB after each such block is freed, so
        // the arrays that grow as a long capture is read (and are freed as links are judged) end up in the heap,
        // which keeps their pages: a fixed threshold returns them (10 GB `export --format jsonl` 65 → 57 MB).
        _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        do {
            var command = try BTLens.parseAsRoot()
            try command.run()
        } catch let exit as ExitStatus {
            Output.flushStandardOutput()
            Glibc.exit(exit.code)
        } catch {
            Output.flushStandardOutput()
            let code = BTLens.exitCode(for: error)
            let message = BTLens.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                Glibc.exit(0)
            }
            if code == .validationFailure {
                // ArgumentParser's message with the command's usage; it uses EX_USAGE (64), btlens documents 2.
                if !message.isEmpty { Diagnostics.printRaw(message) }
                Glibc.exit(ExitStatus.usage.code)
            }
            // Any other error comes from reading or writing a file: one line, and exit 3, never the 1 that
            // means findings.
            Diagnostics.printRaw("btlens: " + BTLens.message(for: error))
            Glibc.exit(ExitStatus.inputUnreadable.code)
        }
    }
}
