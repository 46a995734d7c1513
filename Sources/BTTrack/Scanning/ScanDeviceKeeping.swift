import BTWire

/// What a finished scan session keeps of its per-device counts (`ScanSession.reportsPerDevice`, up to 4,096
/// devices, 24 bytes each): a capture of thousands of scans would otherwise hold millions of counts.
///
/// Readers of the list: a report's top devices (`listed`, most reports first), `reconnect-by-scan`'s reports from
/// a peer it reconnected to (so the counts of every device that was a link's peer stay), and an app scan's
/// distinct devices, a union over its pieces. The scan tracker says as each session ends whether it is a piece of
/// the app scan before it (`ScanPiece`, judged as `AppScans.build` judges it); the distinct devices of the pieces
/// so far are kept here, one set per controller for the scan going on, and each piece records the count
/// (`ScanSession.scanDevices`), so its list can be trimmed at once.
struct ScanDeviceKeeping {
    /// Devices a report lists per scan; `Int.max` keeps every list whole (the timeline).
    var listed = Int.max
    /// Addresses of the links' peers seen so far (what `reconnect-by-scan` looks up), at most `peerLimit`.
    var peers = Set<UInt64>()
    /// Peers past `peerLimit`, not remembered: from the first, lists stay whole (exact, not bounded).
    var peersPastLimit = 0
    /// The distinct devices (`DeviceKey`) of each controller's app scan going on.
    var scans: [UInt16: Set<UInt64>] = [:]

    static let peerLimit = 1 << 18

    init(listed: Int = Int.max) { self.listed = listed }

    /// Lists are trimmed at all.
    var trims: Bool { listed != Int.max }

    mutating func linkOpened(peer: BDAddr?) {
        guard trims, let peer else { return }
        if peers.count < Self.peerLimit { peers.insert(peer.rawValue) } else if !peers.contains(peer.rawValue) { peersPastLimit += 1 }
    }

    /// A session of `controller` ended with these counts: returns the distinct devices of its app scan so far
    /// (nil for `.whole`) and trims the list to the first `listed` and the peers', in their order.
    mutating func ended(_ list: inout [DeviceReportCount], controller: UInt16, piece: ScanPiece) -> Int? {
        guard piece != .whole else {
            scans[controller] = nil
            return nil
        }
        var devices = piece == .next ? scans[controller] ?? [] : []
        for d in list { devices.insert(DeviceKey(address: d.address, type: d.addressType).rawValue) }
        scans[controller] = devices
        if peersPastLimit == 0, list.count > listed {
            var kept: [DeviceReportCount] = []
            for (i, d) in list.enumerated() where i < listed || peers.contains(d.address.rawValue) { kept.append(d) }
            list = kept
        }
        return devices.count
    }
}

/// How a finished scan session stands to the app scans (`AppScans.build`), as the scan tracker sees at its end.
enum ScanPiece: Int {
    /// Its list stays whole: trimming is off, or a scan client of Android's was seen on the controller (its
    /// scans count the devices of whichever sessions they cover).
    case whole = -1
    /// The first piece of an app scan.
    case first = 0
    /// The next piece of the app scan before it (the same scan restarted at once).
    case next = 1
}
