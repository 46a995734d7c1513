import ArgumentParser
import BTCapture
import BTTrack
import BTReport

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the advertisers a capture heard, its scan sessions and its own advertising.",
        discussion: """
            The table has one row per advertiser (address and address type), most reports first: name, \
            RSSI minimum/median/maximum, reports, first and last seen (seconds from the capture's first \
            record) and a summary of service UUIDs, service data, manufacturer data, iBeacon frames and the \
            appearance (named from the Bluetooth SIG lists). \
            Then come the scan sessions (LE Set (Extended) Scan Enable, with parameters, duplicate \
            filtering, duty cycle, reports and connections that came up while scanning: how many, and the \
            first three's times; --json lists every one) and the \
            capture's own advertising sessions (peripheral role).

            Limits: 4096 advertisers are kept (the first heard; the rest are counted and estimated), \
            4096 devices per scan session, 16 names, UUIDs, service-data and manufacturer entries per \
            advertiser.

            With --json prints, per file, an object with the keys file, format, first_timestamp, \
            last_timestamp, advertisers, advertisers_not_kept, scans and own_advertising (times in Unix \
            seconds); an array when several files are given.

            Examples:
              btlens devices samples/beacons.btsnoop
              btlens devices --json btsnoop_hci.log | jq '.advertisers[] | select(.ibeacon)'
              btlens devices --json capture.pklg | jq '.scans[] | {start, end, filter_duplicates}'
            """
    )

    @OptionGroup var inputs: MultiFileOptions

    func run() throws {
        try inputs.report.run(
            label: "devices",
            makeVisitor: { progress in
                // The report lists no link: each finished link is let go once the window has passed it
                // (`LinkRetirement`, nothing to judge), so memory holds advertisers and scans, not links.
                var options = TrackerOptions()
                // The text shows a scan's first connections and counts the rest; the JSON lists every one.
                options.connectionsWhileScanningListed = inputs.json ? .max : DevicesText.connectionsShown
                options.scanDevicesListed = inputs.json ? ScanSessionJSON.topDeviceCount : 0
                options.buildsAppScans = false  // no scan rule runs
                options.setScanSessionsAside()
                options.retirement = LinkRetirement(window: AuditCommand.retirementWindow, keeping: .nothing) { _, _ in }
                return TrackingCollector(options: options, progress: progress)
            },
            render: { path, name, capture, model in
                let report = DevicesReport(file: inputs.json ? name : path, info: capture.info, model: model,
                                           advertiserOverflow: model.advertiserOverflow)
                // JSON written as it is made: a scan left on through a long capture lists every connection.
                return inputs.json ? .jsonStream { DevicesJSON.write(report, to: $0, level: $1) } : .lines { DevicesText.write(report, line: $0) }
            })
    }
}
