import BTWire
import BTCapture
import BTTrack

/// `btlens gatt`'s peers gathered a link at a time, in any order, as links are judged and let go
/// (`LinkRetirement`): each peer keeps its chosen database, its merged use of attributes and its links' ids, not
/// its links. Each choice `GATTReport.peers` makes walking the links in id order is made here by id instead:
/// the database is the latest link's own discovery, else the first link's inherited one; a last value, a CCCD
/// value and the phone's server database are the latest link's that has one.
public final class GATTPeers: @unchecked Sendable {
    /// A class: the gathering's dictionary then holds a reference per peer, not three databases inline in
    /// storage twice the size of the peers.
    final class State {
        var label: String
        var address: BDAddr?
        var links: [GATTReport.PeerLink] = []
        /// The latest link with a database of its own discovery, and the first with any.
        var own: (id: Int, database: GATTDatabase)?
        var first: (id: Int, database: GATTDatabase)?
        var usage: [UInt16: (usage: AttributeUsage, valueLink: Int)] = [:]
        var cccd: [UInt16: (value: UInt16, link: Int)] = [:]
        var server: (id: Int, database: GATTDatabase)?

        init(label: String, address: BDAddr?) {
            self.label = label
            self.address = address
        }
    }

    private var peers: [String: State] = [:]

    public init() {}

    /// Adds a link's GATT: one judged early, or one of the model's at the end.
    public func add(_ c: Connection) {
        guard GATTReport.showsGATT(c) else { return }
        add(id: c.id, key: GATTReport.peerKey(c), address: c.peerAddress, link: GATTReport.PeerLink(c), gatt: c.gatt,
            usage: c.usage, server: c.serverGATT)
    }

    /// Adds the GATT of link `id` (one that shows GATT, `GATTReport.showsGATT`) to the peer of `key`: its database
    /// (`gatt`), its use of attributes and the phone's server database as the peer discovered it.
    func add<Usage: Sequence>(id: Int, key: String, address: BDAddr?, link: GATTReport.PeerLink, gatt: GATTDatabase,
                              usage: Usage, server: GATTDatabase) where Usage.Element == (key: UInt16, value: AttributeUsage) {
        let s: State
        if let known = peers[key] {
            s = known
        } else {
            s = State(label: key, address: address)
            peers[key] = s
        }
        s.links.append(link)
        if !gatt.isEmpty {
            if gatt.inheritedFrom == nil, (s.own?.id ?? .min) < id { s.own = (id, gatt) }
            if (s.first?.id ?? .max) > id { s.first = (id, gatt) }
        }
        for (handle, u) in usage {
            guard var merged = s.usage[handle] else {
                s.usage[handle] = (u, u.lastValue == nil ? .min : id)
                continue
            }
            // Counts add up; the last value is the latest link's that has one.
            let earlier = merged.usage
            merged.usage.add(u)
            if u.lastValue != nil && id > merged.valueLink {
                merged.valueLink = id
            } else {
                merged.usage.keepLastValue(of: earlier)
            }
            s.usage[handle] = merged
        }
        for (handle, v) in gatt.cccdValues where (s.cccd[handle]?.link ?? .min) < id { s.cccd[handle] = (v, id) }
        if !server.isEmpty, (s.server?.id ?? .min) < id { s.server = (id, server) }
    }

    /// The peers, in the order of their first link, as `GATTReport.peers` gives them. Each peer's state is let go
    /// as its report form is made: the two are not held whole at once. Empties the gathering.
    public func list() -> [GATTReport.Peer] {
        let order = peers.map { (first: $0.value.links.lazy.map(\.id).min() ?? 0, key: $0.key) }.sorted { $0.first < $1.first }
        var out: [GATTReport.Peer] = []
        out.reserveCapacity(order.count)
        for (_, key) in order {
            guard let s = peers.removeValue(forKey: key) else { continue }
            var peer = GATTReport.Peer(label: s.label, address: s.address, links: s.links.sorted { $0.id < $1.id },
                                       database: s.own?.database ?? s.first?.database ?? GATTDatabase(),
                                       usage: s.usage.mapValues(\.usage), cccd: s.cccd.mapValues(\.value))
            peer.serverDatabase = s.server?.database ?? GATTDatabase()
            out.append(peer)
        }
        return out
    }
}
