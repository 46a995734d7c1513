import ArgumentParser
import BTCapture
import BTTrack
import BTReport

struct GATTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "The GATT tree per peer as discovery revealed it, and what the app did with each characteristic.",
        discussion: """
            Services, characteristics (properties, value handle) and descriptors are rebuilt from the discovery \
            responses in the capture and named from the Bluetooth SIG assigned numbers. For each characteristic: \
            reads, writes, notifications, indications, subscription state and the last value (decoded for \
            well-known characteristics). A reconnection that skips discovery (iOS and Android cache the database) \
            inherits the earlier connection's database. The JSON Schema is Sources/BTReport/Schemas/gatt.schema.json.

            Examples:
              btlens gatt samples/wasteful-central.btsnoop
              btlens gatt --json btsnoop_hci.log | jq '.peers[].services[].name'
            """
    )

    @Argument(help: "A capture file; - reads standard input.")
    var file: String

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func run() throws {
        let model = try Tracking.model(file)
        if json {
            Output.line(GATTReport.json(file: Tracking.displayName(file), model: model).serialized())
        } else {
            Output.line(GATTReport.text(file: file, model: model))
        }
        Output.flushStandardOutput()
    }
}
