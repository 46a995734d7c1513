import Foundation
import ArgumentParser
import BTCapture
import BTTrack
import BTEnergy
import BTReport

struct EnergyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "energy",
        abstract: "Radio-on time and charge of each scan, connection (and its phases) and advertising set.",
        discussion: """
            Estimates from what the capture shows (ENERGY.md's model, documented in the man page): a scan listens \
            window/interval of its time and sends a scan request per scan response; a connection opens an event \
            every interval, each an exchange of one packet each way (data where the capture shows L2CAP traffic, \
            counted as link-layer PDUs at the link's data length and PHY, empty otherwise); own advertising sends \
            three packets per event. The phone's charge is priced with Android's power-profile currents \
            (default: Pixel 7), the peripheral's with an nRF52-class profile. What an HCI capture cannot see \
            (empty-packet packing, the peripheral's latency use, coexistence) is carried as a low–high range. \
            Host wake-ups (HCI events and ACL packets delivered to the host) are counted apart from the radio. \
            Repeats (three or more short scans, or advertising sessions of one set, with the same parameters) are one \
            entry with their summed cost, how long each lasted and how often it came back; --full lists each. \
            Finished connections' rows wait in a temporary file in TMPDIR (or /tmp) until they are printed.

            Where the capture holds Android's controller activity counters (vendor command 0xFD59), the \
            measured tx/rx time between two reads is shown beside the model's prediction for the same interval.

            --profile FILE takes YAML: a phone: mapping with Android power_profile.xml keys \
            (bluetooth.controller.rx, .tx, .idle in mA, bluetooth.controller.voltage in mV) and a peripheral: \
            mapping (rx_ma, tx_ma, voltage, empty_event_uc, advertising_event_uc, sleep_ua, sleep_clock_ppm).

            With --json prints, per file, {"file", "profile", "total": {"phone", "peripheral"}, "scans", \
            "connections" (with "phases"), "advertising", "host_wakeups", "measured"}; a cost is {"radio_s", \
            "charge_mc", "low_mc", "high_mc"}; an array when several files are given. The JSON Schema is \
            Sources/BTReport/Schemas/energy.schema.json.

            Examples:
              btlens energy samples/wasteful-central.btsnoop
              btlens energy --side both --profile pixel4.yml btsnoop_hci.log
              btlens energy --json capture.pklg | jq '.connections[] | {id, mc: .phone.charge_mc}'
            """
    )

    @OptionGroup var inputs: MultiFileOptions

    @Option(name: .long, help: "A YAML profile of the phone's and the peripheral's radio currents.")
    var profile: String?

    @Option(name: .long, help: "Whose charge the text shows: phone, peripheral or both (JSON has both).")
    var side: EnergyText.Side = .phone

    @Flag(name: .long, help: "List every scan and advertising session (text folds repeats into one entry; JSON always lists each).")
    var full = false

    func run() throws {
        let model = try ProfileLoading.energyModel(profile)
        // Each capture's links are priced as they are judged and then let go (`EnergyLinkRows`): their rows are set
        // aside in a temporary file and read back as the report is printed. One capture at a time.
        let directory = TemporaryFiles.directory
        var rows: EnergyLinkRows?
        var warned = false
        try inputs.report.run(
            label: "energy",
            makeVisitor: { progress in
                var options = TrackerOptions.withoutAdvertisers
                options.connectionsWhileScanningListed = 0  // the energy report does not list them
                options.scanDevicesListed = 0
                options.buildsAppScans = false  // no scan rule runs
                options.setScanSessionsAside()
                let made = EnergyLinkRows(energy: model, spillDirectory: directory)
                if let failure = made.records.spillFailure, !warned {
                    Diagnostics.warning(file: nil, "\(failure): the priced links are kept in memory")
                    warned = true
                }
                rows = made
                options.retirement = made.retirement(window: AuditCommand.retirementWindow)
                return TrackingCollector(options: options, progress: progress)
            },
            render: { path, name, _, tracked in
                if let failure = rows?.records.failure {
                    Diagnostics.error(file: path, "cannot set the priced links aside in \(directory): \(failure)")
                    return .failed
                }
                let report = EnergyReport(model: tracked, energy: model, rows: rows)
                // Printed as it is made, a connection at a time, not gathered into one string or JSON tree.
                return inputs.json ? .jsonStream { EnergyJSON.write(file: name, report: report, to: $0, level: $1) }
                    : .lines { EnergyText.write(file: path, report: report, side: side, full: full, line: $0) }
            })
    }
}

extension EnergyText.Side: ExpressibleByArgument {}
