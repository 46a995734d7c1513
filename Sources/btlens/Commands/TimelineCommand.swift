import ArgumentParser
import BTCapture
import BTTrack
import BTReport

/// Runs the tracking pipeline over one capture, with progress and the one-line error form.
enum Tracking {
    static func model(_ path: String) throws -> CaptureModel {
        guard let capture = CaptureInput.open(path) else { throw ExitStatus.inputUnreadable }
        var progress = Progress(label: path, total: fileSize(path))
        var collector = TrackingCollector(options: .withoutAdvertisers, progress: { progress.update($0) })
        let model = try capture.accept(&collector)
        progress.finish()
        CaptureInput.reportIssues(path, capture.issues)
        keptUntilExit = model
        return model
    }

    /// The one model of a timeline/gatt run lives until the process exits: releasing tens of thousands of
    /// connections object by object costs several percent of the run and frees nothing anyone needs.
    nonisolated(unsafe) private static var keptUntilExit: CaptureModel?

    static func displayName(_ path: String) -> String {
        path == "-" ? "-" : String(path.split(separator: "/").last ?? Substring(path))
    }
}

struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Per-connection timelines: connect, MTU, pairing, discovery, subscriptions, traffic, parameter changes, idle gaps, disconnect.",
        discussion: """
            Each connection is listed in time order with absolute (UTC) and relative times. Dense ATT traffic is \
            summarised in runs (e.g. "60 notifications Heart Rate Measurement at 1 Hz"); discovery procedures are \
            shown with what they asked for and found (six or more per-service procedures in a row as one \
            "discovery: contents" line; --json keeps each); Enhanced ATT bearers with their MTU; other L2CAP \
            channels (SDP, RFCOMM, AVDTP, LE credit-based) opened or refused; a summary line per \
            connection says how long it lasted and how long connecting took from the create command. Scan sessions, \
            own advertising and failed connection attempts (with how long each ran) are their own lanes. A capture that starts mid-connection gets a connection from its first packet \
            (implicit_start); connections still up at the end are open.

            --json prints {"file", "first_timestamp", "last_timestamp", "controller_debug_log_packets", \
            "connections": [...], "failed_connections", \
            "scans": [...], "advertising": [...]}; each connection has handle ("0x0040"), controller, peer_address, \
            peer_address_type, role, start, connect_requested (our create command, or null), end (null when \
            open), disconnect_reason ("0x13" or null), implicit_start, acl_packets, mtu, eatt_bearers, eatt_mtu and events; \
            each failed connection attempt has requested (its create command, or null), status, peer_address, accept_list and cancelled (withdrawn by the host: Create Connection Cancel). The JSON Schema is Sources/BTReport/Schemas/timeline.schema.json.

            Examples:
              btlens timeline samples/heart-rate-session.btsnoop
              btlens timeline --connection 2 samples/wasteful-central.btsnoop
              btlens timeline --json btsnoop_hci.log | jq '.connections[].disconnect_reason'
            """
    )

    @Argument(help: "A capture file; - reads standard input.")
    var file: String

    @Option(name: .long, help: "Only this connection (its number in the timeline, #1, #2, …).")
    var connection: Int?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Option(name: .long, help: "Colour: auto (only on a terminal), always, never.")
    var color: DecodeCommand.ColorMode = .auto

    /// Tracks without printing: what `make bench` times as the cost of the tracking layer.
    @Flag(name: .customLong("track-only"), help: .hidden)
    var trackOnly = false

    func run() throws {
        let model = try Tracking.model(file)
        if trackOnly {
            Diagnostics.printRaw("\(model.connections.count) connections, \(model.scans.count) scans, \(model.advertisers.count) advertisers")
            return
        }
        if let connection, !model.connections.contains(where: { $0.id == connection }) {
            Diagnostics.error(file: file, "no connection #\(connection) (the capture has \(model.connections.count))")
            throw ExitStatus.usage
        }
        if json {
            Output.line(TimelineReport.json(file: Tracking.displayName(file), model: model, connectionFilter: connection).serialized())
        } else {
            let colored = color == .always || (color == .auto && Output.standardOutputIsTerminal)
            Output.line(TimelineReport.text(file: file, model: model, connectionFilter: connection, colored: colored))
        }
        Output.flushStandardOutput()
    }
}
