import ArgumentParser
import BTCapture
import BTDecode
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

    @Argument(help: "Capture files, archives or bug reports (each capture in turn; rotated logs given together are one); - reads standard input.")
    var files: [String]

    @OptionGroup var anonymizing: AnonymizeOptions

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("give a capture file (or - for standard input)") }
    }

    func run() throws {
        var shown = 0
        // Each finished link's GATT is set aside as bytes when the link is judged, and the link is let go
        // (`GATTLinkSpill`); the peers are gathered from them one at a time as the report is written.
        let directory = TemporaryFiles.directory
        var judged = GATTLinkSpill(spillDirectory: directory)
        var warned = false
        let retirement = {
            let made = GATTLinkSpill(spillDirectory: directory)
            judged = made
            if let failure = made.records.spillFailure, !warned {
                Diagnostics.warning(file: nil, "\(failure): the judged links' GATT is kept in memory")
                warned = true
            }
            // A judged link with a database stays slim (a later link of its peer may inherit it), the others go.
            return LinkRetirement(window: AuditCommand.retirementWindow, keeping: .summary, interest: nil) { c, kept in
                if kept { made.keep(c) }
            } as LinkRetirement?
        }
        // JSON is printed as each capture is tracked: one object for one capture, an array otherwise.
        let writer = JSONStreamWriter { Output.write($0) }
        var array: JSONStreamWriter.Elements?
        var single = false
        // No scan's devices are listed and no app scan is built: the report reads links alone.
        let failed = try Tracking.each(files, label: "gatt", anonymizing: anonymizing, retirement: retirement,
                                       scanDevicesListed: 0, connectionsWhileScanningListed: 0, buildsAppScans: false, resolved: { single = $0 == 1 && !$1 }) { input, model in
            if let failure = judged.records.failure {
                Diagnostics.error(file: input.path, "cannot set the judged links' GATT aside in \(directory): \(failure)")
                throw ExitStatus.inputUnreadable
            }
            let others = model.connections.filter { !$0.isJudged }
            let peers = { (body: (GATTReport.Peer) -> Void) in judged.forEachPeer(others: others, sortingIn: directory, body) }
            if json {
                if !single {
                    if array == nil { array = writer.elements() }
                    array?.next()
                }
                GATTReport.writeJSON(file: input.displayName, forEachPeer: peers, to: writer, level: single ? 0 : 1)
                if single { Output.write("\n") }
            } else {
                if shown > 0 { Output.line("") }
                GATTReport.write(file: input.path, forEachPeer: peers) { Output.line($0) }
                shown += 1
            }
        }
        if let array {
            array.close()
            Output.write("\n")
        }
        Output.flushStandardOutput()
        if failed { throw ExitStatus.inputUnreadable }
    }
}
