import BTWire
import BTCapture
import BTTrack

/// BTL007: after a disconnect, the app scans again to reach a peer it already knew instead of connecting directly.
public struct ReconnectByScanRule: Rule {
    public static let description = RuleDescription(
        id: "BTL007", name: "reconnect-by-scan", title: "Scanning again to reconnect to a known peer",
        category: .scanning, defaultSeverity: .warning,
        rationale: "A scan to find a device the app was already connected to spends scan windows (and wakes the host for every report) only to learn an address it had. A direct connection request (or a background accept-list connection) reaches the peer without the scan.",
        coreBluetooth: "keep the peripheral's identifier and call retrievePeripherals(withIdentifiers:) then connect(_:options:) — the connection request stays pending without a timeout until the device is in range.",
        android: "keep the address and call getRemoteDevice(address).connectGatt(context, /*autoConnect*/ true, callback) for a background reconnection instead of starting a new scan.",
        fixtures: [.triggers("wasteful-central", findings: 1, connection: 2), .clean("heart-rate-session"),
                   .clean("fragmented-acl")]
    )

    public init() {}

    public func evaluate(_ model: CaptureModel, context: RuleContext) -> [Finding] {
        var findings: [Finding] = []
        for (index, c) in model.connections.enumerated() where c.transport == .le {
            guard let peer = c.peerAddress else { continue }
            // The latest earlier link to the same peer that had ended before this one started.
            guard let previous = model.connections[..<index].last(where: {
                $0.peerAddress == peer && $0.controller == c.controller && ($0.end?.timestamp ?? c.start.timestamp) < c.start.timestamp
            }), let ended = previous.end else { continue }
            let scan = model.scans.first {
                $0.controller == c.controller && $0.start.timestamp > ended.timestamp && $0.start.timestamp < c.start.timestamp
            }
            guard let scan else { continue }
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: scan.start.timestamp,
                end: c.start.timestamp, records: [ended, scan.start, c.start],
                message: "After \(RuleText.connection(previous)) ended, the app scanned again (\(RuleText.seconds(c.start.timestamp.nanoseconds - scan.start.timestamp.nanoseconds)), \(scan.reports) reports) to reconnect to \(peer) as \(RuleText.connection(c))."))
        }
        return findings
    }
}
