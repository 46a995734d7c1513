import BTWire
import BTDecode

/// Where a connection's GATT database came from.
public enum GATTOrigin: String, Sendable {
    /// The connection's own discovery.
    case discovered
    /// An earlier connection to the same peer discovered it; the OS cached it and skipped discovery.
    case inherited
    /// A later connection to the same peer discovered it: the capture began after the OS had cached it, and
    /// the later discovery shows what the cache held.
    case learnedLater = "learned_later"
}

/// A peer's GATT database learnt anywhere in the capture names the handles of every connection to that peer
/// that did not discover it: iOS and Android cache a bonded (and often an unbonded) peer's database and skip
/// discovery on reconnection, and a capture may hold the cached reconnections before the discovery.
///
/// A database is not carried across evidence that it changed: a Service Changed indication in a connection
/// between (Core Vol 3 Part G §7.1), or two discoveries that disagree on a handle (then neither is trusted for
/// the links between them).
enum GATTKnowledge {
    static let serviceChanged = BluetoothUUID(uuid16: 0x2A05)

    /// The same peer: its identity address where the capture shows it (SMP Identity Address Information, or
    /// the identity the controller resolved in LE Enhanced Connection Complete, which is then `peerAddress`),
    /// else its address.
    static func peerKeys(_ connections: [Connection]) -> [BDAddr?] {
        var identityOf: [BDAddr: BDAddr] = [:]
        for c in connections {
            if let address = c.peerAddress, let identity = c.peerIdentityAddress { identityOf[address] = identity }
        }
        return connections.map { c in
            c.peerIdentityAddress ?? c.peerAddress.map { identityOf[$0] ?? $0 }
        }
    }

    /// Gives each connection with ATT traffic and no database of its own the database of its peer learnt
    /// elsewhere: the latest earlier discovery (`inherited`), else the first later one (`learnedLater`).
    /// `receiver` gives the link that gets the database: the link itself, or a copy (a live snapshot must not
    /// change what the tracker decides later).
    /// `keys` gives each link's peer when the caller knows more than `connections` shows (`LinkRetirement`
    /// shares with a few links of one peer).
    static func share(_ connections: inout [Connection], keys given: [BDAddr?]? = nil,
                      receiver: (Connection) -> Connection = { $0 }) {
        let keys = given ?? peerKeys(connections)
        // Only peers with a link that discovered a database have anything to share: their links alone are
        // gathered (a capture of links to ever new addresses would otherwise make a list per link).
        var sharing: Set<BDAddr> = []
        for (i, c) in connections.enumerated() where !c.gatt.isEmpty && c.gatt.inheritedFrom == nil {
            if let key = keys[i] { sharing.insert(key) }
        }
        guard !sharing.isEmpty else { return }
        var byPeer: [BDAddr: [Int]] = [:]
        for i in connections.indices {
            guard let key = keys[i], sharing.contains(key) else { continue }
            byPeer[key, default: []].append(i)
        }
        for (_, indices) in byPeer where indices.count > 1 {
            share(peer: indices, &connections, receiver: receiver)
        }
    }

    /// One peer's links, `indices` in time order. Linear: the discoveries before and after each link, and prefix
    /// counts of Service Changed indications, are found in a pass each way (a peer may have thousands of links).
    static func share(peer indices: [Int], _ connections: inout [Connection], receiver: (Connection) -> Connection) {
        let n = indices.count
        let discovered = indices.map { !connections[$0].gatt.isEmpty && connections[$0].gatt.inheritedFrom == nil }
        guard discovered.contains(true) else { return }
        // Positions (in `indices`) of the latest discovery strictly before, and the first strictly after, each link.
        var before = [Int?](repeating: nil, count: n), after = [Int?](repeating: nil, count: n)
        var last: Int?
        for k in 0..<n {
            before[k] = last
            if discovered[k] { last = k }
        }
        last = nil
        for k in (0..<n).reversed() {
            after[k] = last
            if discovered[k] { last = k }
        }
        // Told the database changed: a Service Changed indication, judged with the link's own database or, without
        // one, with the database it would take (the same for every link between two discoveries). Prefix counts
        // answer "any between" at once.
        func told(_ k: Int, _ candidate: Int?) -> Bool {
            let c = connections[indices[k]]
            let db = c.gatt.isEmpty ? candidate.map { connections[indices[$0]].gatt } ?? GATTDatabase() : c.gatt
            return c.series.contains { s in s.kind == .indication && !s.sent && db.uuid(of: s.handle) == serviceChanged }
        }
        var toldBefore = [0], toldAfter = [0]
        for k in 0..<n {
            toldBefore.append(toldBefore[k] + (told(k, before[k]) ? 1 : 0))
            toldAfter.append(toldAfter[k] + (told(k, discovered[k] ? k : after[k]) ? 1 : 0))
        }
        // Links in (from, to] told: prefix(to + 1) − prefix(from + 1).
        func changed(_ prefix: [Int], from: Int, to: Int) -> Bool { prefix[to + 1] - prefix[from + 1] > 0 }
        var conflict: (pair: (Int, Int), result: Bool)?
        for k in 0..<n {
            let c = connections[indices[k]]
            // A link judged before the capture ended (`LinkRetirement`) keeps what it was judged with.
            guard c.gatt.isEmpty, c.firstATT != nil, !c.isJudged else { continue }
            var source: (position: Int, origin: GATTOrigin)?
            if let b = before[k], !changed(toldBefore, from: b, to: k) {
                // A later discovery that disagrees shows the database changed at some point in between: the cache
                // this link used may already have been the new one.
                if let a = after[k] {
                    if conflict == nil || conflict!.pair != (b, a) {
                        conflict = ((b, a), connections[indices[a]].gatt.conflicts(with: connections[indices[b]].gatt))
                    }
                    if conflict!.result { continue }
                }
                source = (b, .inherited)
            } else if before[k] == nil, let a = after[k], !changed(toldAfter, from: k, to: a) {
                source = (a, .learnedLater)
            }
            guard let (position, origin) = source else { continue }
            let from = connections[indices[position]]
            let r = receiver(c)
            let cccd = r.gatt.cccdValues, typed = r.gatt.typedValues
            r.gatt = from.gatt
            r.gatt.cccdValues = cccd
            r.gatt.typedValues = typed
            r.gatt.inheritedFrom = from.id
            r.gatt.origin = origin
            connections[indices[k]] = r
        }
        // An air link whose own discovery lost responses (the sniffer missed them): its database has gaps that the
        // nearest agreeing discovery of the same peer fills. HCI links are left alone: there a discovery the app
        // stopped short is the app's choice, not a gap.
        for k in 0..<n where discovered[k] {
            let c = connections[indices[k]]
            guard c.air != nil, c.discoveries.contains(where: { !$0.completed }) else { continue }
            var source: Int?
            if let b = before[k], !changed(toldBefore, from: b, to: k),
               !connections[indices[b]].gatt.conflicts(with: c.gatt) {
                source = b
            } else if let a = after[k], !changed(toldAfter, from: k, to: a),
                      !connections[indices[a]].gatt.conflicts(with: c.gatt) {
                source = a
            }
            guard let source else { continue }
            let from = connections[indices[source]].gatt
            var filled = c.gatt
            guard filled.fillGaps(from: from) > 0 else { continue }
            let r = receiver(c)
            r.gatt = filled
            r.gatt.gapsFilledFrom = connections[indices[source]].id
            connections[indices[k]] = r
        }
    }
}
