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
        // The app's scans per controller, in time order, to find "a scan between A's end and B's start".
        var scansByController: [UInt16: [AppScan]] = [:]
        for s in model.appScans { scansByController[s.controller, default: []].append(s) }
        // The latest ended link per (controller, peer), maintained in start order: linear in connections.
        struct PeerKey: Hashable { var controller: UInt16; var peer: BDAddr }
        var lastEnded: [PeerKey: Connection] = [:]
        var pendingEnds: [Connection] = []  // links not yet ended at the current start time, by end time
        for c in model.connections.sorted(by: { $0.start.timestamp < $1.start.timestamp }) {
            // Links that ended before this one started become "previous" links of their peer.
            pendingEnds.removeAll { p in
                guard let end = p.end, end.timestamp < c.start.timestamp, let peer = p.peerAddress else { return false }
                let key = PeerKey(controller: p.controller, peer: peer)
                if let known = lastEnded[key], let knownEnd = known.end, knownEnd.timestamp > end.timestamp { return true }
                lastEnded[key] = p
                return true
            }
            defer { if c.peerAddress != nil && c.end != nil { pendingEnds.append(c) } }
            guard c.transport == .le, model.isAppLink(c), let peer = c.peerAddress,
                  let previous = lastEnded[PeerKey(controller: c.controller, peer: peer)], let ended = previous.end,
                  let scans = scansByController[c.controller]
            else { continue }
            // The first scan that started after the previous link ended and before this one started.
            var lo = 0, hi = scans.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if scans[mid].start.timestamp > ended.timestamp { hi = mid } else { lo = mid + 1 }
            }
            guard lo < scans.count, scans[lo].start.timestamp < c.start.timestamp else { continue }
            let scan = scans[lo]
            let scanned = max(0, min(c.start.timestamp.nanoseconds, (scan.endTimestamp ?? c.start.timestamp).nanoseconds)
                .minusSaturating(scan.start.timestamp.nanoseconds))
            let fromPeer = scan.sessions.reduce(0) { n, i in
                n + model.scans[i].reportsPerDevice.reduce(0) { $0 + ($1.address == peer ? $1.reports : 0) }
            }
            let ofPeer = scan.reports > 0 ? ", \(fromPeer) of them from \(peer)" : ""
            findings.append(Finding(
                rule: Self.description, controller: c.controller, connection: c, start: scan.start.timestamp,
                end: c.start.timestamp, records: [ended, scan.start, c.start],
                message: "After \(RuleText.connection(previous)) ended, the app scanned again (\(RuleText.seconds(scanned)), \(Plural.of(scan.reports, "report"))\(ofPeer)) to reconnect to \(peer) as \(RuleText.connection(c)).")
                    .costing(RuleCost.scanning(model.scans[scan.pricedSession], seconds: Double(scanned) / 1e9, context)))
        }
        return findings
    }
}
