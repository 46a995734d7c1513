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
    static func share(_ connections: inout [Connection], receiver: (Connection) -> Connection = { $0 }) {
        let keys = peerKeys(connections)
        var byPeer: [BDAddr: [Int]] = [:]
        for i in connections.indices {
            guard let key = keys[i] else { continue }
            byPeer[key, default: []].append(i)
        }
        for (_, indices) in byPeer where indices.count > 1 {
            let discovered = indices.filter { !connections[$0].gatt.isEmpty && connections[$0].gatt.inheritedFrom == nil }
            guard !discovered.isEmpty else { continue }
            for i in indices {
                let c = connections[i]
                guard c.gatt.isEmpty, c.firstATT != nil else { continue }
                let before = discovered.last { $0 < i }
                let after = discovered.first { $0 > i }
                var source: (index: Int, origin: GATTOrigin)?
                if let b = before, !changed(connections, indices, from: b, to: i, database: connections[b].gatt) {
                    // A later discovery that disagrees shows the database changed at some point in between: the
                    // cache this link used may already have been the new one.
                    if let a = after, connections[a].gatt.conflicts(with: connections[b].gatt) { continue }
                    source = (b, .inherited)
                } else if before == nil, let a = after,
                          !changed(connections, indices, from: i, to: a, database: connections[a].gatt) {
                    source = (a, .learnedLater)
                }
                guard let (from, origin) = source else { continue }
                let r = receiver(c)
                let cccd = r.gatt.cccdValues, typed = r.gatt.typedValues
                r.gatt = connections[from].gatt
                r.gatt.cccdValues = cccd
                r.gatt.typedValues = typed
                r.gatt.inheritedFrom = connections[from].id
                r.gatt.origin = origin
                connections[i] = r
            }
        }
    }

    /// Whether a link of the peer after `from`, up to and including `to`, was told the database changed (a
    /// Service Changed indication, judged with `database` where the link has none of its own).
    static func changed(_ connections: [Connection], _ indices: [Int], from: Int, to: Int,
                        database: GATTDatabase) -> Bool {
        indices.contains { i in
            guard i > from && i <= to else { return false }
            let c = connections[i]
            let db = c.gatt.isEmpty ? database : c.gatt
            return c.series.contains { s in
                s.kind == .indication && !s.sent && db.uuid(of: s.handle) == serviceChanged
            }
        }
    }
}
