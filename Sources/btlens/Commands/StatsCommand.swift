import ArgumentParser
import BTCapture
import BTDecode
import BTReport

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count records, HCI commands and events, ACL, advertising reports, connections and ATT PDUs.",
        discussion: """
            With --json prints, per file, an object with the keys file, format, linktype, records, \
            first_timestamp, last_timestamp (Unix seconds), hci.commands / hci.events / hci.le_subevents \
            (maps keyed by lowercase hex: 4 digits for command opcodes, 2 for the rest), acl_packets \
            (sent = host to controller, received), controller_debug_log_packets (a Qualcomm controller's \
            firmware log on ACL handle 0x0edc: counted among the ACL packets, not decoded as L2CAP), advertising_reports, connections, disconnections \
            (by reason), att (complete PDUs by opcode, after reassembly) and malformed; an array when \
            several files are given. Air captures add link_layer: advertising_pdus by type, connect_requests, \
            crc_errors, data_pdus, retransmissions, control (LL control opcodes) and more.

            Examples:
              btlens stats samples/heart-rate-session.btsnoop
              btlens stats --json btsnoop_hci.log | jq .att
              btlens stats - < capture.pklg
            """
    )

    @OptionGroup var inputs: MultiFileOptions

    func run() throws {
        try inputs.report.run(
            label: "stats",
            makeVisitor: { StatisticsCollector(progress: $0) },
            render: { path, name, capture, statistics in
                inputs.json ? .json(StatisticsJSON.object(file: name, info: capture.info, statistics: statistics))
                    : .text(StatisticsText.render(file: path, info: capture.info, statistics: statistics,
                                                  notices: capture.issues.notices))
            })
    }
}
