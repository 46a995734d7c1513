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
    /// The links' peers seen so far (what `reconnect-by-scan` looks up), as a Bloom filter: 256 KiB whatever the
    /// number of peers (a set held 5 MB more on a 10 GB capture of 310,000 random peers). A device it wrongly
    /// takes for a peer keeps its count, which changes nothing: a trimmed list is the whole list's order with
    /// entries left out, and no reader looks for a device that was no link's peer.
    var peers = PeerFilter()
    /// The distinct devices of each controller's app scan going on, controllers in the order first seen (a capture
    /// nearly always has one). Keys only, in a table rather than a `Set`: hashing every device of every session
    /// with SipHash was a tenth of the link thread's time on a capture of thousands of scans.
    var scans: [(controller: UInt16, devices: KeyTable<DeviceKey>)] = []

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
            scans.removeAll { $0.controller == controller }
            return nil
        }
        let c = scan(of: controller)
        // A first piece reuses the storage of the scan before.
        if piece == .first { scans[c].devices.removeAll() }
        for d in list { scans[c].devices.insert(DeviceKey(address: d.address, type: d.addressType)) }
        let count = scans[c].devices.count
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
        return count
    }

    /// A session of `controller` ended with the counts in `tally`, which is emptied for the next session: its
    /// summary, trimmed as `ended(_:controller:piece:)` trims, made without listing the devices it leaves out
    /// when no report lists them (the audit). A first piece takes the tally's table as its app scan's devices.
    mutating func ended(_ tally: inout DeviceTally, controller: UInt16, piece: ScanPiece) -> DeviceTally.Summary {
        // Sized for this session's devices, not for the app scan's a first piece takes in exchange.
        let held = tally.devices.count
        defer { tally.removeAll(expecting: held) }
        guard piece != .whole, listed == 0 else {
            var summary = tally.summary(sorted: piece == .whole)
            summary.scanDevices = ended(&summary.reportsPerDevice, controller: controller, piece: piece)
            return summary
        }
        let peers = self.peers
        var summary = tally.summary { peers.contains($0.address.rawValue) }
        DeviceTally.order(&summary.reportsPerDevice)
        let c = scan(of: controller)
        if piece == .first {
            // The tally's table is this piece's devices: exchanged, not copied; the tally empties what it gets.
            scans[c].devices.exchangeStorage(with: &tally.devices)
        } else {
            tally.devices.forEach { key, _ in scans[c].devices.insert(key) }
        }
        summary.scanDevices = scans[c].devices.count
        return summary
    }

    /// The index in `scans` of `controller`'s app scan, made empty when it has none: as many devices as its
    /// pieces list.
    private mutating func scan(of controller: UInt16) -> Int {
        if let c = scans.firstIndex(where: { $0.controller == controller }) { return c }
        scans.append((controller, KeyTable(limit: Int.max)))
        return scans.count - 1
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
/// negatives, a fixed 256 KiB). Most captures have a few peers: a filter allocated and zeroed for them was a
/// large share of tracking a capture of a few packets (the fuzz harness tracks hundreds a second). The exact set
/// is a `KeyTable`: every device of every scan session is looked up here.
///
/// The filter is blocked: an address's three bits lie in one 64-bit word, so a lookup costs one cache miss, not
/// three (every device of every scan session is looked up). 256 KiB, not 1 MiB: the link thread's other tables then
/// stay in a 1 MiB cache beside it (on 1 GB of many scans the link thread took about 5 % less time). At 27,000
/// peers (1 GB) about 1 device in 4,000 is taken for a peer; at 310,000 (10 GB) about 1 in 18, where 1 MiB took
/// 1 in 360: a few more counts kept in the sessions set aside, nothing else.
struct PeerFilter {
    private var few = KeyTable<PeerKey>(limit: Self.exactLimit + 1)
    private var words: [UInt64] = []
    static let wordCount = 1 << 15
    /// Peers held exactly before the filter takes over (a table of about 130 KB).
    static let exactLimit = 4_096

    /// An address as a key of the exact set: its 48 bits and a bit above them always set (no key is 0).
    struct PeerKey: PackedKey {
        let rawValue: UInt64
        init(rawValue: UInt64) { self.rawValue = rawValue }
        init(address: UInt64) { rawValue = address | 1 << 63 }
        var address: UInt64 { rawValue & ~(1 << 63) }
    }

    mutating func insert(_ address: UInt64) {
        if words.isEmpty {
            few.insert(PeerKey(address: address))
            guard few.count > Self.exactLimit else { return }
            words = [UInt64](repeating: 0, count: Self.wordCount)
            few.forEach { key, _ in set(key.address) }
            few = KeyTable(limit: 1)
            return
        }
        set(address)
    }

    private mutating func set(_ address: UInt64) {
        let (word, bits) = Self.place(address)
        words[word] |= bits
    }

    func contains(_ address: UInt64) -> Bool {
        guard !words.isEmpty else { return few.slot(of: PeerKey(address: address)) != nil }
        let (word, bits) = Self.place(address)
        return words[word] & bits == bits
    }

    /// The address's word and its three bits in it, from separate parts of its hash.
    @inline(__always)
    static func place(_ address: UInt64) -> (word: Int, bits: UInt64) {
        let z = SplitMixHash.hash(address)
        let bits: UInt64 = 1 << (z & 63) | 1 << ((z >> 6) & 63) | 1 << ((z >> 12) & 63)
        return (Int((z >> 18) & wordMask), bits)
    }

    static let wordMask = UInt64(wordCount - 1)
}
