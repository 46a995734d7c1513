import ArgumentParser
import BTScenario
#if canImport(Glibc)
import Glibc
#endif

extension ScenarioTool {
    /// `btsnooz NAME DIR`: a scenario as the btsnooz logs an Android phone keeps while its full snoop log is off.
    struct BTSnooz: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "btsnooz",
            abstract: "Write a scenario as Android's btsnooz_hci.log and btsnooz_hci.log.last (the full log off).",
            discussion: """
                Android 12 and later keep the last packets in a ring while the full snoop log is off (ACL cut to \
                14 bytes but on the signalling channel, SCO and ISO to their type byte) and dump the ring at each \
                bug report, the dump before renamed .last. DIR/btsnooz_hci.log.last is the ring after \
                --last-dump-at packets, DIR/btsnooz_hci.log the ring at the end; with --truncate the log is cut \
                inside a record, as an interrupted copy. --layout btsnooz-records writes both as some phones do: a \
                btsnoop file header, then btsnooz version 2 records (length, packet length, time since the record \
                before, type, the kept bytes) with no absolute time. Used for btlens's tests and fuzz seeds.

                Example: btlens-scenario btsnooz heart-rate-session phone/ --ring 200 --last-dump-at 150
                """)

        @Argument(help: "Scenario name (see `list`).")
        var name: String
        @Argument(help: "Directory to write btsnooz_hci.log and btsnooz_hci.log.last in (must exist).")
        var directory: String
        @Option(help: "Packets the ring holds (a user build's: \(BTSnoozLog.userBuildRing)).")
        var ring = BTSnoozLog.userBuildRing
        @Option(help: "The packet after which the earlier bug report dumped the ring (default: half of them).")
        var lastDumpAt: Int?
        @Flag(help: "Cut btsnooz_hci.log inside a record two thirds of the way in.")
        var truncate = false
        @Option(help: "How the files are laid out: btsnoop (btsnoop records cut short, AOSP's) or btsnooz-records (a btsnoop header, then btsnooz records).")
        var layout = BTSnoozLog.Layout.btsnoop.rawValue

        func run() throws {
            guard ring > 0 else { throw ToolError.usage("--ring must be positive") }
            guard let layout = BTSnoozLog.Layout(rawValue: layout) else {
                throw ToolError.usage("--layout must be one of " + BTSnoozLog.Layout.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let scenario = try ScenarioTool.scenario(named: name)
            let temporary = directory + "/.btsnooz-\(getpid()).btsnoop"
            try ScenarioTool.write(scenario, to: temporary, format: .btsnoopH4)
            defer { unlink(temporary) }
            let btsnoop = try Pcapng.read(temporary)
            let packets = BTSnoozLog.packetCount(btsnoop)
            let (last, current) = BTSnoozLog.files(fromBTSnoop: btsnoop, lastDumpAt: lastDumpAt ?? packets / 2, ring: ring,
                                                   layout: layout)
            try ScenarioTool.writeFile(last, to: directory + "/btsnooz_hci.log.last")
            try ScenarioTool.writeFile(truncate ? BTSnoozLog.truncated(current, share: 2.0 / 3, layout: layout) : current,
                                       to: directory + "/btsnooz_hci.log")
        }
    }
}
