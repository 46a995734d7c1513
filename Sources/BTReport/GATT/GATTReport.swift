import BTWire
import BTCapture
import BTDecode
import BTTrack

/// `btlens gatt`: the GATT tree per peer, as discovery revealed it, with what the app did with each
/// characteristic over all connections to that peer.
public enum GATTReport {
    /// One peer: the connections to it and the database of the latest that discovered (or inherited) one.
    public struct Peer {
        public var label: String
        public var address: BDAddr?
        /// Its links, in id order.
        public var links: [PeerLink]
        public var database: GATTDatabase
        public var usage: [UInt16: AttributeUsage]
        public var cccd: [UInt16: UInt16]
        /// The phone's own GATT server as this peer discovered it (the peer as client), kept apart.
        public var serverDatabase = GATTDatabase()
    }

    /// What the report says of each of a peer's links: where its database came from.
    public struct PeerLink: Sendable {
        public var id: Int
        public var hasDatabase: Bool
        public var origin: GATTOrigin
        public var inheritedFrom: Int?

        init(_ c: Connection) {
            id = c.id
            hasDatabase = !c.gatt.isEmpty
            origin = c.gatt.origin
            inheritedFrom = c.gatt.inheritedFrom
        }
    }

    public static func peers(_ model: CaptureModel) -> [Peer] {
        let peers = GATTPeers()
        for c in model.connections { peers.add(c) }
        return peers.list()
    }

    /// The peer a link's GATT belongs to: its address, or the link alone when it has none.
    static func peerKey(_ c: Connection) -> String { c.peerAddress?.description ?? "connection #\(c.id)" }

    /// A link with GATT traffic or a database: one of its peer's connections here.
    static func showsGATT(_ c: Connection) -> Bool {
        c.transport != .sco && (c.firstATT != nil || !c.gatt.isEmpty || !c.serverGATT.isEmpty)
    }

    /// "read 9×, notified 60×, subscribed (notify)".
    static func usageText(_ u: AttributeUsage?, cccdState: UInt16?) -> String {
        var parts: [String] = []
        if let u {
            if u.reads + u.readBlobs > 0 { parts.append("read \(u.reads)×" + (u.readBlobs > 0 ? " (+\(u.readBlobs) blob)" : "")) }
            if u.writeRequests > 0 { parts.append("written \(u.writeRequests)×") }
            if u.writeCommands > 0 { parts.append("written without response \(u.writeCommands)×") }
            if u.preparedWrites > 0 { parts.append("prepared writes \(u.preparedWrites)×") }
            if u.notifications > 0 { parts.append("notified \(u.notifications)×") }
            if u.indications > 0 { parts.append("indicated \(u.indications)×") }
            if u.errors > 0 { parts.append(Plural.of(u.errors, "error")) }
        }
        if let cccdState { parts.append(cccdState == 0 ? "unsubscribed" : "subscribed (\(cccdState & 2 != 0 ? "indicate" : "notify"))") }
        return parts.isEmpty ? "unused" : parts.joined(separator: ", ")
    }

    static func cccdState(of c: GATTCharacteristic, in peer: Peer) -> UInt16? {
        for d in peer.database.descriptors(of: c) where d.isCCCD { if let v = peer.cccd[d.handle] { return v } }
        return nil
    }

    /// Handles the app used that discovery did not reveal.
    static func otherHandles(_ peer: Peer) -> [UInt16] {
        peer.usage.keys.filter { h in
            peer.database.characteristic(valueHandle: h) == nil && peer.database.descriptor(h) == nil
        }.sorted()
    }

    // MARK: Text

    public static func text(file: String, model: CaptureModel) -> String { text(file: file, peers: peers(model)) }

    /// `text` of peers gathered as links were judged (`GATTPeers`).
    public static func text(file: String, peers list: [Peer]) -> String {
        var out: [String] = []
        write(file: file, peers: list) { out.append($0) }
        return out.joined(separator: "\n")
    }

    /// `text` a line at a time (each without its newline), a peer at a time (`btlens gatt`).
    public static func write(file: String, peers list: [Peer], line: (String) -> Void) {
        write(file: file, forEachPeer: { list.forEach($0) }, line: line)
    }

    /// `write`, the peers handed over one at a time by `forEachPeer` (`GATTLinkSpill.forEachPeer`): a capture of
    /// tens of thousands of peers is never held whole.
    public static func write(file: String, forEachPeer: ((Peer) -> Void) -> Void, line: (String) -> Void) {
        line(file)
        var any = false
        withoutActuallyEscaping(line) { line in
            forEachPeer { peer in
                any = true
                line("")
                peerLines(peer).forEach(line)
            }
        }
        if !any { line("  no GATT traffic in this capture") }
    }

    /// One peer's tree as `text` prints it (the HTML report shows it beside a connection's timeline).
    static func peerLines(_ peer: Peer) -> [String] {
        var out: [String] = []
        let ids = peer.links.map { c in
            guard let from = c.inheritedFrom else { return "#\(c.id)" }
            return "#\(c.id) (\(c.origin == .learnedLater ? "learned later" : "inherited") from #\(from))"
        }.joined(separator: ", ")
        var head = "Peer \(peer.label)  connections \(ids)"
        if let from = peer.database.inheritedFrom { head += "  (database cached from connection #\(from))" }
        if peer.database.isEmpty { head += "  (no discovery seen: handles only)" }
        out.append(head)
        for s in peer.database.services {
            out.append("  \(s.isPrimary ? "Service" : "Secondary service") \(s.name)  \(Hex.u16(s.startHandle))-\(Hex.u16(s.endHandle))")
            for c in peer.database.characteristics(of: s) {
                let u = peer.usage[c.valueHandle]
                out.append("    \(c.name)  value \(Hex.u16(c.valueHandle))  [\(c.properties)]  \(usageText(u, cccdState: cccdState(of: c, in: peer)))")
                if let v = u?.lastValue { out.append("      last value: " + CharacteristicValue.describe(v, uuid: c.uuid)) }
                for d in peer.database.descriptors(of: c) {
                    let name = d.isCCCD ? "Client Characteristic Configuration" : GATTNames.attribute(d.uuid)
                    let du = peer.usage[d.handle]
                    out.append("      \(name)  \(Hex.u16(d.handle))" + (du.map { "  " + usageText($0, cccdState: nil) } ?? ""))
                }
            }
        }
        let others = otherHandles(peer)
        if !others.isEmpty {
            out.append("  Handles used outside the discovered database:")
            for h in others {
                out.append("    \(Hex.u16(h))  \(usageText(peer.usage[h], cccdState: peer.cccd[h]))" +
                           (peer.usage[h]?.lastValue.map { "  last " + CharacteristicValue.generic($0) } ?? ""))
            }
        }
        if !peer.serverDatabase.isEmpty {
            // The peer as GATT client: the phone's own database, not the peer's.
            out.append("  The phone's own GATT server, as the peer discovered it:")
            for s in peer.serverDatabase.services {
                out.append("    \(s.isPrimary ? "Service" : "Secondary service") \(s.name)  \(Hex.u16(s.startHandle))-\(Hex.u16(s.endHandle))")
                for c in peer.serverDatabase.characteristics(of: s) {
                    out.append("      \(c.name)  value \(Hex.u16(c.valueHandle))  [\(c.properties)]")
                }
            }
        }
        return out
    }

    static func serverJSON(_ database: GATTDatabase) -> JSONValue {
        .array(database.services.map { s in
            .object([("start_handle", .string(Hex.u16(s.startHandle))), ("end_handle", .string(Hex.u16(s.endHandle))),
                     ("uuid", .string(s.uuid.description)), ("name", .string(s.name)), ("primary", .bool(s.isPrimary)),
                     ("characteristics", .array(database.characteristics(of: s).map { c in
                         .object([("value_handle", .string(Hex.u16(c.valueHandle))), ("uuid", .string(c.uuid.description)),
                                  ("name", .string(c.name)), ("properties", .array(c.properties.names.map { .string($0) }))])
                     }))])
        })
    }

    // MARK: JSON

    static func usageJSON(_ u: AttributeUsage?, cccdState: UInt16?) -> JSONValue {
        let u = u ?? AttributeUsage()
        return .object([
            ("reads", .int(u.reads)), ("read_blobs", .int(u.readBlobs)), ("write_requests", .int(u.writeRequests)),
            ("write_commands", .int(u.writeCommands)), ("prepared_writes", .int(u.preparedWrites)),
            ("notifications", .int(u.notifications)), ("indications", .int(u.indications)), ("errors", .int(u.errors)),
            ("subscribed", cccdState.map { .string($0 == 0 ? "off" : $0 & 2 != 0 ? "indicate" : "notify") } ?? .null),
        ])
    }

    static func valueJSON(_ v: [UInt8]?, uuid: BluetoothUUID?) -> JSONValue {
        guard let v else { return .null }
        return .object([("hex", .string(Hex.string(v))), ("decoded", .string(CharacteristicValue.describe(v, uuid: uuid)))])
    }

    public static func json(file: String, model: CaptureModel) -> JSONValue { json(file: file, peers: peers(model)) }

    /// `json` of peers gathered as links were judged (`GATTPeers`).
    public static func json(file: String, peers list: [Peer]) -> JSONValue {
        .object([("file", .string(file)), ("peers", .array(list.map(peerJSON)))])
    }

    /// The same object written a peer at a time at nesting `level` (`btlens gatt --json`).
    public static func writeJSON(file: String, peers list: [Peer], to writer: JSONStreamWriter, level: Int = 0) {
        writeJSON(file: file, forEachPeer: { list.forEach($0) }, to: writer, level: level)
    }

    /// `writeJSON`, the peers handed over one at a time by `forEachPeer`.
    public static func writeJSON(file: String, forEachPeer: ((Peer) -> Void) -> Void, to writer: JSONStreamWriter, level: Int = 0) {
        writer.object(level: level) { members in
            members.member("file", .string(file))
            members.elements("peers") { elements in
                forEachPeer { peer in
                    elements.next()
                    writer.value(peerJSON(peer), level: elements.level + 1)
                }
            }
        }
    }

    static func peerJSON(_ peer: Peer) -> JSONValue {
        .object([
            ("peer_address", peer.address.map { .string($0.description) } ?? .null),
            ("connections", .array(peer.links.map { .int($0.id) })),
            ("inherited_from", peer.database.inheritedFrom.map { .int($0) } ?? .null),
            ("database_origins", .array(peer.links.filter(\.hasDatabase).map { c in
                .object([("connection", .int(c.id)), ("origin", .string(c.origin.rawValue)),
                         ("from", c.inheritedFrom.map { .int($0) } ?? .null)])
            })),
            ("services", .array(peer.database.services.map { s in
                .object([
                    ("start_handle", .string(Hex.u16(s.startHandle))), ("end_handle", .string(Hex.u16(s.endHandle))),
                    ("uuid", .string(s.uuid.description)), ("name", s.uuid.name.map { .string($0) } ?? .null),
                    ("primary", .bool(s.isPrimary)),
                    ("characteristics", .array(peer.database.characteristics(of: s).map { c in
                        .object([
                            ("declaration_handle", .string(Hex.u16(c.declarationHandle))),
                            ("value_handle", .string(Hex.u16(c.valueHandle))),
                            ("uuid", .string(c.uuid.description)), ("name", c.uuid.attributeName.map { .string($0) } ?? .null),
                            ("properties", .array(c.properties.names.map { .string($0) })),
                            ("descriptors", .array(peer.database.descriptors(of: c).map { d in
                                .object([("handle", .string(Hex.u16(d.handle))), ("uuid", .string(d.uuid.description)),
                                         ("name", d.uuid.attributeName.map { .string($0) } ?? .null)])
                            })),
                            ("usage", usageJSON(peer.usage[c.valueHandle], cccdState: cccdState(of: c, in: peer))),
                            ("last_value", valueJSON(peer.usage[c.valueHandle]?.lastValue, uuid: c.uuid)),
                        ])
                    })),
                ])
            })),
            ("other_handles", .array(otherHandles(peer).map { h in
                .object([("handle", .string(Hex.u16(h))), ("usage", usageJSON(peer.usage[h], cccdState: peer.cccd[h])),
                         ("last_value", valueJSON(peer.usage[h]?.lastValue, uuid: nil))])
            })),
            ("phone_server", serverJSON(peer.serverDatabase)),
        ])
    }
}
