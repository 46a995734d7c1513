import BTWire
import BTCapture
import BTTrack

/// The GATT of links judged before the capture ended (`LinkRetirement`), set aside a link at a time as plain bytes
/// (`SpilledRecords`: a temporary file whose name is removed at once) and gathered into peers only when the report
/// is written, one peer at a time (`forEachPeer`): memory keeps 12 bytes per judged link that showed GATT, not a
/// database and a use of attributes per peer (`GATTPeers`, which `btlens gatt` keeps in memory). Each peer is the
/// one `GATTReport.peers` would make of the same links.
public final class GATTLinkSpill: @unchecked Sendable {
    /// A link's record: this header, then its database's parts, the phone's server database's, and its use of
    /// attributes.
    struct Header {
        var id: Int
        var address: BDAddr?
        var link: GATTReport.PeerLink
        var gatt: Parts
        var server: Parts
        var usage: Int32
    }

    /// How many of each part a database holds, and what else it says.
    struct Parts {
        var services: Int32
        var includes: Int32
        var characteristics: Int32
        var descriptors: Int32
        var cccdValues: Int32
        var typedValues: Int32
        var inheritedFrom: Int?
        var origin: GATTOrigin
        var gapsFilledFrom: Int?

        init(_ d: GATTDatabase) {
            services = Int32(d.services.count)
            includes = Int32(d.includes.count)
            characteristics = Int32(d.characteristics.count)
            descriptors = Int32(d.descriptors.count)
            cccdValues = Int32(d.cccdValues.count)
            typedValues = Int32(d.typedValues.count)
            inheritedFrom = d.inheritedFrom
            origin = d.origin
            gapsFilledFrom = d.gapsFilledFrom
        }
    }

    struct CCCDValue {
        var handle: UInt16
        var value: UInt16
    }

    struct TypedValue {
        var handle: UInt16
        var uuid: BluetoothUUID
    }

    struct Usage {
        var handle: UInt16
        var usage: AttributeUsage
    }

    /// Written on the link thread while the capture is read, read once it is finished.
    public let records: SpilledRecords

    /// `spillDirectory`: where the links' GATT is set aside; nil keeps it in memory.
    public init(spillDirectory: String?) {
        precondition(_isPOD(Header.self) && _isPOD(GATTService.self) && _isPOD(GATTInclude.self) && _isPOD(GATTCharacteristic.self)
                     && _isPOD(GATTDescriptor.self) && _isPOD(CCCDValue.self) && _isPOD(TypedValue.self) && _isPOD(Usage.self),
                     "set aside as bytes")
        records = SpilledRecords(directory: spillDirectory)
    }

    /// The links' GATT set aside among other records (`records`: made `sharing:` or `following:` another kind's).
    init(records: SpilledRecords) {
        precondition(_isPOD(Header.self), "set aside as bytes")
        self.records = records
    }

    /// Sets aside the GATT of a judged link, when it shows any (`GATTReport.showsGATT`).
    public func keep(_ c: Connection) {
        guard GATTReport.showsGATT(c) else { return }
        records.begin(id: c.id)
        let spill = records.spill
        spill.append(plain: Header(id: c.id, address: c.peerAddress, link: GATTReport.PeerLink(c), gatt: Parts(c.gatt),
                                   server: Parts(c.serverGATT), usage: Int32(c.usage.count)))
        func append(_ d: GATTDatabase) {
            spill.append(plain: d.services)
            spill.append(plain: d.includes)
            spill.append(plain: d.characteristics)
            spill.append(plain: d.descriptors)
            spill.append(plain: d.cccdValues.map { CCCDValue(handle: $0.key, value: $0.value) })
            spill.append(plain: d.typedValues.map { TypedValue(handle: $0.key, uuid: $0.value) })
        }
        append(c.gatt)
        append(c.serverGATT)
        spill.append(plain: c.usage.map { Usage(handle: $0.key, usage: $0.value) })
    }

    /// The peer a link belongs to (`GATTReport.peerKey`) as a number: its address, or the link alone.
    static func peer(address: BDAddr?, id: Int) -> UInt64 {
        address.map(\.rawValue) ?? (1 << 63 | UInt64(truncatingIfNeeded: id))
    }

    /// Adds the link of the `i`th record (in the order written) to `peers`.
    private func add(record i: Int, to peers: GATTPeers) {
        var cursor = records.spill.cursor(at: records.offset(at: i))
        let header = cursor.next(Header.self)
        func read<T>(_ type: T.Type, _ count: Int32) -> [T] { cursor.next(type, count: Int(count)) }
        func database(_ p: Parts) -> GATTDatabase {
            let services = read(GATTService.self, p.services), includes = read(GATTInclude.self, p.includes)
            let characteristics = read(GATTCharacteristic.self, p.characteristics), descriptors = read(GATTDescriptor.self, p.descriptors)
            let cccd = read(CCCDValue.self, p.cccdValues), typed = read(TypedValue.self, p.typedValues)
            return GATTDatabase(services: services, includes: includes, characteristics: characteristics, descriptors: descriptors,
                                cccdValues: Dictionary(cccd.map { ($0.handle, $0.value) }, uniquingKeysWith: { a, _ in a }),
                                typedValues: Dictionary(typed.map { ($0.handle, $0.uuid) }, uniquingKeysWith: { a, _ in a }),
                                inheritedFrom: p.inheritedFrom, origin: p.origin, gapsFilledFrom: p.gapsFilledFrom)
        }
        let gatt = database(header.gatt)
        let server = database(header.server)
        let usage = read(Usage.self, header.usage).lazy.map { (key: $0.handle, value: $0.usage) }
        peers.add(id: header.id, key: header.address?.description ?? "connection #\(header.id)", address: header.address,
                  link: header.link, gatt: gatt, usage: usage, server: server)
    }

    /// The peers of the links set aside and of `others` (the model's links not judged early), in the order
    /// `GATTReport.peers` gives them, each made when it is handed to `body` and let go after.
    ///
    /// Each link is 8 bytes while the peers are gathered, sorted in runs set aside in `directory` (nil: in memory):
    /// its place among all the links in id order, and beside it first a hash of its peer (links sorted by it fall
    /// together with their peer's, and a rare collision is told apart by the peers themselves), then its peer's
    /// first place (sorted again, each peer's links are together, the peers in the order of their first link).
    public func forEachPeer(others: [Connection], sortingIn directory: String? = nil, runLength: Int = GATTLinkSpill.runLength,
                            _ body: (GATTReport.Peer) -> Void) {
        records.sortByID()
        var others = others.filter(GATTReport.showsGATT)
        if zip(others, others.dropFirst()).contains(where: { $0.id > $1.id }) { others.sort { $0.id < $1.id } }
        let spill = records.spill
        func recordPeer(_ k: Int) -> UInt64 {
            let header = spill.read(plain: Header.self, at: records.offset(at: k))
            return Self.peer(address: header.address, id: header.id)
        }
        // Places in id order: the records' and the others' merged.
        var order = MergedOrder()
        var byHash = SortedRuns<UInt64>(directory: directory, runLength: runLength)
        var k = 0, j = 0
        while k < records.count || j < others.count {
            let place = UInt64(order.count)
            let peer: UInt64
            if j < others.count && (k == records.count || others[j].id < Int(records.ids[k])) {
                peer = Self.peer(address: others[j].peerAddress, id: others[j].id)
                order.appendSecond()
                j += 1
            } else {
                peer = recordPeer(k)
                order.appendFirst()
                k += 1
            }
            byHash.append(UInt64(Self.hash(peer)) << 32 | place) { (<) }
        }
        func peer(at place: UInt64) -> UInt64 {
            switch order[Int(place)] {
            case .first(let k): return recordPeer(k)
            case .second(let j): return Self.peer(address: others[j].peerAddress, id: others[j].id)
            }
        }
        // Each link's hash becomes its peer's first place: the places of one hash, in order, at a time.
        var byPeer = SortedRuns<UInt64>(directory: directory, runLength: runLength)
        var hash: UInt64?
        var places: [UInt64] = []
        func placeByPeer() {
            if places.count == 1 {
                byPeer.append(places[0] << 32 | places[0]) { (<) }
            } else {
                var first: [UInt64: UInt64] = [:]  // a peer's first place, for the peers of one hash
                for place in places {
                    let p = peer(at: place)
                    let f = first[p] ?? place
                    first[p] = f
                    byPeer.append(f << 32 | place) { (<) }
                }
            }
            places.removeAll(keepingCapacity: true)
        }
        byHash.drain(by: <) { link in
            if link >> 32 != hash {
                placeByPeer()
                hash = link >> 32
            }
            places.append(link & 0xFFFF_FFFF)
        }
        placeByPeer()
        var current: UInt64?
        var gathering = GATTPeers()
        func hand() {
            if current != nil { for peer in gathering.list() { body(peer) } }
        }
        byPeer.drain(by: <) { link in
            if link >> 32 != current {
                hand()
                current = link >> 32
                gathering = GATTPeers()
            }
            switch order[Int(link & 0xFFFF_FFFF)] {
            case .first(let k): add(record: k, to: gathering)
            case .second(let j): gathering.add(others[j])
            }
        }
        hand()
    }

    /// Links sorted in memory at once while the peers are gathered (8 bytes each), unless told otherwise.
    public static let runLength = 1 << 13

    /// A peer's number spread over 32 bits (`forEachPeer` sorts links by it).
    static func hash(_ peer: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: (peer &* 0x9E37_79B9_7F4A_7C15) >> 32) }
}
