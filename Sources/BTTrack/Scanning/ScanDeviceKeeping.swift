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
    /// The links' peers seen so far (what `reconnect-by-scan` looks up), as a Bloom filter: 1 MiB whatever the
    /// number of peers (a set held 5 MB more on a 10 GB capture of 310,000 random peers). A device it wrongly
    /// takes for a peer keeps its count, which changes nothing: a trimmed list is the whole list's order with
    /// entries left out, and no reader looks for a device that was no link's peer.
    var peers = PeerFilter()
    /// The distinct devices (`DeviceKey`) of each controller's app scan going on.
    var scans: [UInt16: Set<UInt64>] = [:]

    init(listed: Int = Int.max) { self.listed = listed }

    /// Lists are trimmed at all.
    var trims: Bool { listed != Int.max }

    mutating func linkOpened(peer: BDAddr?) {
        guard trims, let peer else { return }
        peers.insert(peer.rawValue)
    }

    /// A session of `controller` ended with these counts (in any order unless `.whole`, `DeviceTally.summary`):
    /// returns the distinct devices of its app scan so far (nil for `.whole`) and trims the list to the first
    /// `listed` and the peers', most reports first.
    mutating func ended(_ list: inout [DeviceReportCount], controller: UInt16, piece: ScanPiece) -> Int? {
        guard piece != .whole else {
            scans[controller] = nil
            return nil
        }
        // Taken out of the dictionary, so inserting does not copy it (a copy per session was most of this work);
        // a first piece reuses the storage of the scan before.
        var devices = scans.removeValue(forKey: controller) ?? []
        if piece == .first { devices.removeAll(keepingCapacity: true) }
        devices.reserveCapacity(devices.count + list.count)
        for d in list { devices.insert(DeviceKey(address: d.address, type: d.addressType).rawValue) }
        scans[controller] = devices
        if listed == 0 {
            // No report lists a scan's devices (the audit): the peers' counts alone, ordered among themselves.
            // A new array: removing in place would keep the whole list's storage.
            list = list.filter { peers.contains($0.address.rawValue) }
            DeviceTally.order(&list)
        } else {
            DeviceTally.order(&list)
            if list.count > listed {
                var kept: [DeviceReportCount] = []
                for (i, d) in list.enumerated() where i < listed || peers.contains(d.address.rawValue) { kept.append(d) }
                list = kept
            }
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

/// The links' peers: an exact set of 48-bit addresses while they are few, then a Bloom filter (no false
/// negatives, a fixed 1 MiB). Most captures have a few peers: a 1 MiB table allocated and zeroed for them was a
/// large share of tracking a capture of a few packets (the fuzz harness tracks hundreds a second).
struct PeerFilter {
    private var few: Set<UInt64> = []
    private var words: [UInt64] = []
    static let wordCount = 1 << 17
    /// Peers held exactly before the filter takes over (a set of about 100 KB).
    static let exactLimit = 4_096

    mutating func insert(_ address: UInt64) {
        if words.isEmpty {
            few.insert(address)
            guard few.count > Self.exactLimit else { return }
            words = [UInt64](repeating: 0, count: Self.wordCount)
            for a in few { set(a) }
            few = []
            return
        }
        set(address)
    }

    private mutating func set(_ address: UInt64) {
        let (a, b, c) = Self.bits(address)
        for bit in [a, b, c] { words[bit >> 6] |= 1 << UInt64(bit & 63) }
    }

    func contains(_ address: UInt64) -> Bool {
        guard !words.isEmpty else { return few.contains(address) }
        let (a, b, c) = Self.bits(address)
        return isSet(a) && isSet(b) && isSet(c)
    }

    private func isSet(_ bit: Int) -> Bool { words[bit >> 6] & (1 << UInt64(bit & 63)) != 0 }

    /// The address's three bit positions, 21 bits apart in its hash.
    static func bits(_ address: UInt64) -> (Int, Int, Int) {
        let z = SplitMixHash.hash(address)
        return (Int(z & mask), Int((z >> 21) & mask), Int((z >> 42) & mask))
    }

    static let mask = UInt64(wordCount * 64 - 1)
}
